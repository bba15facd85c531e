"""The stream: real events from a real svc, refusals, a SIGKILL and restart; resume, silence,
4008, 4029 and schema mismatch from stub WebSocket servers."""
from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any, Dict, List

import httpx
import pytest

from conftest import GamePool, Keys, SvcProcess, team_code
from stubs import SUBSCRIBED, WsStub, event, query_of
from svc_client import (
    APIConnectionError,
    AsyncSvc,
    AuthenticationError,
    BadRequestError,
    PermissionDeniedError,
    RateLimitError,
    SchemaMismatchError,
    Svc,
)
from svc_client.types import StreamEvent

WIRE_KEYS = {"id", "type", "tier", "game_id", "team", "points", "ts", "confidence", "schema"}


def report_three(server: SvcProcess, keys: Keys, game: Dict[str, Any], role: str) -> List[str]:
    """Three reporters agree on one score: a provisional event, then a confirmed one."""
    event_ids: List[str] = []
    for key in keys.reporters:
        with Svc(api_key=key, base_url=server.base_url) as reporter:
            result = reporter.reports.create({"game_id": game["id"], "team": team_code(game, role), "points": 1})
            event_id = result[0]["event_id"]
            assert event_id is not None
            if event_id not in event_ids:
                event_ids.append(event_id)
    assert len(event_ids) == 2, "one provisional, one confirmed"
    return event_ids


def collect(stream: Any, n: int, into: List[StreamEvent]) -> threading.Thread:
    def run() -> None:
        for ev in stream:
            into.append(ev)
            if len(into) >= n:
                return

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_provisional_then_confirmed_events_from_three_reporters(server: SvcProcess, keys: Keys, game_pool: GamePool) -> None:
    game, role = game_pool.take()
    got: List[StreamEvent] = []
    with Svc(api_key=keys.live, base_url=server.base_url) as svc, svc.stream(game=str(game["id"])) as stream:
        # The first frame the server sends is `subscribed`; wait for it through a ping-free
        # handshake: iterate in a thread and post once the socket is open.
        thread = collect(stream, 2, got)
        while stream.connections == 0 or stream.recovered is None:
            thread.join(0.05)
        ids = report_three(server, keys, game, role)
        thread.join(20)
        assert [e["id"] for e in got] == ids
        provisional, confirmed = got
        assert provisional["tier"] == "provisional" and confirmed["tier"] == "confirmed"
        assert set(provisional) == WIRE_KEYS
        assert confirmed.get("provisional_id") == provisional["id"]
        assert confirmed["confidence"]["reporters"] == 3 and confirmed["confidence"]["agreement"] == 1
        assert all(e["schema"] == "svc.event.v1" and e["game_id"] == game["id"] for e in got)
        assert stream.last_id == confirmed["id"]


def test_async_for_over_the_stream_with_a_tier_filter(server: SvcProcess, keys: Keys, game_pool: GamePool) -> None:
    game, role = game_pool.take()

    async def main() -> List[StreamEvent]:
        async with AsyncSvc(api_key=keys.live, base_url=server.base_url) as svc:
            async with svc.stream(game=[str(game["id"])], tier="confirmed") as stream:
                got: List[StreamEvent] = []

                async def consume() -> None:
                    async for ev in stream:
                        got.append(ev)
                        return

                task = asyncio.ensure_future(consume())
                while stream.recovered is None:
                    await asyncio.sleep(0.02)
                await asyncio.get_running_loop().run_in_executor(None, report_three, server, keys, game, role)
                await asyncio.wait_for(task, 20)
                return got

    got = asyncio.run(main())
    assert len(got) == 1 and got[0]["tier"] == "confirmed" and got[0]["game_id"] == game["id"]


def test_refusals_raise_typed_errors_without_retrying(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key="svc_test_" + "w" * 32, base_url=server.base_url) as bad:
        with pytest.raises(AuthenticationError) as auth:
            next(iter(bad.stream()))
    assert auth.value.status == 401 and auth.value.type == "authentication_error"
    with Svc(api_key=keys.reporters[0], base_url=server.base_url) as reporter:
        with pytest.raises(PermissionDeniedError) as product:
            next(iter(reporter.stream()))
    assert product.value.code == "product_not_in_plan"
    with Svc(api_key=keys.basketball, base_url=server.base_url) as bb:
        with pytest.raises(PermissionDeniedError) as sport:
            next(iter(bb.stream(sport="soccer")))
    assert sport.value.code == "sport_not_in_scope"
    with Svc(api_key=keys.live, base_url=server.base_url) as live:
        with pytest.raises(BadRequestError) as tier:
            next(iter(live.stream(tier="maybe")))  # type: ignore[arg-type]
    assert tier.value.param == "tier"


