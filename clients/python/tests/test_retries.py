"""Retries, Retry-After, timeouts and idempotency keys, against stub servers of the tests' own."""
from __future__ import annotations

import asyncio
from typing import List

import pytest

from conftest import free_port
from stubs import HttpStub, Step, error_body
from svc_client import (
    APIConnectionError,
    APITimeoutError,
    AsyncSvc,
    BadRequestError,
    InternalServerError,
    RateLimitError,
    Svc,
)
from svc_client.types import ReportInput

ME = {"data": {"id": "key_1", "name": "stub", "environment": "sandbox", "plan": "pro", "products": ["live"], "sports": None, "leagues": None, "rate_limit": {"limit": 1000, "window_s": 60}, "stream_connections": {"limit": 25}}}
REPORTED = {"data": [{"id": "rpt_1", "event_id": "evt_000000000001", "tier": "provisional"}]}
KEY = "svc_test_" + "s" * 32
REPORT: ReportInput = {"game_id": "soccer_1", "team": "ARG", "points": 1}


def test_5xx_is_retried_with_one_idempotency_key_for_every_attempt() -> None:
    steps: List[Step] = [(503, {}, error_body("unavailable", "unavailable")), (500, {}, error_body("api_error", "internal")), (202, {}, REPORTED)]
    with HttpStub(steps) as stub, Svc(api_key=KEY, base_url=stub.base_url, max_retries=2) as svc:
        assert svc.reports.create(REPORT) == REPORTED["data"]
        assert len(stub.seen) == 3
        keys = {s.headers.get("idempotency-key") for s in stub.seen}
        assert len(keys) == 1 and None not in keys
        assert {s.body for s in stub.seen} == {b'{"game_id":"soccer_1","team":"ARG","points":1}'}
        assert stub.seen[0].headers["authorization"] == f"Bearer {KEY}"
        # Backoff: each retry waited before coming back.
        assert stub.seen[1].at > stub.seen[0].at and stub.seen[2].at > stub.seen[1].at


def test_each_post_gets_its_own_key_and_a_given_key_is_sent_as_is() -> None:
    with HttpStub([(202, {}, REPORTED)]) as stub, Svc(api_key=KEY, base_url=stub.base_url) as svc:
        svc.reports.create(REPORT)
        svc.reports.create(REPORT)
        svc.reports.create(REPORT, idempotency_key="my-key-1")
        svc.me()
        keys = [s.headers.get("idempotency-key") for s in stub.seen]
        assert keys[0] and keys[1] and keys[0] != keys[1]
        assert keys[2] == "my-key-1" and keys[3] is None


def test_a_dropped_connection_is_retried_with_the_same_key() -> None:
    with HttpStub(["drop", (202, {}, REPORTED)]) as stub, Svc(api_key=KEY, base_url=stub.base_url) as svc:
        assert svc.reports.create(REPORT)[0]["id"] == "rpt_1"
        assert len(stub.seen) == 2 and stub.seen[0].headers["idempotency-key"] == stub.seen[1].headers["idempotency-key"]


def test_retry_after_is_honoured() -> None:
    steps: List[Step] = [(429, {"Retry-After": "1"}, error_body("rate_limit_error", "rate_limited")), (200, {}, ME)]
    with HttpStub(steps) as stub, Svc(api_key=KEY, base_url=stub.base_url) as svc:
        assert svc.me()["plan"] == "pro"
        assert len(stub.seen) == 2
        assert stub.seen[1].at - stub.seen[0].at >= 1.0


def test_429_after_the_last_retry_is_a_rate_limit_error_with_retry_after() -> None:
    steps: List[Step] = [(429, {"Retry-After": "7"}, error_body("rate_limit_error", "rate_limited"))]
    with HttpStub(steps) as stub, Svc(api_key=KEY, base_url=stub.base_url, max_retries=0) as svc:
        with pytest.raises(RateLimitError) as info:
            svc.me()
        assert info.value.retry_after == 7.0 and info.value.status == 429 and info.value.code == "rate_limited"
        assert len(stub.seen) == 1


def test_408_and_5xx_are_retried_until_max_retries_then_raised() -> None:
    steps: List[Step] = [(408, {}, error_body("invalid_request", "timeout")), (502, {}, b"bad gateway")]
    with HttpStub(steps) as stub, Svc(api_key=KEY, base_url=stub.base_url, max_retries=2) as svc:
        with pytest.raises(InternalServerError) as info:
            svc.me()
        assert info.value.status == 502 and len(stub.seen) == 3


def test_a_4xx_is_not_retried() -> None:
    with HttpStub([(400, {}, error_body("invalid_request", "invalid_parameter", param="limit"))]) as stub, Svc(api_key=KEY, base_url=stub.base_url) as svc:
        with pytest.raises(BadRequestError) as info:
            svc.teams.list(limit=1)
        assert info.value.param == "limit" and len(stub.seen) == 1


def test_a_slow_answer_times_out_after_retries() -> None:
    # 1 s a try: time for the second try's new connection to reach the stub on a loaded machine.
    with HttpStub([("sleep", 3.0)]) as stub, Svc(api_key=KEY, base_url=stub.base_url, timeout=1.0, max_retries=1) as svc:
        with pytest.raises(APITimeoutError):
            svc.me()
        assert len(stub.seen) == 2


def test_no_server_is_a_connection_error() -> None:
    with Svc(api_key=KEY, base_url=f"http://127.0.0.1:{free_port()}", max_retries=1) as svc:
        with pytest.raises(APIConnectionError) as info:
            svc.me()
        assert not isinstance(info.value, APITimeoutError)


def test_async_retries_keep_the_idempotency_key_and_honour_retry_after() -> None:
    steps: List[Step] = ["drop", (429, {"Retry-After": "1"}, error_body("rate_limit_error", "rate_limited")), (202, {}, REPORTED)]

    async def main(base_url: str) -> None:
        async with AsyncSvc(api_key=KEY, base_url=base_url) as svc:
            assert (await svc.reports.create(REPORT))[0]["tier"] == "provisional"

    with HttpStub(steps) as stub:
        asyncio.run(main(stub.base_url))
        assert len(stub.seen) == 3
        assert len({s.headers["idempotency-key"] for s in stub.seen}) == 1
        assert stub.seen[2].at - stub.seen[1].at >= 1.0


def test_async_timeout() -> None:
    async def main(base_url: str) -> None:
        async with AsyncSvc(api_key=KEY, base_url=base_url, timeout=0.3, max_retries=0) as svc:
            with pytest.raises(APITimeoutError):
                await svc.me()

    with HttpStub([("sleep", 2.0)]) as stub:
        asyncio.run(main(stub.base_url))
        assert len(stub.seen) == 1
