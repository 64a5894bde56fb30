"""Exceptions of homa_nic: one class per error of the host library
(``homa_host::Error``), all under :class:`HomaError`. The native module
raises them with the error's fields as attributes."""

from __future__ import annotations


class HomaError(Exception):
    """Anything a Homa NIC call can fail at."""


class MessageTooLong(HomaError, ValueError):
    """The message is longer than the card sends (``length``, ``max``)."""

    length: int
    max: int


class EmptyMessage(HomaError, ValueError):
    """Homa messages have at least one byte."""


class RingFull(HomaError):
    """Every TX slot (``slots`` of them) holds a message the card has not
    finished sending: receive, or wait, and try again."""

    slots: int


class NoSuchRpc(HomaError, LookupError):
    """The id (``id``) is not an outstanding request of this endpoint, or not
    a request it received and has not replied to (id 0: no request is
    outstanding at all)."""

    id: int


class SendFailed(HomaError):
    """The card could not send request ``id`` (``status`` says why)."""

    id: int
    status: str


class RpcTimedOut(HomaError, TimeoutError):
    """Request ``id``'s peer went silent: no response (or no grant) came for
    timeout_ticks ticks, the card's (HomaModule's ETIMEDOUT)."""

    id: int


class CardReset(HomaError):
    """The card was reset since the endpoint was opened: the endpoint and its
    RPCs are gone; open a new one."""


class ResetStuck(HomaError):
    """The card did not finish a reset."""


class PortInUse(HomaError):
    """Another endpoint of the card already has the port (``port``)."""

    port: int


class BadPort(HomaError, ValueError):
    """Port 0 is not a Homa port."""


class NoFreeEndpoint(HomaError):
    """All the card's endpoint blocks (``count``) are in use."""

    count: int


class BufferTooSmall(HomaError, ValueError):
    """A buffer smaller than the message (``length``, ``capacity``)."""

    length: int
    capacity: int


class DeviceError(HomaError, OSError):
    """The driver failed: a register access, DMA memory, VFIO."""


class ConfigError(HomaError, ValueError):
    """A homa.conf that cannot be used, or that the card refused.

    ``origin`` is the file; ``problems`` a list of ``(key, line, message,
    allowed)`` tuples, line and allowed possibly None."""

    origin: str
    problems: list[tuple[str, int | None, str, str | None]]


class Timeout(HomaError, TimeoutError):
    """Nothing arrived within the call's ``timeout`` (seconds)."""

    timeout: float
