"""Per-call options: ``timeout=``, ``max_retries=``, ``extra_headers=`` on every method and
``idempotency_key=`` on every POST, in both clients; the User-Agent."""
from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any, Dict, List, Tuple

import pytest

from conftest import Keys, SvcProcess
from stubs import SUBSCRIBED, HttpStub, Step, WsStub, error_body
from svc_client import APITimeoutError, AsyncSvc, InternalServerError, Svc, __version__

KEY = "svc_test_" + "o" * 32
ANY_ANSWER: Dict[str, Any] = {"data": [], "next_cursor": None}
PLAY = {"period": {"unit": "half", "num": 1, "label": "1st half"}, "competitor_id": "team:wc:ARG", "event_type": "goal", "points": 1}

# (method, positional args, keyword args, HTTP method, path): every REST method of a client.
CALLS: List[Tuple[str, Tuple[Any, ...], Dict[str, Any], str, str]] = [
    ("me", (), {}, "GET", "/v1/me"),
    ("teams.list", (), {"league": "wc"}, "GET", "/v1/teams?league=wc"),
    ("teams.get", ("team:wc:ARG",), {}, "GET", "/v1/teams/team:wc:ARG"),
    ("teams.roster", ("team:wc:ARG",), {"season": "2022"}, "GET", "/v1/teams/team:wc:ARG/roster?season=2022"),
    ("players.list", (), {}, "GET", "/v1/players"),
    ("players.get", ("player:wc:lionel-messi",), {}, "GET", "/v1/players/player:wc:lionel-messi"),
    ("players.stats", ("player:wc:lionel-messi",), {}, "GET", "/v1/players/player:wc:lionel-messi/stats"),
    ("venues.list", (), {}, "GET", "/v1/venues"),
    ("venues.get", ("lusail-stadium",), {}, "GET", "/v1/venues/lusail-stadium"),
    ("seasons.list", (), {}, "GET", "/v1/seasons"),
    ("competitions.list", (), {}, "GET", "/v1/competitions"),
    ("competitions.get", ("soccer_wc_21728",), {}, "GET", "/v1/competitions/soccer_wc_21728"),
    ("competitions.plays", ("soccer_wc_21728",), {}, "GET", "/v1/competitions/soccer_wc_21728/plays"),
    ("competitions.boxscore", ("soccer_wc_21728",), {}, "GET", "/v1/competitions/soccer_wc_21728/boxscore"),
    ("competitions.change_status", ("soccer_wc_21728", "postponed"), {}, "POST", "/v1/competitions/soccer_wc_21728/status"),
    ("standings.list", (), {"league": "wc"}, "GET", "/v1/standings?league=wc"),
    ("leaders.list", (), {"league": "wc"}, "GET", "/v1/leaders?league=wc"),
    ("games.list", (), {}, "GET", "/v1/games"),
    ("games.get", ("soccer_21728",), {}, "GET", "/v1/games/soccer_21728"),
    ("games.events", ("soccer_21728",), {}, "GET", "/v1/games/soccer_21728/events"),
    ("reports.create", ({"game_id": "soccer_1", "team": "ARG", "points": 1},), {}, "POST", "/v1/reports"),
    ("plays.create", ("soccer_wc_1", PLAY), {}, "POST", "/v1/competitions/soccer_wc_1/plays"),
    ("plays.withdraw", ("soccer_wc_1", "evt_000000000001"), {}, "POST", "/v1/competitions/soccer_wc_1/plays"),
    ("webhooks.create", (), {"url": "https://example.com/hook"}, "POST", "/v1/webhooks"),
    ("webhooks.list", (), {}, "GET", "/v1/webhooks"),
    ("webhooks.get", ("we_1",), {}, "GET", "/v1/webhooks/we_1"),
    ("webhooks.update", ("we_1",), {"description": "d"}, "PATCH", "/v1/webhooks/we_1"),
    ("webhooks.delete", ("we_1",), {}, "DELETE", "/v1/webhooks/we_1"),
    ("webhooks.deliveries", ("we_1",), {}, "GET", "/v1/webhooks/we_1/deliveries"),
    ("webhooks.delivery", ("we_1", "dlv_1"), {}, "GET", "/v1/webhooks/we_1/deliveries/dlv_1"),
    ("webhooks.replay", ("we_1",), {"delivery_id": "dlv_1"}, "POST", "/v1/webhooks/we_1/replay"),
    ("webhooks.enable", ("we_1",), {}, "POST", "/v1/webhooks/we_1/enable"),
    ("webhooks.rotate_secret", ("we_1",), {}, "POST", "/v1/webhooks/we_1/rotate-secret"),
    ("webhooks.test", ("we_1",), {}, "POST", "/v1/webhooks/we_1/test"),
    ("notifications.list", (), {}, "GET", "/v1/notifications"),
]
OPTIONS = {"timeout", "max_retries", "extra_headers"}


