"""The live event stream (``GET /v1/stream``, WebSocket) with resume.

The protocol is in the repository's ``docs/`` and the server's README: control frames
(``subscribed``, ``heartbeat``, ``pong``, ``error``) are handled here and never reach the caller;
events carry an ``id`` and are resumed with ``since=<last id>`` after any drop, so a consumer
sees every event exactly once, in order, across reconnects and server restarts.
"""
from __future__ import annotations

import asyncio
import base64
import importlib
import json
import os
import random
from typing import Any, AsyncIterator, Callable, Dict, Iterator, Mapping, Optional, Protocol, Sequence, Tuple, Type, Union, cast
from types import TracebackType

import httpx
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from ._base import DEFAULT_HEARTBEAT_TIMEOUT, csv, stream_url
from ._errors import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    PermissionDeniedError,
    RateLimitError,
    SchemaMismatchError,
    error_for_status,
)
from ._version import __version__
from .types import EVENT_SCHEMA, StreamEvent

__all__ = ["Stream", "AsyncStream"]

CONTROL_FRAMES = frozenset({"subscribed", "heartbeat", "pong", "error"})

# Close codes that end the stream with an error instead of a resume: the same request would be
# refused again, so retrying would only loop.
_FATAL_CLOSE_CODES: Mapping[int, Tuple[Type[APIError], int]] = {
    4029: (RateLimitError, 429),  # over the plan's stream connections
    4401: (AuthenticationError, 401),  # key revoked while connected
}
# The key's request budget ran out during a resume replay: wait `retry_after`, then resume.
_RATE_LIMITED_CLOSE = 4429
# Handshake refusals that a retry cannot fix.
_FATAL_HANDSHAKE = frozenset({400, 401, 403, 404, 429})

_RECONNECT_INITIAL = 0.25
_RECONNECT_MAX = 5.0


class _Connection(Protocol):
    async def recv(self) -> Union[str, bytes]: ...

    async def close(self, code: int = 1000, reason: str = "") -> None: ...


def _connector() -> Tuple[Callable[..., Any], str]:
    """websockets' asyncio ``connect`` and the name of its extra-headers argument, which
    changed between the legacy client (websockets < 13) and the new one."""
    try:
        module = importlib.import_module("websockets.asyncio.client")
        return getattr(module, "connect"), "additional_headers"
    except ImportError:
        module = importlib.import_module("websockets.legacy.client")
        return getattr(module, "connect"), "extra_headers"


def _close_code(exc: ConnectionClosed) -> Optional[int]:
    received = exc.rcvd
    return received.code if received is not None else None


def _event_seq(event_id: str) -> Optional[int]:
    digits = event_id[4:] if event_id.startswith("evt_") else ""
    return int(digits) if digits.isdigit() else None


def _is_later(event_id: str, last_id: Optional[str]) -> bool:
    if last_id is None:
        return True
    a, b = _event_seq(event_id), _event_seq(last_id)
    if a is not None and b is not None:
        return a > b
    return event_id > last_id


