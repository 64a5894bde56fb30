"""Fixtures: two simulated cards on one network, a server and a client endpoint."""

from __future__ import annotations

import pytest

import homa_nic


@pytest.fixture
def cards(request: pytest.FixtureRequest) -> tuple[homa_nic.Network, homa_nic.Nic, homa_nic.Nic]:
    # A fresh network per test: no state shared between tests.
    network = homa_nic.Network(cards=2, name=f"py-{request.node.name}")
    return network, network.open(0), network.open(1)


@pytest.fixture
def pair(cards) -> tuple[homa_nic.Endpoint, homa_nic.Endpoint]:
    """(client on card 0 port 1000, server on card 1 port 99)."""
    _, client_card, server_card = cards
    client = homa_nic.Endpoint(client_card, 1000)
    server = homa_nic.Endpoint(server_card, 99)
    yield client, server
    client.close()
    server.close()