def method_of(client: object, dotted: str) -> Any:
    target: Any = client
    for part in dotted.split("."):
        target = getattr(target, part)
    return target


def rest_methods(client: object) -> List[str]:
    """Every public method of the client and of its resources, except export and stream."""
    names = [n for n in dir(client) if not n.startswith("_") and inspect.ismethod(getattr(client, n)) and n not in ("close", "export", "stream")]
    for resource in ("teams", "players", "venues", "seasons", "competitions", "standings", "leaders", "games", "reports", "plays", "webhooks", "notifications"):
        obj = getattr(client, resource)
        names += [f"{resource}.{n}" for n in dir(obj) if not n.startswith("_") and inspect.ismethod(getattr(obj, n))]
    return sorted(names)


@pytest.mark.parametrize("cls", [Svc, AsyncSvc])
def test_every_method_takes_the_options_and_only_posts_take_an_idempotency_key(cls: Any) -> None:
    client = cls(api_key=KEY, base_url="http://127.0.0.1:9")
    assert rest_methods(client) == sorted(name for name, *_ in CALLS), "a method without a row in CALLS"
    for name, _, _, http_method, _ in CALLS:
        params = set(inspect.signature(method_of(client, name)).parameters)
        assert OPTIONS <= params, name
        assert ("idempotency_key" in params) == (http_method == "POST"), name
    for name in ("export", "stream"):
        assert {"timeout", "extra_headers"} <= set(inspect.signature(getattr(client, name)).parameters)
    assert "max_retries" in inspect.signature(client.export).parameters


def check_calls(stub: HttpStub) -> None:
    assert len(stub.seen) == len(CALLS)
    for seen, (name, _, _, http_method, path) in zip(stub.seen, CALLS):
        assert (seen.method, seen.path) == (http_method, path), name
        assert seen.headers["x-call"] == name
        assert seen.headers.get("idempotency-key") == (f"idem-{name}" if http_method == "POST" else None)
        assert seen.headers["user-agent"] == f"svc-client-python/{__version__}"


def options_for(name: str, http_method: str) -> Dict[str, Any]:
    options: Dict[str, Any] = {"timeout": 5.0, "max_retries": 0, "extra_headers": {"X-Call": name}}
    if http_method == "POST":
        options["idempotency_key"] = f"idem-{name}"
    return options


def test_the_options_reach_the_request_blocking() -> None:
    with HttpStub([(200, {}, ANY_ANSWER)]) as stub, Svc(api_key=KEY, base_url=stub.base_url) as svc:
        for name, args, kwargs, http_method, _ in CALLS:
            method_of(svc, name)(*args, **kwargs, **options_for(name, http_method))
        check_calls(stub)


def test_the_options_reach_the_request_asyncio() -> None:
    async def main(base_url: str) -> None:
        async with AsyncSvc(api_key=KEY, base_url=base_url) as svc:
            for name, args, kwargs, http_method, _ in CALLS:
                await method_of(svc, name)(*args, **kwargs, **options_for(name, http_method))

    with HttpStub([(200, {}, ANY_ANSWER)]) as stub:
        asyncio.run(main(stub.base_url))
        check_calls(stub)