class _StreamCore:
    """One logical subscription over any number of WebSocket connections."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        extra_headers: Mapping[str, str],
        params: Mapping[str, Optional[str]],
        since: Optional[str],
        heartbeat_timeout: float,
        max_reconnects: Optional[int],
        open_timeout: float,
    ) -> None:
        self._base_url = base_url
        self._api_key = api_key
        self._extra_headers = dict(extra_headers)
        self._params = dict(params)
        self.last_id = since
        self.recovered: Optional[bool] = None
        self.connections = 0
        self._heartbeat_timeout = heartbeat_timeout
        self._max_reconnects = max_reconnects
        self._open_timeout = open_timeout
        self._ws: Optional[_Connection] = None
        self._failures = 0
        self._retry_after: Optional[float] = None
        self._closed = False

    def url(self) -> str:
        return stream_url(self._base_url, {**self._params, "since": self.last_id})

    async def _explain_refusal(self, url: str, status: int, headers: Mapping[str, str], body: Optional[bytes]) -> APIError:
        """The typed error of a refused upgrade, with the API's error body when we can get it.

        The legacy websockets client drops the body of a refusal, so ask once more over plain
        HTTP with the upgrade headers: the server refuses the same way and sends the body."""
        if body is None:
            http_url = "http" + url[len("ws"):]
            probe_headers = {
                "Authorization": f"Bearer {self._api_key}",
                "Connection": "Upgrade",
                "Upgrade": "websocket",
                "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode("ascii"),
                **self._extra_headers,
            }
            try:
                async with httpx.AsyncClient(timeout=self._open_timeout) as client:
                    answer = await client.get(http_url, headers=probe_headers)
                if answer.status_code == status:
                    body, headers = answer.content, dict(answer.headers)
            except httpx.HTTPError:
                pass
        decoded: object = None
        if body:
            try:
                decoded = json.loads(body)
            except ValueError:
                decoded = None
        return error_for_status(status, decoded, headers)

    async def _connect(self) -> _Connection:
        connect, headers_arg = _connector()
        while True:
            if self._closed:
                raise StopAsyncIteration
            url = self.url()
            try:
                ws: _Connection = await connect(
                    url,
                    **{headers_arg: {"Authorization": f"Bearer {self._api_key}", **self._extra_headers}},
                    user_agent_header=f"svc-client-python/{__version__}",
                    open_timeout=self._open_timeout,
                    compression=None,
                    max_size=4 * 1024 * 1024,
                )
                self.connections += 1
                return ws
            except InvalidHandshake as exc:
                status = getattr(exc, "status_code", None)
                response = getattr(exc, "response", None)
                if status is None and response is not None:
                    status = getattr(response, "status_code", None)
                if isinstance(status, int) and status in _FATAL_HANDSHAKE:
                    raw_headers = getattr(exc, "headers", None) or getattr(response, "headers", None) or {}
                    body = getattr(response, "body", None)
                    raise await self._explain_refusal(
                        url, status, {str(k).lower(): str(v) for k, v in dict(raw_headers).items()}, body if isinstance(body, bytes) else None
                    ) from None
                error: BaseException = exc
            except (OSError, asyncio.TimeoutError) as exc:
                error = exc
            await self._backoff(error)

    async def _backoff(self, error: BaseException) -> None:
        self._failures += 1
        if self._max_reconnects is not None and self._failures > self._max_reconnects:
            raise APIConnectionError(f"stream: no connection after {self._failures} attempts: {error}", cause=error)
        delay = min(_RECONNECT_INITIAL * (2.0 ** (self._failures - 1)), _RECONNECT_MAX)
        await asyncio.sleep(delay * (0.5 + 0.5 * random.random()))

    async def _drop(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                await asyncio.wait_for(ws.close(), timeout=1.0)
            except Exception:  # the link is already gone; nothing to tell the peer
                pass

    async def next_event(self) -> StreamEvent:
        while True:
            if self._closed:
                raise StopAsyncIteration
            if self._ws is None:
                self._ws = await self._connect()
            try:
                raw = await asyncio.wait_for(self._ws.recv(), timeout=self._heartbeat_timeout)
            except asyncio.TimeoutError:
                # Two heartbeats of silence: the link is dead even if TCP has not noticed.
                await self._drop()
                await self._backoff(APIConnectionError("stream: no frame for two heartbeats"))
                continue
            except ConnectionClosed as exc:
                code = _close_code(exc)
                await self._drop()
                if self._closed:
                    raise StopAsyncIteration from None
                fatal = _FATAL_CLOSE_CODES.get(code) if code is not None else None
                if fatal is not None:
                    cls, status = fatal
                    reason = exc.rcvd.reason if exc.rcvd is not None else ""
                    self._closed = True
                    raise cls(f"stream closed by the server with {code}: {reason}", status=status, code=f"close_{code}") from None
                if code == _RATE_LIMITED_CLOSE:
                    # The key's budget ran out during a replay: the error frame before the close
                    # said how long to wait; then resume from the last event as usual.
                    wait, self._retry_after = self._retry_after or 1.0, None
                    await asyncio.sleep(wait)
                    continue
                # 4008 (slow consumer), 1001 (server going away), 1006 (dropped): resume.
                await self._backoff(exc)
                continue
            try:
                frame = self._decode(raw)
            except SchemaMismatchError:
                await self._drop()
                raise
            if frame is not None:
                return frame

    def _decode(self, raw: Union[str, bytes]) -> Optional[StreamEvent]:
        try:
            frame = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(frame, dict):
            return None
        kind = frame.get("type")
        if kind in CONTROL_FRAMES and "schema" not in frame:
            if kind == "error" and frame.get("code") == "rate_limited":
                retry_after = frame.get("retry_after")
                if isinstance(retry_after, (int, float)) and not isinstance(retry_after, bool):
                    self._retry_after = float(retry_after)
            if kind == "subscribed":
                recovered = frame.get("recovered")
                self.recovered = recovered if isinstance(recovered, bool) else None
                self._failures = 0
            return None
        if "schema" not in frame and "id" not in frame:
            return None  # an unknown control frame of a newer server
        if frame.get("schema") != EVENT_SCHEMA:
            self._closed = True
            raise SchemaMismatchError(frame.get("schema"), EVENT_SCHEMA, frame)
        event_id = frame.get("id")
        if isinstance(event_id, str):
            if not _is_later(event_id, self.last_id):
                return None  # already delivered before a reconnect
            self.last_id = event_id
        # Decoded JSON whose schema was just checked: its shape is the server's contract.
        return cast(StreamEvent, frame)

    async def close(self) -> None:
        self._closed = True
        await self._drop()


class _StreamState:
    """What both stream flavours report about their connection.

    Attributes:
        last_id: the id of the last event yielded (pass it as ``since`` to resume later).
        recovered: the ``recovered`` flag of the last ``subscribed`` frame (``False`` after a
            resume means the server could not replay the gap: over 24 h or 10,000 events).
        connections: WebSocket connections opened so far.
    """

    def __init__(self, core: _StreamCore) -> None:
        self._core = core

    @property
    def last_id(self) -> Optional[str]:
        return self._core.last_id

    @property
    def recovered(self) -> Optional[bool]:
        return self._core.recovered

    @property
    def connections(self) -> int:
        return self._core.connections


class AsyncStream(_StreamState):
    """Events of ``GET /v1/stream`` for ``async for`` (from :meth:`AsyncSvc.stream`).

    Yields events only (``score``, ``score_retracted``, and kinds a newer server adds: ignore
    the ones you do not know). Reconnects on its own with ``since=<last id>``; ``last_id``,
    ``recovered`` and ``connections`` describe the connection.
    """

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self

    async def __anext__(self) -> StreamEvent:
        return await self._core.next_event()

    async def close(self) -> None:
        """Closes the connection; iteration ends."""
        await self._core.close()

    async def __aenter__(self) -> "AsyncStream":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()


class Stream(_StreamState):
    """Events of ``GET /v1/stream`` as a blocking iterator (from :meth:`Svc.stream`).

    Runs its own asyncio loop while ``next()`` waits, so it must not be used from inside a
    running event loop (use :class:`AsyncSvc` there). Between two ``next()`` calls nothing
    reads the socket: a consumer far behind is closed by the server with 4008 and resumed
    here, without losing an event.
    """

    def __init__(self, core: _StreamCore) -> None:
        super().__init__(core)
        self._loop = asyncio.new_event_loop()

    def __iter__(self) -> Iterator[StreamEvent]:
        return self

    def __next__(self) -> StreamEvent:
        if self._loop.is_closed():
            raise StopIteration
        try:
            return self._loop.run_until_complete(self._core.next_event())
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        """Closes the connection; iteration ends."""
        if self._loop.is_closed():
            return
        try:
            self._loop.run_until_complete(self._core.close())
        finally:
            self._loop.close()

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def __del__(self) -> None:
        if self._loop.is_closed():
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            try:
                self.close()
            except Exception:  # interpreter shutdown or a broken socket: nothing left to tell
                pass
            return
        # Collected inside another running loop: ours cannot run here; dropping it drops the socket.
        self._loop.close()


def make_stream_core(
    *,
    base_url: str,
    api_key: str,
    extra_headers: Mapping[str, str],
    sport: Union[str, Sequence[str], None],
    league: Union[str, Sequence[str], None],
    game: Union[str, Sequence[str], None],
    tier: Optional[str],
    since: Optional[str],
    heartbeat_timeout: Optional[float],
    max_reconnects: Optional[int],
    open_timeout: float,
) -> _StreamCore:
    params: Dict[str, Optional[str]] = {"sport": csv(sport), "league": csv(league), "game": csv(game), "tier": tier}
    return _StreamCore(
        base_url=base_url,
        api_key=api_key,
        extra_headers=extra_headers,
        params=params,
        since=since,
        heartbeat_timeout=DEFAULT_HEARTBEAT_TIMEOUT if heartbeat_timeout is None else heartbeat_timeout,
        max_reconnects=max_reconnects,
        open_timeout=open_timeout,
    )