def test_over_the_plans_connections_is_a_rate_limit_error(server: SvcProcess, keys: Keys) -> None:
    """The free plan allows 2 stream connections; the third is closed with 4029."""

    async def main() -> None:
        async with AsyncSvc(api_key=keys.free, base_url=server.base_url) as svc:
            held = [svc.stream(sport="golf"), svc.stream(sport="golf")]
            for s in held:
                task = asyncio.ensure_future(s.__anext__())
                while s.recovered is None:
                    await asyncio.sleep(0.02)
                task.cancel()
            third = svc.stream(sport="golf")
            with pytest.raises(RateLimitError) as info:
                await asyncio.wait_for(third.__anext__(), 10)
            assert info.value.status == 429 and third.connections == 1
            for s in held:
                await s.close()

    asyncio.run(main())


def test_every_event_exactly_once_in_order_across_a_sigkill_and_restart(server: SvcProcess, keys: Keys, game_pool: GamePool, tmp_root: str) -> None:
    other = server.clone(tmp_root)
    other.start()
    try:
        slots = [game_pool.take() for _ in range(4)]
        games = [g for g, _ in slots]
        got: List[StreamEvent] = []
        with Svc(api_key=keys.live, base_url=other.base_url) as svc:
            stream = svc.stream(game=[str(g["id"]) for g in games])
            thread = collect(stream, 8, got)
            while stream.recovered is None:
                thread.join(0.05)
            expected = report_three(other, keys, *slots[0]) + report_three(other, keys, *slots[1])
            while len(got) < 4:
                thread.join(0.05)
            other.kill()
            other.start()
            # Written while the client may still be reconnecting: the resume must bring them.
            expected += report_three(other, keys, *slots[2]) + report_three(other, keys, *slots[3])
            thread.join(60)
            stream.close()
        assert [e["id"] for e in got] == expected
        assert len(set(e["id"] for e in got)) == 8
        assert stream.connections >= 2
    finally:
        other.kill()


# --------------------------------------------------------------------------------------------
# Stub servers


def test_a_4008_close_resumes_with_since_and_skips_a_replayed_duplicate() -> None:
    async def conversation(ws: Any, path: str, n: int) -> None:
        await ws.send(SUBSCRIBED)
        if n == 0:
            await ws.send(event(1))
            await ws.send(event(2))
            await ws.close(4008, "slow_consumer")
        else:
            await ws.send(event(2))  # already delivered: must not be repeated
            await ws.send(event(3))
            await asyncio.sleep(5)

    with WsStub(conversation) as stub, Svc(api_key="svc_test_" + "a" * 32, base_url=stub.base_url) as svc:
        with svc.stream(sport="soccer", since="evt_000000000000") as stream:
            got = [next(stream)["id"] for _ in range(3)]
        assert got == ["evt_000000000001", "evt_000000000002", "evt_000000000003"]
        assert query_of(stub.paths[0]) == {"sport": "soccer", "since": "evt_000000000000"}
        assert query_of(stub.paths[1]) == {"sport": "soccer", "since": "evt_000000000002"}
        assert stub.headers[0]["authorization"] == "Bearer svc_test_" + "a" * 32


def test_min_probability_goes_in_the_query_of_every_connection() -> None:
    async def conversation(ws: Any, path: str, n: int) -> None:
        await ws.send(SUBSCRIBED)
        await ws.send(event(n + 1))
        if n == 0:
            await ws.close(4008, "slow_consumer")
        else:
            await asyncio.sleep(5)

    with WsStub(conversation) as stub, Svc(api_key="svc_test_" + "a" * 32, base_url=stub.base_url) as svc:
        with svc.stream(game="soccer_1", min_probability=0.9) as stream:
            got = [next(stream)["id"] for _ in range(2)]
        assert got == ["evt_000000000001", "evt_000000000002"]
        assert query_of(stub.paths[0]) == {"game": "soccer_1", "min_probability": "0.9"}
        assert query_of(stub.paths[1]) == {"game": "soccer_1", "min_probability": "0.9", "since": "evt_000000000001"}


def test_a_4429_close_waits_for_the_error_frames_retry_after_then_resumes() -> None:
    times: List[float] = []

    async def conversation(ws: Any, path: str, n: int) -> None:
        times.append(time.monotonic())
        await ws.send(SUBSCRIBED)
        if n == 0:
            await ws.send(event(1))
            await ws.send(json.dumps({"type": "error", "code": "rate_limited", "message": "slow down", "retry_after": 1}))
            await ws.close(4429, "rate_limited")
        else:
            await ws.send(event(2))
            await asyncio.sleep(5)

    with WsStub(conversation) as stub, Svc(api_key="svc_test_" + "a" * 32, base_url=stub.base_url) as svc:
        with svc.stream(sport="soccer") as stream:
            got = [next(stream)["id"] for _ in range(2)]
        assert got == ["evt_000000000001", "evt_000000000002"]
        assert query_of(stub.paths[1])["since"] == "evt_000000000001"
        assert times[1] - times[0] >= 0.9