def test_a_calls_timeout_overrides_the_clients() -> None:
    with HttpStub([("sleep", 3.0)]) as stub, Svc(api_key=KEY, base_url=stub.base_url, timeout=30, max_retries=0) as svc:
        started = time.monotonic()
        with pytest.raises(APITimeoutError):
            svc.teams.get("team:wc:ARG", timeout=0.3)
        assert time.monotonic() - started < 2.0 and len(stub.seen) == 1
    slow: Step = ("slow", 0.8, (200, {}, {"data": {"id": "team:wc:ARG"}}))
    with HttpStub([slow]) as stub, Svc(api_key=KEY, base_url=stub.base_url, timeout=0.3, max_retries=0) as svc:
        assert svc.teams.get("team:wc:ARG", timeout=None)["id"] == "team:wc:ARG"  # None: no limit
        assert svc.teams.get("team:wc:ARG", timeout=2)["id"] == "team:wc:ARG"


def test_a_calls_max_retries_overrides_the_clients() -> None:
    failing: Step = (503, {}, error_body("unavailable", "draining"))
    with HttpStub([failing, failing, (200, {}, {"data": {"id": "key_1"}})]) as stub, Svc(api_key=KEY, base_url=stub.base_url, max_retries=0) as svc:
        assert svc.me(max_retries=2)["id"] == "key_1" and len(stub.seen) == 3
    with HttpStub([failing]) as stub, Svc(api_key=KEY, base_url=stub.base_url, max_retries=2) as svc:
        with pytest.raises(InternalServerError):
            svc.me(max_retries=0)
        assert len(stub.seen) == 1


def test_extra_headers_go_to_the_export_and_the_stream() -> None:
    with HttpStub([(200, {}, b'{"id":"evt_000000000001"}\n')]) as stub, Svc(api_key=KEY, base_url=stub.base_url) as svc:
        assert [e["id"] for e in svc.export(league="wc", season="2022", extra_headers={"X-Call": "export"})] == ["evt_000000000001"]
        assert stub.seen[0].headers["x-call"] == "export"

    async def conversation(ws: Any, path: str, n: int) -> None:
        await ws.send(SUBSCRIBED)
        await ws.send('{"id":"evt_000000000001","type":"score","tier":"confirmed","game_id":"soccer_1","team":"ARG","points":1,"ts":"2026-01-01T00:00:00.000Z","confidence":{"agreement":1,"reporters":3,"latency_ms":1},"schema":"svc.event.v1"}')
        await asyncio.sleep(5)

    with WsStub(conversation) as ws_stub, Svc(api_key=KEY, base_url=ws_stub.base_url) as svc:
        with svc.stream(extra_headers={"X-Call": "stream"}, timeout=5) as stream:
            assert next(stream)["id"] == "evt_000000000001"
        assert ws_stub.headers[0]["x-call"] == "stream"
        assert ws_stub.headers[0]["user-agent"] == f"svc-client-python/{__version__}"
        assert ws_stub.headers[0]["authorization"] == f"Bearer {KEY}"


def test_bad_options_are_refused_before_sending() -> None:
    with HttpStub([(200, {}, ANY_ANSWER)]) as stub, Svc(api_key=KEY, base_url=stub.base_url) as svc:
        with pytest.raises(ValueError):
            svc.me(max_retries=-1)
        with pytest.raises(ValueError):
            svc.reports.create({"game_id": "soccer_1", "team": "ARG", "points": 1}, idempotency_key="k" * 256)
        with pytest.raises(TypeError):
            svc.teams.get("team:wc:ARG", idempotency_key="k")  # type: ignore[call-arg]
        assert stub.seen == []


def test_per_call_options_against_the_real_server(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        team = svc.teams.get("team:wc:ARG", timeout=10, max_retries=0, extra_headers={"X-Trace": "py-options"})
        assert team["code"] == "ARG"
        assert [c["id"] for c in svc.competitions.list(league="wc", season="2022", limit=64, timeout=10)][-1] == "soccer_wc_21728"
