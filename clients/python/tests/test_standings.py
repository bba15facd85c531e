"""Standings, box scores, leaders and player totals against a real svc, in both clients."""
from __future__ import annotations

import asyncio
import itertools

import pytest

from conftest import Keys, SvcProcess
from svc_client import AsyncSvc, BadRequestError, Svc

FINAL = "soccer_wc_21728"


def test_standings_leaders_boxscore_and_player_stats(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url, max_retries=0) as svc:
        standings = svc.standings.list(league="wc", season="2022")
        assert [t["group"] for t in standings["data"]][:2] == ["Group A", "Group B"]
        # FIFA's published Group H: Portugal, Korea (above Uruguay on goals scored), Uruguay, Ghana.
        assert [r["entity_id"] for r in standings["data"][7]["rows"]] == ["team:wc:POR", "team:wc:KOR", "team:wc:URU", "team:wc:GHA"]
        assert isinstance(standings["as_of"], str)
        assert svc.standings.list(league="wc", season="2022", live=False)["data"] == standings["data"]

        top = [(l["rank"], l["player_id"], l["value"]) for l in itertools.islice(svc.leaders.list(league="wc", season="2022", limit=2), 2)]
        assert top == [(1, "player:wc:kylian-mbappe", 8), (2, "player:wc:lionel-messi", 7)]

        box = svc.competitions.boxscore(FINAL)
        assert box["winner"] == "team:wc:ARG"
        assert [c.get("shootout") for c in box["competitors"]] == [4, 2]
        assert [p["points"] for p in box["competitors"][0]["periods"]] == [2, 0, 0, 1]

        stats = list(svc.players.stats("player:wc:kylian-mbappe", season="2022"))
        assert stats == [{"league": "wc", "season": "2022", "competitor_id": "team:wc:FRA", "points": 8, "by_type": {"goal": 6, "penalty_goal": 2}}]

        raw = svc.with_raw_response.standings.list(league="wc", season="2022")
        assert raw.status_code == 200 and raw.headers["etag"]

        with pytest.raises(BadRequestError) as bad:
            svc.standings.list(league="stt")
        assert bad.value.code == "standings_unavailable" and bad.value.param == "league"


def test_the_async_client_reads_the_same(server: SvcProcess, keys: Keys) -> None:
    async def main() -> None:
        async with AsyncSvc(api_key=keys.admin, base_url=server.base_url, max_retries=0) as svc:
            standings = await svc.standings.list(league="wc", season="2018")
            # FIFA's published Group B 2018: Spain above Portugal on goals scored.
            assert [r["entity_id"] for r in standings["data"][1]["rows"]][:2] == ["team:wc:ESP", "team:wc:POR"]
            box = await svc.competitions.boxscore(FINAL)
            assert box["status"] == "final"
            leaders = [l async for l in svc.leaders.list(league="wc", season="2022", stat="penalty_goal")]
            assert leaders[0]["player_id"] == "player:wc:lionel-messi" and leaders[0]["value"] == 4

    asyncio.run(main())
