"""The Retry-After rule on the table both clients' tests read
(packages/client/test/fixtures/retry-after.json, described in the README beside it)."""
from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List, Optional

import pytest

import svc_client
from conftest import ROOT
from stubs import HttpStub, error_body, event
from svc_client import APIError, AsyncSvc, Svc
from svc_client._base import retry_wait

CASES: List[Dict[str, Any]] = json.loads((ROOT / "packages/client/test/fixtures/retry-after.json").read_text())
# Longer waits are checked on the decision alone; a stub server would make the run that slow.
WALL_CLOCK_LIMIT_S = 5.0
KEY = "svc_test_" + "a" * 32
ME = {"data": {"id": "key_1", "plan": "pro"}}


def first_answer(case: Dict[str, Any]) -> Any:
    headers = {} if case["retry_after"] is None else {"Retry-After": case["retry_after"]}
    return (case["status"], headers, error_body("rate_limit_error" if case["status"] == 429 else "api_error", "stub"))


@pytest.mark.parametrize("case", CASES, ids=[c["description"] for c in CASES])
def test_the_decision(case: Dict[str, Any]) -> None:
    for jitter in (0.0, 1.0):
        wait = retry_wait(case["status"], case["retry_after"], 0, case["max_retries"], jitter=jitter)
        if case["expect"] == "retry":
            assert wait is not None and wait >= case["min_wait_s"]
        else:
            assert wait is None


def check(case: Dict[str, Any], call: Any, stub: HttpStub) -> None:
    if case["expect"] == "retry":
        assert call()["id"] == "key_1"
        assert len(stub.seen) == 2
        gap = stub.seen[1].at - stub.seen[0].at
        # At least the larger of the two waits, and not their sum.
        assert case["min_wait_s"] - 0.01 <= gap < max(case["min_wait_s"], 0.5) + 0.75, gap
        return
    with pytest.raises(APIError) as info:
        call()
    assert type(info.value) is getattr(svc_client, case["error"])
    assert len(stub.seen) == 1
    retry_after: Optional[float] = getattr(info.value, "retry_after", None)
    if "retry_after_s" in case:
        assert retry_after == case["retry_after_s"]
    elif case["error"] == "RateLimitError":
        assert retry_after is not None and retry_after > 60


STUBBED = [c for c in CASES if c["min_wait_s"] <= WALL_CLOCK_LIMIT_S]


@pytest.mark.parametrize("case", STUBBED, ids=[c["description"] for c in STUBBED])
def test_the_blocking_client(case: Dict[str, Any]) -> None:
    with HttpStub([first_answer(case), (200, {}, ME)]) as stub, Svc(api_key=KEY, base_url=stub.base_url, max_retries=case["max_retries"]) as svc:
        check(case, svc.me, stub)


@pytest.mark.parametrize("case", STUBBED, ids=[c["description"] for c in STUBBED])
def test_the_asyncio_client(case: Dict[str, Any]) -> None:
    with HttpStub([first_answer(case), (200, {}, ME)]) as stub:

        def call() -> Any:
            async def main() -> Any:
                async with AsyncSvc(api_key=KEY, base_url=stub.base_url, max_retries=case["max_retries"]) as svc:
                    return await svc.me()

            return asyncio.run(main())

        check(case, call, stub)


def test_a_long_retry_after_on_the_last_allowed_retry_is_still_raised_at_once() -> None:
    """Retries left or not, a wait over 60 s is the caller's decision."""
    steps = [(503, {}, error_body("unavailable", "draining")), (429, {"Retry-After": "3600"}, error_body("rate_limit_error", "rate_limited")), (200, {}, ME)]
    with HttpStub(steps) as stub, Svc(api_key=KEY, base_url=stub.base_url, max_retries=5) as svc:
        with pytest.raises(svc_client.RateLimitError) as info:
            svc.me()
    assert info.value.retry_after == 3600 and len(stub.seen) == 2


def test_export_waits_out_too_many_exports_like_any_429() -> None:
    """The plan's concurrent exports are all running: export() waits Retry-After and retries;
    without retries it raises RateLimitError with the code and the wait."""
    busy: Any = (429, {"Retry-After": "1"}, error_body("rate_limit_error", "too_many_exports"))
    season: Any = (200, {}, (event(1) + "\n" + event(2) + "\n").encode())
    with HttpStub([busy, season]) as stub, Svc(api_key=KEY, base_url=stub.base_url, max_retries=2) as svc:
        records = list(svc.export(league="wc", season="2022"))
    assert [r["id"] for r in records] == ["evt_000000000001", "evt_000000000002"]
    assert len(stub.seen) == 2 and stub.seen[1].at - stub.seen[0].at >= 0.99
    with HttpStub([busy, season]) as stub, Svc(api_key=KEY, base_url=stub.base_url, max_retries=0) as svc:
        with pytest.raises(svc_client.RateLimitError) as info:
            list(svc.export(league="wc", season="2022"))
    assert info.value.code == "too_many_exports" and info.value.retry_after == 1 and len(stub.seen) == 1
