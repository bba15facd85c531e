"""Sandbox replays against a real svc: create, get, list, cancel, in both clients; another key sees none of it."""
from __future__ import annotations

import asyncio

import pytest

from conftest import Keys, SvcProcess
from svc_client import AsyncSvc, BadRequestError, NotFoundError, Svc

FINAL = "soccer_21728"


@pytest.fixture(scope="module")
def replayer(server: SvcProcess) -> str:
    """A key of its own: its replays' games are in its lists and streams, and no other test's."""
    return server.create_key("py-replays", "live")


def test_a_replay_is_created_read_listed_and_cancelled_and_another_key_sees_none_of_it(server: SvcProcess, keys: Keys, replayer: str) -> None:
    with Svc(api_key=replayer, base_url=server.base_url, max_retries=0) as svc, Svc(api_key=keys.live, base_url=server.base_url, max_retries=0) as other:
        replay = svc.replays.create(game_id=FINAL, speed=1)
        assert replay["id"].startswith("rpl_") and replay["source_game_id"] == FINAL
        assert replay["speed"] == 1 and replay["status"] == "scheduled" and replay["reason"] is None
        game_id = replay["game_id"]
        assert game_id is not None and game_id.startswith("soccer_") and game_id != FINAL
        assert svc.replays.get(replay["id"])["game_id"] == replay["game_id"]
        assert replay["id"] in [r["id"] for r in svc.replays.list(limit=1)]
        raw = svc.with_raw_response.replays.get(replay["id"])
        assert raw.status_code == 200 and raw.request_id is not None and raw.request_id.startswith("req_") and raw.parse()["id"] == replay["id"]
        # The replay's game exists for its key alone.
        assert svc.games.get(replay["game_id"])["id"] == replay["game_id"]
        with pytest.raises(NotFoundError):
            other.games.get(replay["game_id"])
        with pytest.raises(NotFoundError):
            other.replays.get(replay["id"])
        cancelled = svc.replays.cancel(replay["id"])
        assert cancelled["status"] == "cancelled" and cancelled["reason"] == "cancelled by its key"
        assert svc.games.get(replay["game_id"])["status"] == "final"
        with pytest.raises(BadRequestError) as bad:
            svc.replays.create(game_id=FINAL, speed=601)
        assert bad.value.param == "speed"
        with pytest.raises(BadRequestError) as unknown:
            svc.replays.create(game_id="soccer_999999999")
        assert unknown.value.code == "unknown_game" and unknown.value.param == "game_id"


def test_async_replays(server: SvcProcess, replayer: str) -> None:
    async def main() -> None:
        async with AsyncSvc(api_key=replayer, base_url=server.base_url, max_retries=0) as svc:
            replay = await svc.replays.create(game_id=FINAL)
            assert replay["speed"] == 60
            assert (await svc.replays.get(replay["id"]))["id"] == replay["id"]
            assert replay["id"] in [r["id"] async for r in svc.replays.list()]
            assert (await svc.replays.cancel(replay["id"]))["status"] == "cancelled"

    asyncio.run(main())
