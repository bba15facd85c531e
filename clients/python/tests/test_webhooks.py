"""Webhooks end to end: the real svc delivers to a receiver of the test's own, the client
verifies the real header; the endpoint API; idempotent writes against the real server."""
from __future__ import annotations

import json
import socket
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List

import httpx
import pytest

from conftest import GamePool, Keys, SvcProcess, team_code
from stubs import HttpStub, Seen, Step, error_body
from svc_client import BadRequestError, ConflictError, NotFoundError, Svc, WebhookVerificationError, verify_webhook


class Receiver(HttpStub):
    """A webhook receiver: answers every POST with 200 and keeps what it got (an HttpStub that always says ok)."""

    def __init__(self) -> None:
        super().__init__(steps=[(200, {}, b"ok")])

    @property
    def url(self) -> str:
        return f"{self.base_url}/hook"

    @property
    def deliveries(self) -> List[Seen]:
        return [r for r in self.seen if r.method == "POST"]

    def __enter__(self) -> "Receiver":
        super().__enter__()
        return self

    def wait_for(self, event_id: str, count: int = 1, timeout: float = 30.0) -> List[Seen]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [d for d in self.deliveries if d.headers.get("x-svc-event-id") == event_id]
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no delivery of {event_id} within {timeout} s; got {[d.headers.get('x-svc-event-id') for d in self.deliveries]}")


def confirm_one(server: SvcProcess, keys: Keys, game: Dict[str, object], role: str) -> str:
    event_id = ""
    for key in keys.reporters:
        with Svc(api_key=key, base_url=server.base_url) as reporter:
            result = reporter.reports.create({"game_id": str(game["id"]), "team": team_code(game, role), "points": 1})
            event_id = result[0]["event_id"] or ""
    assert result[0]["tier"] == "confirmed"
    return event_id


def test_a_header_made_by_the_server_verifies_and_tampering_does_not(server: SvcProcess, keys: Keys, game_pool: GamePool) -> None:
    (game, role), (game2, role2) = game_pool.take(), game_pool.take()
    with Receiver() as receiver, Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        endpoint = svc.webhooks.create(url=receiver.url, sports=sorted({str(game["sport"]), str(game2["sport"])}), description="py client test")
        assert endpoint["secret"].startswith("whsec_") and endpoint["status"] == "enabled"
        try:
            event_id = confirm_one(server, keys, game, role)
            delivery = receiver.wait_for(event_id)[0]
            header = delivery.headers["x-svc-signature"]
            event = verify_webhook(delivery.body, header, endpoint["secret"])
            assert event["id"] == event_id and event["tier"] == "confirmed" and event["schema"] == "svc.event.v1"
            assert verify_webhook(delivery.body.decode("utf-8"), header, endpoint["secret"]) == event
            t = int(header.split(",")[0][2:])
            with pytest.raises(WebhookVerificationError, match="signature_mismatch"):
                verify_webhook(delivery.body.replace(b'"points":1', b'"points":7'), header, endpoint["secret"])
            with pytest.raises(WebhookVerificationError, match="missing_signature"):
                verify_webhook(delivery.body, f"t={t}", endpoint["secret"])
            with pytest.raises(WebhookVerificationError, match="timestamp_out_of_tolerance"):
                verify_webhook(delivery.body, header, endpoint["secret"], now=t + 301)
            with pytest.raises(WebhookVerificationError, match="signature_mismatch"):
                verify_webhook(delivery.body, header, "whsec_not_the_secret")

            # Rotation: the next delivery is signed by both secrets; either verifies.
            rotated = svc.webhooks.rotate_secret(endpoint["id"])
            assert rotated["secret"] != endpoint["secret"] and rotated["previous_secret_expires_at"]
            second = confirm_one(server, keys, game2, role2)
            header2 = receiver.wait_for(second)[0].headers["x-svc-signature"]
            body2 = receiver.wait_for(second)[0].body
            assert header2.count("v1=") == 2
            assert verify_webhook(body2, header2, rotated["secret"])["id"] == second
            assert verify_webhook(body2, header2, endpoint["secret"])["id"] == second

            # The delivery log, a replay, and the endpoint's life cycle.
            deliveries = list(svc.webhooks.deliveries(endpoint["id"]))
            mine = [d for d in deliveries if d["event_id"] == event_id]
            assert mine and mine[0]["endpoint_id"] == endpoint["id"]
            assert list(svc.webhooks.deliveries(endpoint["id"], status="delivered"))
            detail = svc.webhooks.delivery(endpoint["id"], mine[0]["id"])
            assert detail["attempt_log"] and detail["attempt_log"][0]["status_code"] == 200
            replay = svc.webhooks.replay(endpoint["id"], delivery_id=mine[0]["id"])
            assert replay["replayed"] == 1
            replayed = receiver.wait_for(event_id, count=2)[1]
            assert verify_webhook(replayed.body, replayed.headers["x-svc-signature"], rotated["secret"])["id"] == event_id
            now = datetime.now(timezone.utc)
            ranged = svc.webhooks.replay(endpoint["id"], from_=(now - timedelta(hours=1)).isoformat(), to=(now + timedelta(minutes=1)).isoformat())
            assert ranged["replayed"] >= 2 and len(ranged["delivery_ids"]) == ranged["replayed"]
            assert endpoint["id"] in {w["id"] for w in svc.webhooks.list()}
            updated = svc.webhooks.update(endpoint["id"], sports=None, description=None)
            assert updated["sports"] is None and updated["description"] is None
            assert svc.webhooks.get(endpoint["id"])["sports"] is None
            assert svc.webhooks.enable(endpoint["id"])["status"] == "enabled"
            assert isinstance(svc.notifications.list().data, list)
        finally:
            assert svc.webhooks.delete(endpoint["id"]) == {"id": endpoint["id"], "deleted": True}
        with pytest.raises(NotFoundError):
            svc.webhooks.get(endpoint["id"])


