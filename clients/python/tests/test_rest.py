"""Every REST resource against a real svc: records, pagination, writes."""
from __future__ import annotations

import asyncio
from typing import List

from conftest import GamePool, Keys, SvcProcess, team_code
from svc_client import AsyncPage, AsyncSvc, ConflictError, Svc, SyncPage


def test_me_reference_data_and_competitions(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        me = svc.me()
        assert me["plan"] == "internal" and "archive" in me["products"]
        teams = svc.teams.list(league="wc", limit=5)
        assert isinstance(teams, SyncPage) and len(teams.data) == 5 and teams.has_next_page()
        arg = svc.teams.get("team:wc:ARG")
        assert arg["code"] == "ARG" and arg["league"] == "wc"
        roster = list(svc.teams.roster("team:wc:ARG", season="wc_2022"))
        assert roster and all(r["team_id"] == "team:wc:ARG" for r in roster)
        player = svc.players.get(roster[0]["player_id"])
        assert player["id"] == roster[0]["player_id"]
        assert all(p["league"] == "wc" for p in svc.players.list(league="wc", search=player["name"][:4], limit=50).data)
        venues = svc.venues.list(league="wc", limit=3).data
        assert venues and svc.venues.get(venues[0]["id"]) == venues[0]
        seasons = {s["id"]: s for s in svc.seasons.list(league="wc")}
        assert seasons["wc_2022"]["competitions"] == 64
        final = [c for c in svc.competitions.list(league="wc", season="2022", status="final")][-1]
        assert svc.competitions.get(final["id"]) == final
        plays = list(svc.competitions.plays(final["id"]))
        assert plays and [p["seq"] for p in plays] == sorted(p["seq"] for p in plays)
        game_id = "soccer_" + final["id"].split("_")[-1]
        game = svc.games.get(game_id)
        assert game["competition_id"] == final["id"] and game["eligibility"]["archive"]
        events = list(svc.games.events(game_id))
        assert events and all(e["game_id"] == game_id and e["schema"] == "svc.event.v1" for e in events)


def test_iterating_a_list_walks_every_page_and_equals_the_unpaginated_list(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        whole = svc.competitions.list(league="wc", season="2022", limit=1000)
        assert whole.next_cursor is None and len(whole.data) == 64
        paged = svc.competitions.list(league="wc", season="2022", limit=7)
        assert len(paged.data) == 7
        assert list(paged) == whole.data
        pages = list(svc.competitions.list(league="wc", season="2022", limit=7).iter_pages())
        assert len(pages) == 10 and [c for p in pages for c in p.data] == whole.data
        assert pages[-1].has_next_page() is False
        second = paged.get_next_page()
        assert second.data == whole.data[7:14]
        # Resuming from a cursor picks up where that page ended.
        assert list(svc.competitions.list(league="wc", season="2022", limit=7, cursor=paged.next_cursor)) == whole.data[7:]


def test_async_lists_await_to_a_page_and_iterate_every_item(server: SvcProcess, keys: Keys) -> None:
    async def main() -> None:
        async with AsyncSvc(api_key=keys.admin, base_url=server.base_url) as svc:
            whole = await svc.competitions.list(league="wc", season="2018", limit=1000)
            page = await svc.competitions.list(league="wc", season="2018", limit=9)
            assert isinstance(page, AsyncPage) and len(page.data) == 9
            items = [c async for c in svc.competitions.list(league="wc", season="2018", limit=9)]
            assert items == whole.data and len(items) == 64
            from_page = [c async for c in page]
            assert from_page == whole.data
            pages = [p async for p in svc.competitions.list(league="wc", season="2018", limit=9).iter_pages()]
            assert sum(len(p.data) for p in pages) == 64
            assert (await svc.teams.get("team:wc:FRA"))["code"] == "FRA"
            assert (await svc.me())["id"]

    asyncio.run(main())


def test_reports_and_official_plays_are_written(server: SvcProcess, keys: Keys, game_pool: GamePool) -> None:
    game = game_pool.take_game("basketball")
    with Svc(api_key=keys.reporters[0], base_url=server.base_url) as reporter:
        one = reporter.reports.create({"game_id": str(game["id"]), "team": team_code(game), "points": 2})
        assert len(one) == 1 and one[0]["id"].startswith("rpt_") and one[0]["tier"] == "provisional"
        # A reporter the key names, alone on its play: stored, but a key's reporters without a record
        # never publish alone (docs/consensus.md "Threat model").
        named = reporter.reports.create({"game_id": str(game["id"]), "team": team_code(game, "away"), "points": 2, "reporter": "fan-1"})
        assert named[0]["id"].startswith("rpt_") and named[0]["event_id"] is None
    # Another key: one voice has at most two candidates nobody else backs open per game.
    with Svc(api_key=keys.reporters[1], base_url=server.base_url) as reporter:
        batch = reporter.reports.create(
            [
                {"game_id": str(game["id"]), "team": team_code(game, "away"), "points": 3, "ref": "py-batch-1"},
                {"game_id": str(game["id"]), "team": team_code(game), "points": 1, "ref": "py-batch-2"},
            ]
        )
        assert len(batch) == 2 and all(r["event_id"] for r in batch)
    with Svc(api_key=keys.admin, base_url=server.base_url) as source:
        competitors = game["competitors"]
        assert isinstance(competitors, list)
        home = competitors[0]["entity_id"]
        stored = source.plays.create(
            str(game["competition_id"]),
            {"period": {"unit": "quarter", "num": 1, "label": "Q1"}, "competitor_id": home, "event_type": "two_pointer", "points": 2},
        )
        assert len(stored) == 1 and stored[0]["schema"] == "svc.play.v1" and stored[0]["points"] == 2
        plays: List[object] = list(source.competitions.plays(str(game["competition_id"])))
        assert stored[0] in plays
        assert source.games.get(str(game["id"]))["status"] == "live"
        # The basket is withdrawn after review: by its seq, then a second time by its event (409).
        [fix] = source.plays.withdraw(str(game["competition_id"]), stored[0]["seq"], clock="11:40")
        assert fix["event_type"] == "score_withdrawn" and fix["points"] == -2 and fix["withdraws"] == str(stored[0]["seq"])
        retracted = fix.get("retracted_id")
        assert retracted is not None and retracted.startswith("evt_")
        try:
            source.plays.withdraw(str(game["competition_id"]), retracted)
            raise AssertionError("a score withdrawn twice")
        except ConflictError as err:
            assert err.code == "already_withdrawn" and err.param == "withdraws"
