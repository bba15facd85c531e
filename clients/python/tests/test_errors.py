"""Each error class from a real svc: status, type, code, param, request_id, headers."""
from __future__ import annotations

import asyncio

import pytest

from conftest import GamePool, Keys, SvcProcess, team_code
from svc_client import (
    APIConnectionError,
    APIError,
    AsyncSvc,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    Svc,
    SvcError,
)
from conftest import free_port


def test_a_wrong_key_is_an_authentication_error(server: SvcProcess) -> None:
    with Svc(api_key="svc_test_" + "x" * 32, base_url=server.base_url) as svc:
        with pytest.raises(AuthenticationError) as info:
            svc.me()
    e = info.value
    assert isinstance(e, APIError) and e.status == 401 and e.type == "authentication_error"
    assert e.request_id and e.request_id.startswith("req_") and e.headers["x-request-id"] == e.request_id


def test_a_key_without_the_product_is_permission_denied(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.live, base_url=server.base_url) as svc:
        with pytest.raises(PermissionDeniedError) as info:
            list(svc.export(league="wc", season="2022"))
    assert info.value.status == 403 and info.value.code == "product_not_in_plan" and info.value.type == "permission_error"
    with Svc(api_key=keys.reporters[0], base_url=server.base_url) as svc:
        with pytest.raises(PermissionDeniedError, match="product") as info:
            svc.webhooks.list()
    assert info.value.code == "product_not_in_plan"


def test_a_key_of_another_sport_is_permission_denied(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.basketball, base_url=server.base_url) as svc:
        with pytest.raises(PermissionDeniedError) as info:
            list(svc.games.events("soccer_21728"))
    assert info.value.status == 403 and info.value.code == "sport_not_in_scope"


def test_a_bad_parameter_is_a_bad_request_naming_it(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        with pytest.raises(BadRequestError) as info:
            svc.competitions.list(league="wc", limit=5000)
        assert info.value.status == 400 and info.value.param == "limit" and info.value.type == "invalid_request"
        with pytest.raises(BadRequestError) as info:
            svc.competitions.list(cursor="not-a-cursor")
        assert info.value.param == "cursor"


def test_an_unknown_id_is_not_found(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        with pytest.raises(NotFoundError) as info:
            svc.teams.get("team:wc:NOPE")
        assert info.value.status == 404 and info.value.type == "not_found"
        with pytest.raises(NotFoundError):
            svc.webhooks.get("we_doesnotexist")


def test_a_report_on_a_final_game_is_a_conflict(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.reporters[0], base_url=server.base_url) as svc:
        with pytest.raises(ConflictError) as info:
            svc.reports.create({"game_id": "soccer_21728", "team": "ARG", "points": 1})
    assert info.value.status == 409 and info.value.code == "game_final"


def test_async_errors_are_the_same_classes(server: SvcProcess, keys: Keys, game_pool: GamePool) -> None:
    async def main() -> None:
        async with AsyncSvc(api_key="svc_test_" + "y" * 32, base_url=server.base_url) as bad:
            with pytest.raises(AuthenticationError):
                await bad.me()
        async with AsyncSvc(api_key=keys.basketball, base_url=server.base_url) as bb:
            with pytest.raises(PermissionDeniedError) as info:
                await bb.competitions.list(sport="soccer")
            assert info.value.code == "sport_not_in_scope"
        async with AsyncSvc(api_key=keys.live, base_url=server.base_url) as live:
            with pytest.raises(PermissionDeniedError):
                async for _ in live.export(league="wc", season="2022"):
                    pass
            with pytest.raises(BadRequestError):
                [c async for c in live.competitions.list(limit=0)]
            with pytest.raises(NotFoundError):
                await live.games.get("soccer_999999999")

    asyncio.run(main())


def test_no_key_and_no_server_fail_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SVC_API_KEY", raising=False)
    with pytest.raises(SvcError, match="SVC_API_KEY"):
        Svc()
    monkeypatch.setenv("SVC_API_KEY", "svc_test_" + "z" * 32)
    monkeypatch.setenv("SVC_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    with Svc(max_retries=0) as svc:
        assert svc.base_url.endswith(str(svc.base_url.rsplit(":", 1)[1])) and not svc.base_url.endswith("/v1")
        with pytest.raises(APIConnectionError):
            svc.me()
