"""Closing a stream from another thread (blocking) or task (asyncio), whatever the stream is
waiting for: iteration ends within 2 s, without an exception, an un-awaited coroutine or an
asyncio complaint."""
from __future__ import annotations

import asyncio
import gc
import logging
import socket
import threading
import time
from typing import Any, Iterator, List, Optional

import pytest

from conftest import Keys, SvcProcess, free_port
from stubs import SUBSCRIBED, WsStub, event
from svc_client import AsyncSvc, Stream, Svc
from svc_client.types import StreamEvent

KEY = "svc_test_" + "c" * 32


class Consumer:
    """Iterates a blocking stream on a thread of its own and keeps what happened."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.events: List[StreamEvent] = []
        self.error: Optional[BaseException] = None
        self.ended_at: Optional[float] = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for ev in self.stream:
                self.events.append(ev)
        except BaseException as exc:  # the test asserts there is none
            self.error = exc
        self.ended_at = time.monotonic()

    def close_from_here_and_time_the_end(self) -> float:
        """Closes from the calling thread; seconds until the consumer's loop ended."""
        started = time.monotonic()
        self.stream.close()
        self.thread.join(5)
        assert not self.thread.is_alive(), "iteration did not end"
        assert self.error is None, repr(self.error)
        assert self.ended_at is not None
        return self.ended_at - started


@pytest.fixture
def clean(recwarn: pytest.WarningsRecorder, caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fails the test on a "never awaited" warning or an asyncio error log."""
    caplog.set_level(logging.WARNING, logger="asyncio")
    yield
    gc.collect()
    runtime = [str(w.message) for w in recwarn.list if issubclass(w.category, RuntimeWarning)]
    assert not runtime, runtime
    assert not [r.getMessage() for r in caplog.records if r.name == "asyncio"]


def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_close_from_another_thread_while_the_consumer_waits_for_a_frame(clean: None) -> None:
    async def conversation(ws: Any, path: str, n: int) -> None:
        await ws.send(SUBSCRIBED)
        await ws.send(event(1))
        await asyncio.sleep(30)  # then silence: the consumer waits in recv

    with WsStub(conversation) as stub, Svc(api_key=KEY, base_url=stub.base_url) as svc:
        consumer = Consumer(svc.stream())
        wait_until(lambda: len(consumer.events) == 1)
        time.sleep(0.2)
        assert consumer.close_from_here_and_time_the_end() < 2.0
        assert [e["id"] for e in consumer.events] == ["evt_000000000001"]
        with pytest.raises(StopIteration):
            next(consumer.stream)
        consumer.stream.close()  # twice is fine
        assert len(stub.paths) == 1


def test_close_while_the_consumer_waits_to_reconnect(clean: None) -> None:
    with Svc(api_key=KEY, base_url=f"http://127.0.0.1:{free_port()}") as svc:
        consumer = Consumer(svc.stream())
        time.sleep(2.5)  # refused again and again: by now a backoff of 1 s or more is under way
        assert consumer.close_from_here_and_time_the_end() < 1.0
        assert consumer.events == []


def test_close_while_the_opening_handshake_hangs(clean: None) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        accepted: List[socket.socket] = []
        threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
        with Svc(api_key=KEY, base_url=f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=30) as svc:
            consumer = Consumer(svc.stream())
            wait_until(lambda: accepted)
            time.sleep(0.3)
            assert consumer.close_from_here_and_time_the_end() < 2.0
        for conn in accepted:
            conn.close()


def test_close_from_two_threads_at_once_and_before_iterating(clean: None) -> None:
    async def conversation(ws: Any, path: str, n: int) -> None:
        await ws.send(SUBSCRIBED)
        await asyncio.sleep(30)

    with WsStub(conversation) as stub, Svc(api_key=KEY, base_url=stub.base_url) as svc:
        never = svc.stream()
        never.close()
        with pytest.raises(StopIteration):
            next(never)
        assert stub.paths == []

        consumer = Consumer(svc.stream())
        wait_until(lambda: consumer.stream.recovered is not None)
        closers = [threading.Thread(target=consumer.stream.close) for _ in range(2)]
        for t in closers:
            t.start()
        for t in closers:
            t.join(5)
        consumer.thread.join(2)
        assert not consumer.thread.is_alive() and consumer.error is None


def test_close_from_another_thread_against_the_real_server(server: SvcProcess, keys: Keys, clean: None) -> None:
    with Svc(api_key=keys.live, base_url=server.base_url) as svc:
        consumer = Consumer(svc.stream(sport="golf"))
        wait_until(lambda: consumer.stream.recovered is not None)
        assert consumer.close_from_here_and_time_the_end() < 2.0
        assert consumer.stream.connections == 1


def test_async_close_from_another_task_ends_an_async_for(clean: None) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        async def main(port: int) -> float:
            async with AsyncSvc(api_key=KEY, base_url=f"http://127.0.0.1:{port}", timeout=30) as svc:
                stream = svc.stream()
                got: List[StreamEvent] = []

                async def consume() -> None:
                    async for ev in stream:
                        got.append(ev)

                task = asyncio.ensure_future(consume())
                await asyncio.sleep(0.3)  # the handshake hangs: nobody answers the upgrade
                started = time.monotonic()
                await stream.close()
                await asyncio.wait_for(task, 2)
                assert got == []
                return time.monotonic() - started

        assert asyncio.run(main(listener.getsockname()[1])) < 2.0


def test_a_stream_dropped_without_close_still_closes_its_connection(clean: None) -> None:
    close_codes: List[int] = []

    async def conversation(ws: Any, path: str, n: int) -> None:
        await ws.send(SUBSCRIBED)
        await ws.send(event(1))
        await ws.wait_closed()
        close_codes.append(ws.close_code)

    with WsStub(conversation) as stub, Svc(api_key=KEY, base_url=stub.base_url) as svc:
        stream = svc.stream()
        assert next(stream)["id"] == "evt_000000000001"
        thread = stream._thread
        assert thread is not None and thread.is_alive()
        del stream
        gc.collect()
        thread.join(5)
        assert not thread.is_alive()
        wait_until(lambda: close_codes, timeout=5)
        assert close_codes == [1000]