def test_a_4401_close_is_an_authentication_error_without_reconnecting() -> None:
    async def conversation(ws: Any, path: str, n: int) -> None:
        await ws.send(SUBSCRIBED)
        await ws.close(4401, "key_revoked")

    with WsStub(conversation) as stub, Svc(api_key="svc_test_" + "a" * 32, base_url=stub.base_url) as svc:
        with svc.stream(sport="soccer") as stream:
            with pytest.raises(AuthenticationError):
                next(stream)
        assert len(stub.paths) == 1


def test_two_heartbeats_of_silence_is_a_dead_link() -> None:
    async def conversation(ws: Any, path: str, n: int) -> None:
        await ws.send(SUBSCRIBED)
        if n == 0:
            await ws.send(event(7))
            await ws.send(json.dumps({"type": "heartbeat"}))
            await asyncio.sleep(30)  # silence, the socket still open
        else:
            await ws.send(event(8))
            await asyncio.sleep(5)

    async def main(base_url: str) -> List[str]:
        async with AsyncSvc(api_key="svc_test_" + "b" * 32, base_url=base_url) as svc:
            async with svc.stream(heartbeat_timeout=0.5) as stream:
                return [(await stream.__anext__())["id"], (await stream.__anext__())["id"]]

    with WsStub(conversation) as stub:
        assert asyncio.run(main(stub.base_url)) == ["evt_000000000007", "evt_000000000008"]
        assert len(stub.paths) == 2 and query_of(stub.paths[1])["since"] == "evt_000000000007"


def test_control_frames_never_reach_the_caller_and_unknown_kinds_pass() -> None:
    async def conversation(ws: Any, path: str, n: int) -> None:
        for frame in (SUBSCRIBED, json.dumps({"type": "heartbeat"}), json.dumps({"type": "pong"}), json.dumps({"type": "error", "code": "x", "message": "y"}), json.dumps({"type": "future_control"})):
            await ws.send(frame)
        await ws.send(event(1, type="score_retracted", retracted_id="evt_000000000000"))
        await ws.send(event(2, type="some_new_kind"))
        await asyncio.sleep(5)

    with WsStub(conversation) as stub, Svc(api_key="svc_test_" + "c" * 32, base_url=stub.base_url) as svc:
        with svc.stream() as stream:
            first, second = next(stream), next(stream)
        assert first["type"] == "score_retracted" and first.get("retracted_id") == "evt_000000000000"
        assert second["type"] == "some_new_kind"


def test_an_event_of_another_schema_raises_schema_mismatch() -> None:
    async def conversation(ws: Any, path: str, n: int) -> None:
        await ws.send(SUBSCRIBED)
        await ws.send(event(1))
        await ws.send(event(2, schema="svc.event.v2"))
        await asyncio.sleep(5)

    with WsStub(conversation) as stub, Svc(api_key="svc_test_" + "d" * 32, base_url=stub.base_url) as svc:
        stream = svc.stream()
        assert next(stream)["id"] == "evt_000000000001"
        with pytest.raises(SchemaMismatchError) as info:
            next(stream)
        assert info.value.schema == "svc.event.v2" and info.value.expected == "svc.event.v1"
        with pytest.raises(StopIteration):
            next(stream)
        stream.close()


def test_4029_and_a_refused_upgrade_do_not_loop() -> None:
    async def limited(ws: Any, path: str, n: int) -> None:
        await ws.close(4029, "connection limit of the plan reached")

    with WsStub(limited) as stub, Svc(api_key="svc_test_" + "e" * 32, base_url=stub.base_url) as svc:
        with pytest.raises(RateLimitError):
            next(iter(svc.stream()))
        assert len(stub.paths) == 1


def test_a_server_that_never_comes_back_ends_after_max_reconnects() -> None:
    from conftest import free_port

    with Svc(api_key="svc_test_" + "f" * 32, base_url=f"http://127.0.0.1:{free_port()}") as svc:
        with pytest.raises(APIConnectionError):
            next(iter(svc.stream(max_reconnects=2)))


def test_a_real_refusal_body_is_read(server: SvcProcess) -> None:
    """The refused upgrade's JSON body (request_id) reaches the error."""
    with Svc(api_key="svc_test_" + "g" * 32, base_url=server.base_url) as svc:
        with pytest.raises(AuthenticationError) as info:
            next(iter(svc.stream()))
    assert info.value.request_id and info.value.request_id.startswith("req_")
    assert httpx.get(f"{server.base_url}/healthz").status_code == 200
