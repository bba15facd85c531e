"""The schedule's changes and the change feed against a real svc, in both clients."""
from __future__ import annotations

import asyncio
import datetime
import threading
from typing import Dict, List, Optional

import httpx
import pytest

from conftest import BOOTSTRAP_KEY, SvcProcess
from svc_client import AsyncSvc, ConflictError, Svc
from svc_client.types import Change


@pytest.fixture(scope="module")
def later_games(server: SvcProcess) -> List[Dict[str, object]]:
    """Scheduled soccer games after today: no other test reports on them."""
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    response = httpx.get(
        f"{server.base_url}/v1/competitions",
        params={"sport": "soccer", "status": "scheduled", "limit": "1000"},
        headers={"Authorization": f"Bearer {BOOTSTRAP_KEY}"},
    )
    response.raise_for_status()
    games: List[Dict[str, object]] = [c for c in response.json()["data"] if str(c["date"]) > today]
    assert len(games) >= 3
    return games


def game_of(competition_id: str) -> str:
    return f"soccer_{competition_id.split('_')[-1]}"


def test_change_status_and_the_status_event_in_the_game_events(server: SvcProcess, later_games: List[Dict[str, object]]) -> None:
    c = str(later_games[0]["id"])
    with Svc(api_key=BOOTSTRAP_KEY, base_url=server.base_url, max_retries=0) as svc:
        moved = svc.competitions.change_status(c, "postponed", reason="Heavy rain")
        assert moved["status"] == "postponed" and moved["status_reason"] == "Heavy rain"
        events = list(svc.games.events(game_of(c), types="status"))
        assert len(events) == 1
        event = events[0]
        assert event["type"] == "status"
        assert event.get("previous_status") == "scheduled" and event.get("status") == "postponed"
        with pytest.raises(ConflictError) as refused:
            svc.competitions.change_status(c, "final")
        assert refused.value.code == "invalid_transition"


def test_changes_list_walks_the_feed_and_follow_yields_new_changes_from_a_kept_cursor(server: SvcProcess, later_games: List[Dict[str, object]]) -> None:
    with Svc(api_key=BOOTSTRAP_KEY, base_url=server.base_url, max_retries=0) as svc:
        listed = list(svc.changes.list(limit=2))
        assert listed and [x["id"] for x in listed] == sorted(x["id"] for x in listed)
        first = svc.changes.list(limit=1000)
        cursor = first.next_cursor
        # Walk to the present end: the last non-empty page's cursor.
        page = first
        while page.data:
            cursor = page.next_cursor
            page = svc.changes.list(since=cursor, limit=1000)
        follower = svc.changes.follow(since=cursor, wait=5)
        seen: List[Change] = []

        def follow() -> None:
            for change in follower:
                seen.append(change)
                if len(seen) == 2:
                    follower.close()

        thread = threading.Thread(target=follow)
        thread.start()
        svc.competitions.change_status(str(later_games[1]["id"]), "cancelled")
        thread.join(30)
        assert not thread.is_alive()
        assert sorted(x["type"] for x in seen) == ["competition.updated", "event.created"]
        assert list(svc.changes.list(since=follower.cursor)) == []


def test_the_async_follower(server: SvcProcess, later_games: List[Dict[str, object]]) -> None:
    async def run() -> List[Change]:
        async with AsyncSvc(api_key=BOOTSTRAP_KEY, base_url=server.base_url, max_retries=0) as svc:
            start = None
            page = await svc.changes.list(limit=1000)
            while page.data:
                start = page.next_cursor
                page = await svc.changes.list(since=start, limit=1000)
            follower = svc.changes.follow(since=start, wait=5, types="event.created")
            got: List[Change] = []

            async def consume() -> None:
                async for change in follower:
                    got.append(change)
                    follower.close()

            task = asyncio.ensure_future(consume())
            await asyncio.sleep(0.3)
            await svc.competitions.change_status(str(later_games[2]["id"]), "postponed")
            await asyncio.wait_for(task, 30)
            return got

    got = asyncio.run(run())
    assert [x["type"] for x in got] == ["event.created"]
    assert got[0]["object"].get("status") == "postponed"


def test_an_export_hands_its_changes_cursor_and_the_feed_goes_on_from_it(server: SvcProcess, later_games: List[Dict[str, object]]) -> None:
    league, season = str(later_games[0]["league"]), str(later_games[0]["season_id"])
    taken = {str(g["id"]) for g in later_games[:3]}
    with Svc(api_key=BOOTSTRAP_KEY, base_url=server.base_url, max_retries=0) as svc:
        exported = svc.export(league=league, season=season, entity="competitions")
        assert exported.changes_cursor is None  # nothing asked yet: the request starts with the iteration
        records = list(exported)
        cursor = exported.changes_cursor
        assert records and cursor
        # Export, then the feed from its cursor: what changes after the export is in the feed.
        game = next(c for c in records if c["status"] == "scheduled" and str(c["id"]) not in taken and str(c["date"]) > str(later_games[0]["date"]))
        svc.competitions.change_status(str(game["id"]), "postponed", reason="Pitch waterlogged")
        after = list(svc.changes.list(since=cursor))
        assert [(x["type"], x["object"]["id"]) for x in after if x["type"] == "competition.updated"] == [("competition.updated", game["id"])]
        # A file export carries it too.
        parquet = svc.export(league=league, season=season, entity="competitions", format="parquet")
        assert b"".join(parquet)[:4] == b"PAR1" and parquet.changes_cursor


def test_the_async_export_hands_its_changes_cursor(server: SvcProcess, later_games: List[Dict[str, object]]) -> None:
    async def run() -> Optional[str]:
        async with AsyncSvc(api_key=BOOTSTRAP_KEY, base_url=server.base_url, max_retries=0) as svc:
            exported = svc.export(league=str(later_games[0]["league"]), season=str(later_games[0]["season_id"]), entity="competitions")
            records = [c async for c in exported]
            assert records
            return exported.changes_cursor

    cursor = asyncio.run(run())
    assert cursor is not None and cursor != ""
