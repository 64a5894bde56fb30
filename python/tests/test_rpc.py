"""Requests, responses and replies between two simulated cards."""

from __future__ import annotations

import os

import pytest

import homa_nic

TIMEOUT_S = 30.0


def echo_once(client: homa_nic.Endpoint, server: homa_nic.Endpoint, payload: bytes) -> bytes:
    rpc = client.send_request(server.address, payload)
    request = server.recv_request(timeout=TIMEOUT_S)
    server.reply(request.id, request.message)
    return bytes(client.recv_response(rpc, timeout=TIMEOUT_S).message)


def test_send_receive_reply_with_homa_ids_and_peers(pair):
    client, server = pair
    rpc = client.send_request(server.address, b"ping")
    assert rpc % 2 == 0, "a client's ids are even"
    assert client.outstanding == 1
    request = server.recv_request(timeout=TIMEOUT_S)
    assert request.id == rpc + 1, "the server knows the RPC by the id with bit 0 set"
    assert request.peer == client.address
    assert request.peer.port == 1000 and request.peer.ip == "10.0.0.1"
    assert bytes(request.message) == b"ping" and len(request.message) == 4
    server.reply(request.id, b"pong")
    response = client.recv_response(rpc, timeout=TIMEOUT_S)
    assert response.id == rpc
    assert response.peer == server.address
    assert bytes(response.message) == b"pong"
    assert client.outstanding == 0


def test_many_rpcs_and_recv_any_response(pair):
    client, server = pair
    sent = {client.send_request(server.address, bytes([i]) * (i * 100 + 1)): i for i in range(10)}
    for _ in range(10):
        request = server.recv_request(timeout=TIMEOUT_S)
        server.reply(request.id, memoryview(request.message))
        request.message.release()
    seen = set()
    for _ in range(10):
        response = client.recv_any_response(timeout=TIMEOUT_S)
        i = sent[response.id]
        assert bytes(response.message) == bytes([i]) * (i * 100 + 1)
        seen.add(response.id)
    assert seen == set(sent)


def test_the_largest_message_host_lib_accepts_round_trips(pair):
    client, server = pair
    # host-lib's limit (40,000 bytes today; 1,000,000 when the scheduling
    # issue lands): the test follows the constant.
    payload = os.urandom(homa_nic.MAX_MESSAGE_BYTES)
    assert echo_once(client, server, payload) == payload


def test_send_takes_any_bytes_like_object(pair):
    client, server = pair
    for data in (b"abc", bytearray(b"abc"), memoryview(b"xabcx")[1:4]):
        assert echo_once(client, server, data) == b"abc"


def test_try_calls_return_none_when_nothing_has_arrived(pair):
    client, server = pair
    assert server.try_recv_request() is None
    rpc = client.send_request(server.address, b"x")
    assert client.try_recv_response(rpc) is None
    request = server.recv_request(timeout=TIMEOUT_S)
    server.reply(request.id, b"ok")
    client.recv_response(rpc, timeout=TIMEOUT_S)
