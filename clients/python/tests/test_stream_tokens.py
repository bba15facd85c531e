"""Stream tokens against a real svc, in both clients: minted narrowed, refused when wider than the key or out of range."""
from __future__ import annotations

import asyncio
import time
from datetime import datetime

import pytest

from conftest import Keys, SvcProcess
from svc_client import AsyncSvc, AuthenticationError, BadRequestError, PermissionDeniedError, Svc


def test_tokens_are_minted_narrowed_and_refused_when_wider_or_out_of_range(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.live, base_url=server.base_url, max_retries=0) as svc:
        before = time.time()
        token = svc.stream.tokens.create(ttl_s=120, games=["soccer_1203"])
        assert token["token"].startswith("sst_")
        assert token["games"] == ["soccer_1203"] and token["sports"] is None and token["leagues"] is None
        expires = datetime.fromisoformat(token["expires_at"].replace("Z", "+00:00")).timestamp()
        assert before + 110 <= expires <= time.time() + 130
        assert svc.stream.tokens.create()["games"] is None
        with pytest.raises(BadRequestError) as bad:
            svc.stream.tokens.create(ttl_s=59)
        assert bad.value.param == "ttl_s"
        with pytest.raises(BadRequestError):
            svc.stream.tokens.create(sports=["curling"])
    # A token is not a key: the REST API refuses it.
    with Svc(api_key=token["token"], base_url=server.base_url, max_retries=0) as as_token:
        with pytest.raises(AuthenticationError):
            as_token.me()
    basketball_only = server.create_key("py-bb-live", "live", sports="basketball")
    with Svc(api_key=basketball_only, base_url=server.base_url, max_retries=0) as bb:
        with pytest.raises(PermissionDeniedError) as wider:
            bb.stream.tokens.create(sports=["soccer"])
        assert wider.value.code == "sport_not_in_scope"


def test_the_async_client_mints_tokens_too(server: SvcProcess, keys: Keys) -> None:
    async def main() -> None:
        async with AsyncSvc(api_key=keys.live, base_url=server.base_url, max_retries=0) as svc:
            token = await svc.stream.tokens.create(leagues=["wc"], ttl_s=60)
            assert token["token"].startswith("sst_") and token["leagues"] == ["wc"]

    asyncio.run(main())
