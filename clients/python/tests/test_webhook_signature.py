"""verify_webhook against the cross-language vectors in packages/schema/test-vectors."""
from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

from conftest import VECTORS
from svc_client import SchemaMismatchError, WebhookVerificationError, generate_test_header, verify_webhook
from svc_client.types import Event, StreamEvent

WEBHOOK_VECTORS: List[Dict[str, Any]] = json.loads((VECTORS / "webhooks.json").read_text())["vectors"]
EVENT_VECTORS: Dict[str, Any] = json.loads((VECTORS / "events.json").read_text())


def test_the_vectors_cover_every_rule() -> None:
    reasons = {v["reason"] for v in WEBHOOK_VECTORS}
    assert {None, "signature_mismatch", "missing_signature", "missing_timestamp", "timestamp_out_of_tolerance", "malformed", "missing_header"} <= reasons
    assert any(v["header"].count("v1=") == 2 and v["valid"] for v in WEBHOOK_VECTORS), "a rotation sample"


@pytest.mark.parametrize("vector", WEBHOOK_VECTORS, ids=[v["name"] for v in WEBHOOK_VECTORS])
@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_webhook_vector(vector: Dict[str, Any], as_bytes: bool) -> None:
    payload = vector["body"].encode("utf-8") if as_bytes else vector["body"]
    args = (payload, vector["header"], vector["secret"], vector["tolerance_s"])
    if vector["valid"]:
        event = verify_webhook(*args, now=vector["now"])
        assert event == json.loads(vector["body"])
    else:
        with pytest.raises(WebhookVerificationError) as info:
            verify_webhook(*args, now=vector["now"])
        assert info.value.reason == vector["reason"]


def test_the_default_tolerance_is_300_seconds() -> None:
    valid = next(v for v in WEBHOOK_VECTORS if v["name"] == "valid")
    t = int(valid["header"].split(",")[0][2:])
    verify_webhook(valid["body"], valid["header"], valid["secret"], now=t + 300)
    with pytest.raises(WebhookVerificationError, match="timestamp_out_of_tolerance"):
        verify_webhook(valid["body"], valid["header"], valid["secret"], now=t + 301)


def test_generate_test_header_signs_like_the_server() -> None:
    for v in (v for v in WEBHOOK_VECTORS if v["valid"] and v["header"].count("v1=") == 1):
        t = int(v["header"].split(",")[0][2:])
        assert generate_test_header(v["body"], v["secret"], timestamp=t) == v["header"]
    rotation = next(v for v in WEBHOOK_VECTORS if v["name"].startswith("valid, two v1"))
    old = next(v for v in WEBHOOK_VECTORS if v["name"] == "valid for the old secret during a rotation")
    t = int(rotation["header"].split(",")[0][2:])
    assert generate_test_header(rotation["body"], [rotation["secret"], old["secret"]], timestamp=t) == rotation["header"]


def test_a_signed_wire_event_round_trips_and_a_changed_byte_does_not() -> None:
    secret = "whsec_test_secret"
    for wire in EVENT_VECTORS["wire"]:
        body = json.dumps(wire, separators=(",", ":"))
        header = generate_test_header(body, secret)
        assert verify_webhook(body.encode(), header, secret) == wire
        with pytest.raises(WebhookVerificationError, match="signature_mismatch"):
            verify_webhook(body.replace('"points":1', '"points":2'), header, secret)


def test_an_authentic_event_of_another_schema_raises_schema_mismatch() -> None:
    body = json.dumps({**EVENT_VECTORS["wire"][0], "schema": "svc.event.v2"})
    with pytest.raises(SchemaMismatchError) as info:
        verify_webhook(body, generate_test_header(body, "whsec_x"), "whsec_x")
    assert info.value.schema == "svc.event.v2"


def test_a_signed_body_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(WebhookVerificationError, match="invalid_payload"):
        verify_webhook("[1]", generate_test_header("[1]", "whsec_x"), "whsec_x")


def test_the_typed_records_match_the_event_vectors() -> None:
    """StreamEvent is the wire form; Event the REST form; the wire form is a subset of REST."""
    for rest, wire in zip(EVENT_VECTORS["rest"], EVENT_VECTORS["wire"]):
        assert set(StreamEvent.__required_keys__) <= set(wire) <= set(StreamEvent.__required_keys__) | set(StreamEvent.__optional_keys__)
        assert set(Event.__required_keys__) <= set(rest) <= set(Event.__required_keys__) | set(Event.__optional_keys__)
        assert {k: rest[k] for k in wire} == wire
