"""The live event stream (``GET /v1/stream``, WebSocket) with resume.

The protocol is in the repository's ``docs/`` and the server's README: control frames
(``subscribed``, ``heartbeat``, ``pong``, ``error``) are handled here and never reach the caller;
events carry an ``id`` and are resumed with ``since=<last id>`` after any drop, so a consumer
sees every event exactly once, in order, across reconnects and server restarts.
"""
from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import importlib
import json
import os
import random
import threading
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Iterator, Mapping, Optional, Protocol, Sequence, Set, Tuple, Type, TypeVar, Union, cast
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
from ._logs import logger
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
# How long close() waits for the closing handshake and for the blocking stream's loop thread.
_CLOSE_TIMEOUT = 1.0

T = TypeVar("T")


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


def _path_of(url: str) -> str:
    """The path and query of a stream URL, for log lines."""
    return url[url.index("/v1/"):] if "/v1/" in url else url


def _request_id_of(ws: object) -> Optional[str]:
    # The legacy client keeps the upgrade answer's headers on the connection, the new one on its response.
    headers = getattr(ws, "response_headers", None) or getattr(getattr(ws, "response", None), "headers", None)
    value = headers.get("x-request-id") if headers is not None else None
    return value if isinstance(value, str) else None


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
        # Made on first use inside the loop that runs the stream (Python 3.9 binds an Event to
        # the loop current when it is made).
        self._closing: Optional[asyncio.Event] = None

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
            started = time.monotonic()
            try:
                ws: _Connection = await self._unless_closed(connect(
                    url,
                    **{headers_arg: {"Authorization": f"Bearer {self._api_key}", **self._extra_headers}},
                    user_agent_header=f"svc-client-python/{__version__}",
                    open_timeout=self._open_timeout,
                    # Bounds the wait for the peer's TCP close after a close or a failed handshake.
                    close_timeout=_CLOSE_TIMEOUT,
                    compression=None,
                    max_size=4 * 1024 * 1024,
                ))
                self.connections += 1
                logger.info("GET %s 101 %.0fms request_id=%s", _path_of(url), (time.monotonic() - started) * 1000, _request_id_of(ws) or "-")
                return ws
            except InvalidHandshake as exc:
                status = getattr(exc, "status_code", None)
                response = getattr(exc, "response", None)
                if status is None and response is not None:
                    status = getattr(response, "status_code", None)
                logger.info("GET %s %s %.0fms", _path_of(url), status, (time.monotonic() - started) * 1000)
                if isinstance(status, int) and status in _FATAL_HANDSHAKE:
                    raw_headers = getattr(exc, "headers", None) or getattr(response, "headers", None) or {}
                    body = getattr(response, "body", None)
                    raise await self._explain_refusal(
                        url, status, {str(k).lower(): str(v) for k, v in dict(raw_headers).items()}, body if isinstance(body, bytes) else None
                    ) from None
                error: BaseException = exc
            except (OSError, asyncio.TimeoutError) as exc:
                logger.info("GET %s failed %.0fms: %s", _path_of(url), (time.monotonic() - started) * 1000, type(exc).__name__)
                error = exc
            await self._backoff(error)

    async def _backoff(self, error: BaseException) -> None:
        self._failures += 1
        if self._max_reconnects is not None and self._failures > self._max_reconnects:
            raise APIConnectionError(f"stream: no connection after {self._failures} attempts: {error}", cause=error)
        delay = min(_RECONNECT_INITIAL * (2.0 ** (self._failures - 1)), _RECONNECT_MAX) * (0.5 + 0.5 * random.random())
        logger.debug("stream: reconnecting in %.2fs after %s (since=%s)", delay, type(error).__name__, self.last_id)
        await self._unless_closed(asyncio.sleep(delay))

    async def _drop(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                await asyncio.wait_for(ws.close(), timeout=_CLOSE_TIMEOUT)
            except Exception:  # the link is already gone; nothing to tell the peer
                pass

    async def next_event(self) -> StreamEvent:
        while True:
            if self._closed:
                raise StopAsyncIteration
            if self._ws is None:
                self._ws = await self._connect()
            try:
                raw = await self._unless_closed(asyncio.wait_for(self._ws.recv(), timeout=self._heartbeat_timeout))
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
                logger.debug("stream: closed by the server with %s", code)
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
                    await self._unless_closed(asyncio.sleep(wait))
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

    def _closing_event(self) -> asyncio.Event:
        if self._closing is None:
            self._closing = asyncio.Event()
            if self._closed:
                self._closing.set()
        return self._closing

    async def _unless_closed(self, awaitable: Awaitable[T]) -> T:
        """What ``awaitable`` gives, unless :meth:`close` comes first: then iteration ends.

        Every wait of the stream (opening a connection, a frame, a backoff) goes through here,
        so a close from another task or thread ends ``next_event`` at once, whatever it waits on.
        """
        if self._closed:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise StopAsyncIteration
        work = asyncio.ensure_future(awaitable)
        closing = asyncio.ensure_future(self._closing_event().wait())
        try:
            await asyncio.wait({work, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closing.cancel()
            if not work.done():
                work.cancel()
                # Its outcome no longer matters; retrieving it keeps asyncio from reporting it.
                work.add_done_callback(lambda task: task.cancelled() or task.exception())
        if not work.done() or work.cancelled():
            raise StopAsyncIteration
        return work.result()

    def mark_closed(self) -> None:
        """Closes a stream that never connected (no loop has run it: nothing to await)."""
        self._closed = True

    async def close(self) -> None:
        self._closed = True
        self._closing_event().set()
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
        """Closes the connection; iteration ends, also an ``async for`` waiting in another task."""
        await self._core.close()

    async def __aenter__(self) -> "AsyncStream":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()


class Stream(_StreamState):
    """Events of ``GET /v1/stream`` as a blocking iterator (from :meth:`Svc.stream`).

    The connection lives on an asyncio loop of its own, in a daemon thread started by the first
    ``next()``; ``next()`` waits for that loop's next event. :meth:`close` may be called from
    any thread, also while another thread waits in ``next()``: that iteration then ends
    (``StopIteration``) at once. Iterate from one thread at a time. Between two ``next()`` calls
    the loop reads only what the WebSocket library buffers; a consumer far behind is closed by
    the server with 4008 and resumed here, without losing an event.
    """

    def __init__(self, core: _StreamCore) -> None:
        super().__init__(core)
        self._lock = threading.Lock()
        self._closed = False
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        # The next event being fetched; kept when next() is interrupted (Ctrl-C), so the next
        # call waits for it instead of reading the socket from two places.
        self._pending: Optional[concurrent.futures.Future[StreamEvent]] = None

    def __iter__(self) -> Iterator[StreamEvent]:
        return self

    def __next__(self) -> StreamEvent:
        with self._lock:
            if self._closed:
                raise StopIteration
            if self._pending is None:
                self._pending = asyncio.run_coroutine_threadsafe(self._core.next_event(), self._started_loop())
            pending = self._pending
        try:
            return pending.result()
        except StopAsyncIteration:
            raise StopIteration from None
        except concurrent.futures.CancelledError:
            if self._closed:
                raise StopIteration from None
            raise
        finally:
            with self._lock:
                if self._pending is pending and pending.done():
                    self._pending = None

    def _started_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=_run_loop, args=(loop, self._core), name="svc-client-stream", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
        return self._loop

    def close(self) -> None:
        """Closes the connection; iteration ends, in this thread or any other. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread, pending = self._loop, self._thread, self._pending
        if loop is None or thread is None or not thread.is_alive():
            self._core.mark_closed()
            return
        if thread is threading.current_thread():
            # Called from the stream's own loop (a callback of ours): it cannot wait for itself.
            self._core.mark_closed()
            loop.call_soon(loop.stop)
            return
        closing = self._core.close()
        try:
            asyncio.run_coroutine_threadsafe(closing, loop).result(timeout=_CLOSE_TIMEOUT + 0.5)
        except RuntimeError:  # the loop stopped meanwhile; nothing of it is left to close
            closing.close()
        except Exception:  # a socket that will not close cleanly is dropped with the loop
            pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_CLOSE_TIMEOUT)
        if pending is not None:
            pending.cancel()  # a call the loop never started must not keep next() waiting

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def __del__(self) -> None:
        # Without waiting (a collector may run in any thread, also at interpreter exit): the loop
        # thread closes the connection once its loop stops.
        loop = getattr(self, "_loop", None)
        if loop is not None and not getattr(self, "_closed", True):
            self._closed = True
            self._core.mark_closed()
            try:
                loop.call_soon_threadsafe(loop.stop)
            except RuntimeError:  # already closed
                pass


def _run_loop(loop: asyncio.AbstractEventLoop, core: _StreamCore) -> None:
    """The blocking stream's loop thread: runs until close(), then ends what is left."""
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        try:
            # Already done by close(); a stream dropped without it still closes its connection.
            loop.run_until_complete(asyncio.wait_for(core.close(), 2 * _CLOSE_TIMEOUT))
        except Exception:  # the connection is dropped below with the loop
            pass
        try:
            # Cancelling a connection's tasks can start others (websockets closes the TCP
            # connection in a task of its own): repeat until none is left, each cancelled once.
            cancelled: Set["asyncio.Task[Any]"] = set()
            deadline = time.monotonic() + 4 * _CLOSE_TIMEOUT
            while time.monotonic() < deadline:
                pending = {task for task in asyncio.all_tasks(loop) if not task.done()}
                if not pending:
                    break
                for task in pending - cancelled:
                    task.cancel()
                cancelled |= pending
                loop.run_until_complete(asyncio.wait(pending, timeout=deadline - time.monotonic()))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


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
    delay: Optional[int] = None,
    min_probability: Optional[float] = None,
) -> _StreamCore:
    params: Dict[str, Optional[str]] = {
        "sport": csv(sport),
        "league": csv(league),
        "game": csv(game),
        "tier": tier,
        "delay": None if delay is None else str(delay),
        "min_probability": None if min_probability is None else repr(float(min_probability)),
    }
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
