"""host-lib's typed errors arrive as Python exceptions with their fields."""

from __future__ import annotations

import pytest

import homa_nic


def test_a_message_over_the_limit_is_message_too_long(pair):
    client, server = pair
    with pytest.raises(homa_nic.MessageTooLong) as e:
        client.send_request(server.address, bytes(homa_nic.MAX_MESSAGE_BYTES + 1))
    assert e.value.length == homa_nic.MAX_MESSAGE_BYTES + 1
    assert e.value.max == homa_nic.MAX_MESSAGE_BYTES
    assert isinstance(e.value, ValueError) and isinstance(e.value, homa_nic.HomaError)
    assert client.outstanding == 0, "nothing was sent"


def test_empty_message(pair):
    client, server = pair
    with pytest.raises(homa_nic.EmptyMessage):
        client.send_request(server.address, b"")


def test_unknown_rpc_ids_are_no_such_rpc(pair):
    client, server = pair
    with pytest.raises(homa_nic.NoSuchRpc) as e:
        server.reply(7, b"x")
    assert e.value.id == 7
    with pytest.raises(homa_nic.NoSuchRpc):
        client.recv_response(42, timeout=1)
    with pytest.raises(homa_nic.NoSuchRpc) as e:
        client.recv_any_response(timeout=1)
    assert e.value.id == 0, "no request outstanding"


def test_ports_port_zero_and_endpoint_count(cards):
    _, card, _ = cards
    first = homa_nic.Endpoint(card, 5)
    with pytest.raises(homa_nic.PortInUse) as e:
        homa_nic.Endpoint(card, 5)
    assert e.value.port == 5
    with pytest.raises(homa_nic.BadPort):
        homa_nic.Endpoint(card, 0)
    others = [homa_nic.Endpoint(card, p) for p in (6, 7, 8)]
    with pytest.raises(homa_nic.NoFreeEndpoint) as e:
        homa_nic.Endpoint(card, 9)
    assert e.value.count == 4
    first.close()
    homa_nic.Endpoint(card, 9).close()  # a closed endpoint's block is free again
    for o in others:
        o.close()


def test_a_closed_endpoint_refuses_calls(pair):
    client, server = pair
    client.close()
    assert client.closed
    with pytest.raises(ValueError, match="closed"):
        client.send_request(server.address, b"x")


def test_bad_arguments_are_value_errors(cards, pair):
    client, server = pair
    with pytest.raises(ValueError):
        homa_nic.Peer("10.0.0.300", "02:00:00:00:00:01", 1)
    with pytest.raises(ValueError):
        homa_nic.Peer("10.0.0.1", "02:00:00:00:01", 1)
    with pytest.raises(ValueError):
        server.recv_request(timeout=-1)
    with pytest.raises(ValueError):
        homa_nic.Endpoint(cards[1], 5, bpages=1025)


def test_a_card_reset_makes_the_old_endpoints_raise_card_reset(cards):
    _, client_card, server_card = cards
    client = homa_nic.Endpoint(client_card, 1000)
    server = homa_nic.Endpoint(server_card, 99)
    server_card.reset()
    with pytest.raises(homa_nic.CardReset):
        server.recv_request(timeout=1)
    server = homa_nic.Endpoint(server_card, 99)
    rpc = client.send_request(server.address, b"after")
    request = server.recv_request(timeout=10)
    server.reply(request.id, bytes(request.message))
    assert bytes(client.recv_response(rpc, timeout=10).message) == b"after"
