"""homa_nic: Python binding of the Homa NIC's host library.

A card (simulated, or real through VFIO), endpoints on Homa ports,
requests, responses and replies with HomaModule's semantics; received
messages are :class:`Message` objects exporting their bytes through the
buffer protocol (``memoryview(message)``). Blocking calls release the GIL
and take a ``timeout`` in seconds; :class:`Endpoint` adds asyncio forms of
the receive calls.

Not to be confused with ``pyhoma`` on PyPI (an unrelated, deprecated client
for Somfy TaHoma home automation): this package is ``homa-nic``.

Example (two simulated cards)::

    import homa_nic
    net = homa_nic.Network(cards=2)
    client_card, server_card = net.open(0), net.open(1)
    server = homa_nic.Endpoint(server_card, 99)
    client = homa_nic.Endpoint(client_card, 1000)
    rpc = client.send_request(server.address, b"ping")
    request = server.recv_request(timeout=10)
    server.reply(request.id, memoryview(request.message))
    assert bytes(client.recv_response(rpc, timeout=10).message) == b"ping"
"""

from __future__ import annotations

import asyncio
import time

from . import _native
from ._errors import (
    BadPort,
    BufferTooSmall,
    CardReset,
    ConfigError,
    DeviceError,
    EmptyMessage,
    HomaError,
    MessageTooLong,
    NoFreeEndpoint,
    NoSuchRpc,
    PortInUse,
    ResetStuck,
    RingFull,
    RpcTimedOut,
    SendFailed,
    Timeout,
)
from ._native import (
    BPAGE_BYTES,
    MAX_MESSAGE_BYTES,
    Message,
    Network,
    Nic,
    Peer,
    Request,
    Response,
    check_config,
    example_config,
)

__all__ = [
    "BPAGE_BYTES",
    "MAX_MESSAGE_BYTES",
    "BadPort",
    "BufferTooSmall",
    "ConfigError",
    "DeviceError",
    "EmptyMessage",
    "Endpoint",
    "HomaError",
    "Message",
    "MessageTooLong",
    "Network",
    "Nic",
    "NoFreeEndpoint",
    "NoSuchRpc",
    "Peer",
    "PortInUse",
    "CardReset",
    "ResetStuck",
    "Request",
    "Response",
    "RingFull",
    "SendFailed",
    "Timeout",
    "RpcTimedOut",
    "check_config",
    "example_config",
]

# How long one waiting step of an asyncio receive runs in its worker thread:
# the most a cancelled task's thread lingers.
_ASYNC_STEP_S = 0.05


class Endpoint(_native.Endpoint):
    """An open Homa port on a card: ``Endpoint(nic, port, bpages=None)``.

    Adds asyncio forms of the receive calls. They wait in a worker thread
    for something to be ready (taking nothing) and take it on the event
    loop's thread, so cancelling the task loses no message.
    """

    async def _ready(self, wait, timeout: float | None) -> None:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = _ASYNC_STEP_S
            if deadline is not None:
                step = max(0.0, min(step, deadline - time.monotonic()))
            if await loop.run_in_executor(None, wait, step):
                return
            if deadline is not None and time.monotonic() >= deadline:
                error = Timeout(f"nothing within {timeout} s")
                error.timeout = timeout
                raise error

    async def recv_request_async(self, timeout: float | None = None) -> Request:
        """The next request, awaited (``timeout`` seconds, None: for ever)."""
        while True:
            await self._ready(lambda t: self.wait_request(t), timeout)
            request = self.try_recv_request()
            if request is not None:
                return request

    async def recv_response_async(self, id: int, timeout: float | None = None) -> Response:
        """The response to request ``id``, awaited."""
        while True:
            await self._ready(lambda t: self.wait_response(id, t), timeout)
            response = self.try_recv_response(id)
            if response is not None:
                return response

    async def recv_any_response_async(self, timeout: float | None = None) -> Response:
        """The first response of any outstanding request, awaited."""
        while True:
            await self._ready(lambda t: self.wait_response(None, t), timeout)
            response = self.try_recv_any_response()
            if response is not None:
                return response

    def try_recv_any_response(self) -> Response | None:
        """The first response of any outstanding request if one has arrived."""
        try:
            return self.recv_any_response(timeout=0)
        except Timeout:
            return None
