"""The asyncio forms of receive."""

from __future__ import annotations

import asyncio

import pytest

import homa_nic


def test_an_echo_in_asyncio(pair):
    client, server = pair

    async def serve(count):
        for _ in range(count):
            request = await server.recv_request_async(timeout=30)
            server.reply(request.id, request.message)

    async def call(i):
        rpc = client.send_request(server.address, f"async {i}".encode())
        response = await client.recv_response_async(rpc, timeout=30)
        return bytes(response.message)

    async def main():
        server_task = asyncio.create_task(serve(4))
        answers = await asyncio.gather(*(call(i) for i in range(4)))
        await server_task
        return answers

    assert asyncio.run(main()) == [f"async {i}".encode() for i in range(4)]


def test_recv_any_response_async(pair):
    client, server = pair

    async def main():
        rpc = client.send_request(server.address, b"any")
        request = await server.recv_request_async(timeout=30)
        server.reply(request.id, b"reply")
        response = await client.recv_any_response_async(timeout=30)
        return rpc, response

    rpc, response = asyncio.run(main())
    assert response.id == rpc and bytes(response.message) == b"reply"


def test_an_async_receive_times_out(pair):
    _, server = pair
    with pytest.raises(homa_nic.Timeout):
        asyncio.run(server.recv_request_async(timeout=0.2))


def test_a_cancelled_receive_loses_no_message(pair):
    client, server = pair

    async def main():
        task = asyncio.create_task(server.recv_request_async())
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    rpc = client.send_request(server.address, b"after the cancel")
    request = server.recv_request(timeout=30)
    assert bytes(request.message) == b"after the cancel"
    server.reply(request.id, b"ok")
    client.recv_response(rpc, timeout=30)
