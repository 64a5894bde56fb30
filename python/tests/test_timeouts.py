"""Blocking calls take a timeout and release the GIL while they wait."""

from __future__ import annotations

import threading
import time

import pytest

import homa_nic


def test_recv_request_times_out(pair):
    _, server = pair
    start = time.monotonic()
    with pytest.raises(homa_nic.Timeout) as e:
        server.recv_request(timeout=0.3)
    waited = time.monotonic() - start
    assert 0.3 <= waited < 2.0, waited
    assert e.value.timeout == 0.3
    assert isinstance(e.value, TimeoutError), "catchable as the builtin"


def test_recv_response_times_out_while_the_server_keeps_the_request(pair):
    client, server = pair
    rpc = client.send_request(server.address, b"never answered")
    with pytest.raises(homa_nic.Timeout):
        client.recv_response(rpc, timeout=0.2)
    assert client.outstanding == 1, "the RPC is still outstanding after a timeout"
    request = server.recv_request(timeout=10)
    server.reply(request.id, b"late")
    assert bytes(client.recv_response(rpc, timeout=10).message) == b"late"


def test_timeout_zero_is_one_try(pair):
    _, server = pair
    start = time.monotonic()
    with pytest.raises(homa_nic.Timeout):
        server.recv_request(timeout=0)
    assert time.monotonic() - start < 0.5


def counted(seconds: float, block) -> int:
    """How far a pure-Python counting thread gets while `block` runs."""
    count = 0
    stop = False

    def spin():
        nonlocal count
        while not stop:
            count += 1

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        block(seconds)
    finally:
        stop = True
        thread.join()
    return count


def test_a_blocking_call_releases_the_gil(pair):
    _, server = pair

    def wait(seconds):
        with pytest.raises(homa_nic.Timeout):
            server.recv_request(timeout=seconds)

    baseline = counted(0.5, time.sleep)
    during = counted(0.5, wait)
    # Holding the GIL for the wait would leave the counter near zero; with it
    # released the counter runs about as far as beside time.sleep (less the
    # cores the simulation takes).
    assert during > baseline * 0.2, (during, baseline)


def test_a_server_thread_echoes_while_the_client_blocks(pair):
    client, server = pair
    done = threading.Event()

    def serve():
        while not done.is_set():
            try:
                request = server.recv_request(timeout=0.1)
            except homa_nic.Timeout:
                continue
            server.reply(request.id, request.message)

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        for i in range(5):
            payload = f"request {i}".encode()
            rpc = client.send_request(server.address, payload)
            assert bytes(client.recv_response(rpc, timeout=30).message) == payload
    finally:
        done.set()
        thread.join()
