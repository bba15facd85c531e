"""``with_raw_response``: status, headers and request id of a success, and ``parse()``."""
from __future__ import annotations

import asyncio
import uuid

import pytest

from conftest import Keys, SvcProcess
from stubs import HttpStub
from svc_client import APIResponse, AsyncPage, AsyncSvc, NotFoundError, Svc, SyncPage


def test_a_raw_record_has_status_headers_request_id_and_parses_to_the_record(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        response = svc.with_raw_response.teams.get("team:wc:ARG")
        assert isinstance(response, APIResponse)
        assert response.status_code == 200
        assert response.request_id is not None and response.request_id.startswith("req_")
        assert response.headers["x-request-id"] == response.request_id
        assert response.headers["content-type"].startswith("application/json")
        assert "ratelimit-remaining" in response.headers
        assert response.parse() == svc.teams.get("team:wc:ARG")
        assert response.elapsed > 0
        me = svc.with_raw_response.me(timeout=10)
        assert me.status_code == 200 and me.parse()["plan"] == "internal"


def test_a_raw_list_parses_to_a_page_whose_next_pages_are_plain(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        response = svc.with_raw_response.competitions.list(league="wc", season="2022", limit=7)
        assert response.status_code == 200 and response.request_id
        page = response.parse()
        assert isinstance(page, SyncPage) and len(page.data) == 7
        assert len(list(page)) == 64
        assert isinstance(page.get_next_page(), SyncPage)


def test_a_raw_post_shows_the_idempotent_replay(server: SvcProcess, keys: Keys) -> None:
    key = f"py-raw-{uuid.uuid4()}"
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        first = svc.with_raw_response.webhooks.create(url="http://127.0.0.1:9/raw", idempotency_key=key)
        again = svc.with_raw_response.webhooks.create(url="http://127.0.0.1:9/raw", idempotency_key=key)
        svc.webhooks.delete(first.parse()["id"])
    assert first.status_code == 201 and "idempotent-replayed" not in first.headers
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert again.parse() == first.parse() and first.parse()["id"].startswith("we_")
    assert first.request_id != again.request_id


def test_errors_still_raise_from_a_raw_call(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        with pytest.raises(NotFoundError) as info:
            svc.with_raw_response.games.get("soccer_999999999")
    assert info.value.request_id and info.value.code == "resource_not_found"


def test_async_raw_responses(server: SvcProcess, keys: Keys) -> None:
    async def main() -> None:
        async with AsyncSvc(api_key=keys.admin, base_url=server.base_url) as svc:
            response = await svc.with_raw_response.venues.get("lusail-stadium")
            assert response.status_code == 200 and response.request_id and response.request_id.startswith("req_")
            assert response.parse()["name"] == (await svc.venues.get("lusail-stadium"))["name"]
            listed = await svc.with_raw_response.games.events("soccer_21728", limit=5)
            page = listed.parse()
            assert isinstance(page, AsyncPage) and len(page.data) == 5
            assert len([e async for e in page]) == len([e async for e in svc.games.events("soccer_21728")])

    asyncio.run(main())


def test_the_raw_marker_never_reaches_the_server() -> None:
    answer = {"data": [], "next_cursor": "c2"}
    with HttpStub([(200, {"X-Request-Id": "req_stub1"}, answer), (200, {}, {"data": [], "next_cursor": None})]) as stub:
        with Svc(api_key="svc_test_" + "r" * 32, base_url=stub.base_url) as svc:
            response = svc.with_raw_response.notifications.list(extra_headers={"X-Mine": "1"})
            assert response.request_id == "req_stub1"
            assert response.parse().get_next_page().data == []
    assert [s.headers.get("x-mine") for s in stub.seen] == ["1", "1"]
    assert not any(name.startswith("x-svc-client") for s in stub.seen for name in s.headers)
