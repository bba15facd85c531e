"""Webhook signatures: verify what svc sends, and sign test payloads for your own tests.

svc signs every delivery with ``X-SVC-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]``, each
``v1`` the lowercase hex HMAC-SHA256 of ``"<t>.<raw body>"`` keyed by an endpoint secret (the
``whsec_…`` string as given, UTF-8). During a secret rotation the old and the new secret both
sign, so the header carries two ``v1`` and a receiver holding either secret accepts it.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from typing import List, Optional, Sequence, Tuple, Union, cast

from ._errors import SchemaMismatchError, WebhookVerificationError
from .types import EVENT_SCHEMA, WebhookEvent

__all__ = ["SIGNATURE_HEADER", "DEFAULT_TOLERANCE", "verify_webhook", "verify_signature", "generate_test_header", "compute_signature"]

#: The request header that carries the signature.
SIGNATURE_HEADER = "X-SVC-Signature"
#: Maximum age (and future skew) of a signature, in seconds.
DEFAULT_TOLERANCE = 300

# A real header is ~150 bytes (two v1 during a rotation); refusing far larger ones early keeps a
# hostile header from costing more than a length check.
_MAX_HEADER_LENGTH = 4096
_DIGEST_HEX_LENGTH = 64
_UNIX_SECONDS = re.compile(r"^\d{1,12}$")

Payload = Union[bytes, bytearray, memoryview, str]


def _as_bytes(payload: Payload) -> bytes:
    return payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)


def compute_signature(secret: str, payload: Payload, timestamp: int) -> str:
    """Lowercase hex HMAC-SHA256 of ``"<timestamp>.<payload>"`` keyed by ``secret``."""
    mac = hmac.new(secret.encode("utf-8"), digestmod=hashlib.sha256)
    mac.update(f"{timestamp}.".encode("ascii"))
    mac.update(_as_bytes(payload))
    return mac.hexdigest()


def generate_test_header(payload: Payload, secret: Union[str, Sequence[str]], *, timestamp: Optional[int] = None) -> str:
    """A signature header for ``payload``, exactly as svc would send it.

    For your own receiver's tests: sign a body with the endpoint secret (or several secrets, new
    first, to imitate a rotation) and feed it to the code that calls :func:`verify_webhook`.
    ``timestamp`` defaults to now (unix seconds).
    """
    secrets = [secret] if isinstance(secret, str) else list(secret)
    if not secrets:
        raise ValueError("generate_test_header needs at least one secret")
    t = int(time.time()) if timestamp is None else timestamp
    if t < 0:
        raise ValueError(f"timestamp must be whole unix seconds, got {t}")
    return ",".join([f"t={t}"] + [f"v1={compute_signature(s, payload, t)}" for s in secrets])


def _parse_header(header: str) -> Optional[Tuple[Optional[int], Sequence[str]]]:
    """``(t, [v1, ...])``, or ``None`` when the header is not ``key=value`` pairs with a numeric t."""
    if len(header) > _MAX_HEADER_LENGTH:
        return None
    t: Optional[int] = None
    v1: List[str] = []
    for raw in header.split(","):
        part = raw.strip()
        if part == "":  # a stray empty element (a trailing comma) carries no claim
            continue
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or key == "":
            return None
        if key == "t":
            # Two timestamps would let an attacker pick which one is checked.
            if t is not None or not _UNIX_SECONDS.match(value):
                return None
            t = int(value)
        elif key == "v1":
            v1.append(value)
        # Other schemes (a future v2) are ignored so newer senders stay readable.
    return t, v1


def verify_signature(
    payload: Payload,
    header: Optional[str],
    secret: str,
    tolerance: float = DEFAULT_TOLERANCE,
    *,
    now: Optional[float] = None,
) -> int:
    """Checks the signature header only; returns the signed timestamp or raises
    :class:`WebhookVerificationError` (see its ``reason``)."""
    if not isinstance(header, str) or header.strip() == "":
        raise WebhookVerificationError("missing_header")
    parsed = _parse_header(header)
    if parsed is None:
        raise WebhookVerificationError("malformed")
    t, candidates = parsed
    if t is None:
        raise WebhookVerificationError("missing_timestamp")
    if not candidates:
        raise WebhookVerificationError("missing_signature")
    # Whole seconds on both sides: the sender floors t, so the boundary is exact (300 s passes).
    current = int(time.time()) if now is None else int(now)
    # Past and future alike; written as not(<=) so a NaN tolerance refuses.
    if not (abs(current - t) <= tolerance):
        raise WebhookVerificationError("timestamp_out_of_tolerance")
    expected = compute_signature(secret, payload, t).encode("ascii")
    matched = False
    # Every candidate is compared, in constant time, so timing does not reveal which matched.
    for candidate in candidates:
        given = candidate.lower().encode("utf-8", "replace")
        if len(given) == _DIGEST_HEX_LENGTH and hmac.compare_digest(expected, given):
            matched = True
    if not matched:
        raise WebhookVerificationError("signature_mismatch")
    return t


def verify_webhook(
    payload: Payload,
    header: Optional[str],
    secret: str,
    tolerance: float = DEFAULT_TOLERANCE,
    *,
    now: Optional[float] = None,
) -> WebhookEvent:
    """Verifies a webhook delivery and returns its event.

    Args:
        payload: the raw request body, exactly as received (bytes, or the str it decodes to).
            Never a re-serialised JSON object: any byte changed breaks the signature.
        header: the ``X-SVC-Signature`` header value.
        secret: the endpoint's ``whsec_…`` secret.
        tolerance: maximum age (and future skew) of the signature in seconds (default 300).
        now: the current unix time, for tests (default the system clock).

    Raises:
        WebhookVerificationError: missing or malformed header, missing ``t`` or ``v1``, a
            timestamp over ``tolerance``, a digest that matches no ``v1``, or a body that is not
            a JSON object.
        SchemaMismatchError: authentic, but the event's ``schema`` is not ``svc.event.v1``.
    """
    verify_signature(payload, header, secret, tolerance, now=now)
    try:
        event = json.loads(_as_bytes(payload))
    except ValueError:
        raise WebhookVerificationError("invalid_payload") from None
    if not isinstance(event, dict):
        raise WebhookVerificationError("invalid_payload")
    if event.get("schema") != EVENT_SCHEMA:
        raise SchemaMismatchError(event.get("schema"), EVENT_SCHEMA, event)
    # Decoded JSON whose signature and schema were just checked: its shape is the server's contract.
    return cast(WebhookEvent, event)