def test_a_test_send_from_the_real_server_reaches_the_receiver_signed(server: SvcProcess, keys: Keys) -> None:
    with Receiver() as receiver, Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        endpoint = svc.webhooks.create(url=receiver.url, description="py client test send")
        try:
            result = svc.webhooks.test(endpoint["id"])
            assert result["delivered"] is True and result["status_code"] == 200
            got = receiver.wait_for(result["event_id"])[0]
            assert got.headers["x-svc-topic"] == "event.test"
            payload = json.loads(got.body)
            assert payload["type"] == "test" and payload["schema"] == "svc.event.v1" and payload["id"] == result["event_id"]
            # verify_webhook checks the signature, then returns the signed event.
            assert verify_webhook(got.body, got.headers["x-svc-signature"], endpoint["secret"])["id"] == result["event_id"]
        finally:
            svc.webhooks.delete(endpoint["id"])


def test_webhooks_test_sends_a_signed_test_event() -> None:
    """POST /v1/webhooks/{id}/test, answered by a stub (the client method's request shape)."""
    answer = {"data": {"event_id": "evt_test_1", "delivery_id": "dlv_1", "status": "delivered", "status_code": 200}}
    with HttpStub([(200, {}, answer)]) as stub, Svc(api_key="svc_test_" + "t" * 32, base_url=stub.base_url) as svc:
        assert svc.webhooks.test("we_123") == answer["data"]
        assert stub.seen[0].method == "POST" and stub.seen[0].path == "/v1/webhooks/we_123/test"
        assert stub.seen[0].headers["idempotency-key"]


def test_a_retried_post_whose_first_answer_was_lost_is_not_doubled(server: SvcProcess, keys: Keys, game_pool: GamePool) -> None:
    """A proxy forwards the first POST to svc and drops svc's answer; the client retries with the
    same Idempotency-Key and svc replays the first answer instead of storing a second report."""
    game, role = game_pool.take("basketball")
    seen: List[Dict[str, str]] = []
    lost: List[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type", "idempotency-key")}
            seen.append({k.lower(): v for k, v in headers.items()})
            answer = httpx.post(server.base_url + self.path, content=body, headers=headers)
            if len(seen) == 1:
                lost.append(answer.content)
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.send_response(answer.status_code)
            for k in ("content-type", "idempotent-replayed"):
                if k in answer.headers:
                    self.send_header(k, answer.headers[k])
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    proxy.daemon_threads = True
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        with Svc(api_key=keys.reporters[1], base_url=f"http://127.0.0.1:{proxy.server_address[1]}") as svc:
            result = svc.reports.create({"game_id": str(game["id"]), "team": team_code(game, role), "points": 2})
        assert len(seen) == 2 and seen[0]["idempotency-key"] == seen[1]["idempotency-key"]
        assert result == json.loads(lost[0])["data"]
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_an_endpoints_min_probability_is_sent_kept_and_changed(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.live, base_url=server.base_url) as svc:
        created = svc.webhooks.create(url="https://93.184.215.14/hooks/py", min_probability=0.95)
        assert created["min_probability"] == 0.95
        assert svc.webhooks.get(created["id"])["min_probability"] == 0.95
        assert svc.webhooks.update(created["id"], min_probability=0.5)["min_probability"] == 0.5
        with pytest.raises(BadRequestError) as info:
            svc.webhooks.update(created["id"], min_probability=1.5)
        assert info.value.param == "min_probability"
        assert svc.webhooks.create(url="https://93.184.215.14/hooks/py2")["min_probability"] == 0
        svc.webhooks.delete(created["id"])


def test_the_same_idempotency_key_with_another_body_is_a_conflict(server: SvcProcess, keys: Keys, game_pool: GamePool) -> None:
    game, role = game_pool.take("basketball")
    with Svc(api_key=keys.reporters[2], base_url=server.base_url) as svc:
        first = svc.reports.create({"game_id": str(game["id"]), "team": team_code(game, role), "points": 3}, idempotency_key="py-idem-1")
        again = svc.reports.create({"game_id": str(game["id"]), "team": team_code(game, role), "points": 3}, idempotency_key="py-idem-1")
        assert again == first
        with pytest.raises(ConflictError) as info:
            svc.reports.create({"game_id": str(game["id"]), "team": team_code(game, role), "points": 2}, idempotency_key="py-idem-1")
        assert info.value.code == "idempotency_key_reused" and info.value.status == 409


def test_idempotency_key_in_use_is_retried() -> None:
    steps: List[Step] = [(409, {}, error_body("conflict", "idempotency_key_in_use")), (202, {}, {"data": [{"id": "rpt_1", "event_id": None, "tier": "provisional"}]})]
    with HttpStub(steps) as stub, Svc(api_key="svc_test_" + "i" * 32, base_url=stub.base_url) as svc:
        assert svc.reports.create({"game_id": "g", "team": "t", "points": 1})[0]["id"] == "rpt_1"
        assert len(stub.seen) == 2
