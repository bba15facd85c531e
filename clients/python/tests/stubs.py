"""Servers of the tests' own on 127.0.0.1, port 0: an HTTP stub that answers from a script, and
a WebSocket stub driven by a coroutine per connection."""
from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Awaitable, Callable, Dict, List, Optional

import websockets
import websockets.exceptions


@dataclass
class Seen:
    method: str
    path: str
    headers: Dict[str, str]
    body: bytes
    at: float  # time.monotonic() when the request arrived


# What a scripted step does: (status, headers, body), or "drop" to close the socket unanswered,
# or ("sleep", seconds) to hold the request past the client's timeout, or ("slow", seconds,
# (status, headers, body)) to answer after a while.
Step = Any


@dataclass
class HttpStub:
    """Answers request n with steps[n] (the last step repeats)."""

    steps: List[Step]
    seen: List[Seen] = field(default_factory=list)
    server: Optional[ThreadingHTTPServer] = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "HttpStub":
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def handle_any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                index = len(stub.seen)
                stub.seen.append(Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic()))
                step = stub.steps[min(index, len(stub.steps) - 1)]
                if step == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if isinstance(step, tuple) and step[0] == "sleep":
                    time.sleep(step[1])
                    self.close_connection = True
                    return
                if isinstance(step, tuple) and step[0] == "slow":
                    time.sleep(step[1])
                    step = step[2]
                status, headers, payload = step
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = handle_any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()


def error_body(type_: str, code: str, message: str = "stub error", param: Optional[str] = None) -> Dict[str, Any]:
    err: Dict[str, Any] = {"type": type_, "code": code, "message": message, "request_id": "req_stub"}
    if param:
        err["param"] = param
    return {"error": err}


Conversation = Callable[[Any, str, int], Awaitable[None]]


class WsStub:
    """A WebSocket server on its own thread and loop; ``handler(ws, path, n)`` runs connection n
    (0-based). ``paths`` records the request path (with query) of every connection."""

    def __init__(self, handler: Conversation) -> None:
        self.handler = handler
        self.paths: List[str] = []
        self.headers: List[Dict[str, str]] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: Optional[asyncio.Future[None]] = None
        self.port = 0

    async def _conversation(self, ws: Any, path: Optional[str] = None) -> None:
        request = getattr(ws, "request", None)
        full = path if path is not None else (request.path if request is not None else ws.path)
        headers = request.headers if request is not None else ws.request_headers
        n = len(self.paths)
        self.paths.append(full)
        self.headers.append({k.lower(): v for k, v in headers.raw_items()})
        try:
            await self.handler(ws, full, n)
        except websockets.exceptions.ConnectionClosed:
            pass

    async def _main(self) -> None:
        self._stop = self._loop.create_future()
        async with websockets.serve(self._conversation, "127.0.0.1", 0) as server:  # type: ignore[attr-defined]
            self.port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await self._stop

    def __enter__(self) -> "WsStub":
        threading.Thread(target=self._loop.run_until_complete, args=(self._main(),), daemon=True).start()
        self._ready.wait(10)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        def stop() -> None:
            if self._stop is not None and not self._stop.done():
                self._stop.set_result(None)

        self._loop.call_soon_threadsafe(stop)


def event(n: int, schema: str = "svc.event.v1", **extra: Any) -> str:
    body = {
        "id": f"evt_{n:012d}",
        "type": "score",
        "tier": "confirmed",
        "game_id": "soccer_1",
        "team": "ARG",
        "points": 1,
        "ts": "2026-01-01T00:00:00.000Z",
        "confidence": {"agreement": 1, "reporters": 3, "latency_ms": 10},
        "schema": schema,
    }
    body.update(extra)
    return json.dumps(body)


SUBSCRIBED = json.dumps({"type": "subscribed", "recovered": True, "sports": [], "leagues": [], "games": [], "tier": None})


def query_of(path: str) -> Dict[str, str]:
    from urllib.parse import parse_qsl, urlsplit

    return dict(parse_qsl(urlsplit(path).query))

