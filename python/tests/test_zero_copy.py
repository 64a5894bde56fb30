"""Received messages through the buffer protocol: the view is the message's
bytes, stays valid while held, and holds the bpage until released."""

from __future__ import annotations

import gc
import time

import pytest

import homa_nic


def bpages_free_settled(endpoint: homa_nic.Endpoint, network: homa_nic.Network) -> int:
    """The card's count after it has had time to take back a given bpage."""
    start = network.cycle
    # A few hundred cycles let a bpage push reach the card. wait_request lets
    # the network run (and takes nothing); no request is pending here.
    while network.cycle < start + 500:
        assert not endpoint.wait_request(0.002)
    return endpoint.bpages_free()


def test_a_view_keeps_its_bpage_and_stays_valid_while_held(cards):
    network, client_card, server_card = cards
    client = homa_nic.Endpoint(client_card, 1000)
    server = homa_nic.Endpoint(server_card, 99, bpages=2)
    assert bpages_free_settled(server, network) == 2

    rpc = client.send_request(server.address, b"A" * 3000)
    request = server.recv_request(timeout=30)
    # Every request is answered: a client closing with a call outstanding
    # waits for the card to let go of it (seconds in a debug build).
    server.reply(request.id, b"ok")
    client.recv_response(rpc, timeout=30)
    view = memoryview(request.message)
    assert view.readonly and view.nbytes == 3000 and view.format == "B"
    with pytest.raises(BufferError):
        request.message.release()  # a view is held
    del request
    gc.collect()
    # The Request and the Message objects are gone from Python's names, but
    # the view holds the message: its bpage is not given back.
    assert bpages_free_settled(server, network) == 1
    assert view.obj is not None and len(view.obj) == 3000

    # More traffic through the endpoint's only other bpage, message by message.
    for fill in (b"B", b"C", b"D"):
        rpc = client.send_request(server.address, fill * 3000)
        other = server.recv_request(timeout=30)
        server.reply(other.id, b"ok")
        client.recv_response(rpc, timeout=30)
        assert bytes(other.message) == fill * 3000
        assert other.message.bpage != view.obj.bpage, "the held bpage is not reused"
        other.message.release()
    assert bytes(view) == b"A" * 3000, "the held view still reads its message"

    view.release()
    gc.collect()
    assert bpages_free_settled(server, network) == 2, "released with its last view"
    client.close()
    server.close()


def test_release_gives_the_bpage_back_and_ends_access(cards):
    network, client_card, server_card = cards
    client = homa_nic.Endpoint(client_card, 1000)
    server = homa_nic.Endpoint(server_card, 99, bpages=2)
    rpc = client.send_request(server.address, b"hello")
    request = server.recv_request(timeout=30)
    server.reply(request.id, b"ok")
    client.recv_response(rpc, timeout=30)
    with request.message as message:
        assert message.live and bytes(message) == b"hello"
        assert bpages_free_settled(server, network) == 1
    assert not message.live
    assert bpages_free_settled(server, network) == 2
    with pytest.raises(ValueError, match="released"):
        memoryview(message)
    with pytest.raises(ValueError, match="released"):
        bytes(message)


def test_views_are_read_only_and_zero_copy_is_reported(pair):
    client, server = pair
    rpc = client.send_request(server.address, b"xyz")
    request = server.recv_request(timeout=30)
    server.reply(request.id, b"ok")
    client.recv_response(rpc, timeout=30)
    message = request.message
    view = memoryview(message)
    with pytest.raises(TypeError):
        view[0] = 0
    # A simulated card's memory lives in the simulation: views read a copy
    # taken once at arrival. On a real card they point into the bpage.
    assert message.zero_copy is False
    assert memoryview(message).tobytes() == b"xyz" and message.tobytes() == b"xyz"
    view.release()


def test_a_message_can_be_replied_without_copying_it_into_bytes(pair):
    client, server = pair
    rpc = client.send_request(server.address, b"q" * 20000)
    request = server.recv_request(timeout=30)
    server.reply(request.id, request.message)  # the buffer protocol, no bytes() first
    assert bytes(client.recv_response(rpc, timeout=30).message) == b"q" * 20000
