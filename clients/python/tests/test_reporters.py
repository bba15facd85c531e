"""Reporters (product ``admin``) against a real svc, in both clients: the list typed and filtered,
suspend and restore, and their refusals."""
from __future__ import annotations

import asyncio
import base64
from typing import List

import pytest

from conftest import GamePool, Keys, SvcProcess
from svc_client import AsyncSvc, NotFoundError, PermissionDeniedError, Svc
from svc_client.types import Reporter


def reporter_id(key_id: str) -> str:
    """A key's own voice as a reporter id: ``rep_`` and its key id in base64url, unpadded."""
    return "rep_" + base64.urlsafe_b64encode(key_id.encode()).decode().rstrip("=")


def test_a_reporter_is_listed_suspended_and_restored(server: SvcProcess, keys: Keys, game_pool: GamePool) -> None:
    reporter_key = server.create_key("py-reporters", "report")
    game, role = game_pool.take("soccer")
    competitors = game["competitors"]
    assert isinstance(competitors, list)
    team = str(next(c for c in competitors if c["role"] == role)["entity_id"]).split(":")[-1]
    other = str(next(c for c in competitors if c["role"] != role)["entity_id"]).split(":")[-1]
    with Svc(api_key=keys.admin, base_url=server.base_url, max_retries=0) as admin, Svc(api_key=reporter_key, base_url=server.base_url, max_retries=0) as reporter:
        key_id = reporter.me()["id"]
        first = reporter.reports.create({"game_id": str(game["id"]), "team": team, "points": 1})[0]
        assert first["event_id"] is not None
        suspended: Reporter = admin.reporters.suspend(reporter_id(key_id))
        assert suspended["key_id"] == key_id and suspended["reporter"] is None
        assert suspended["suspended"] is True and suspended["reports"] == 1
        ignored = reporter.reports.create({"game_id": str(game["id"]), "team": other, "points": 1})[0]
        assert ignored["event_id"] is None
        listed: List[Reporter] = list(admin.reporters.list(key=key_id))
        assert [r["id"] for r in listed] == [reporter_id(key_id)]
        assert reporter_id(key_id) in [r["id"] for r in admin.reporters.list(suspended=True, limit=1)]
        assert admin.reporters.restore(reporter_id(key_id))["suspended"] is False
        raw = admin.with_raw_response.reporters.list(flagged=False)
        assert raw.status_code == 200 and raw.request_id is not None


def test_named_reporters_are_listed_and_suspended_by_the_listed_id(server: SvcProcess, keys: Keys, game_pool: GamePool) -> None:
    app_key = server.create_key("py-fan-app", "report")
    game, role = game_pool.take()
    competitors = game["competitors"]
    assert isinstance(competitors, list)
    team = str(next(c for c in competitors if c["role"] == role)["entity_id"]).split(":")[-1]
    with Svc(api_key=keys.admin, base_url=server.base_url, max_retries=0) as admin, Svc(api_key=app_key, base_url=server.base_url, max_retries=0) as app:
        key_id = app.me()["id"]
        # End users the app names: without a record of their own they publish nothing alone.
        for name in ("fan-1", "fan 2 ⚽"):
            assert app.reports.create({"game_id": str(game["id"]), "team": team, "points": 1, "reporter": name})[0]["event_id"] is None
        listed: List[Reporter] = list(admin.reporters.list(key=key_id, limit=1))
        assert [(r["key_id"], r["reporter"], r["reports"], r["suspended"]) for r in listed] == [
            (key_id, "fan 2 ⚽", 1, False),
            (key_id, "fan-1", 1, False),
        ]
        fan1 = listed[1]
        assert fan1["weight"] == 0.5 and fan1["official_confirmed"] == 0 and fan1["official_contradicted"] == 0
        suspended = admin.reporters.suspend(fan1["id"])
        assert suspended["id"] == fan1["id"] and suspended["reporter"] == "fan-1" and suspended["suspended"] is True
        assert [r["reporter"] for r in admin.reporters.list(key=key_id, suspended=True)] == ["fan-1"]
        assert admin.reporters.restore(fan1["id"])["suspended"] is False


def test_refusals(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url, max_retries=0) as admin, Svc(api_key=keys.live, base_url=server.base_url, max_retries=0) as live:
        with pytest.raises(NotFoundError) as unknown:
            admin.reporters.suspend("rep_nobody")
        assert unknown.value.code == "resource_not_found"
        with pytest.raises(PermissionDeniedError) as denied:
            list(live.reporters.list())
        assert denied.value.code == "product_not_in_plan"


def test_async_reporters(server: SvcProcess, keys: Keys) -> None:
    async def main() -> None:
        async with AsyncSvc(api_key=keys.admin, base_url=server.base_url, max_retries=0) as svc:
            everyone = [r async for r in svc.reporters.list(limit=2)]
            assert all(r["id"].startswith("rep_") for r in everyone)
            with pytest.raises(NotFoundError):
                await svc.reporters.restore("rep_nobody")

    asyncio.run(main())
