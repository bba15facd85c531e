"""What the blocking and the asyncio clients share: configuration, request shaping, the retry
policy and the decoding of answers. No I/O happens here."""
from __future__ import annotations

import json
import os
import random
import uuid
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple, Union
from urllib.parse import quote, urlencode

import httpx

from ._errors import APIError, SvcError, error_for_status, parse_retry_after
from ._version import __version__

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 2
#: Stream: svc sends a heartbeat after 5 s of silence; twice that without a frame is a dead link.
DEFAULT_HEARTBEAT_TIMEOUT = 10.0

# Backoff between attempts: 0.5 s, 1 s, 2 s, ... capped, minus up to 25 % jitter so that
# clients cut off together do not come back together.
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
# A Retry-After longer than this is not waited out inside a call: the error surfaces instead.
MAX_RETRY_AFTER = 60.0

RETRYABLE_STATUSES = frozenset({408, 429})


class NotGiven:
    """The type of :data:`NOT_GIVEN`: "leave this field as it is", distinct from ``None`` (null)."""

    _instance: Optional["NotGiven"] = None

    def __new__(cls) -> "NotGiven":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = NotGiven()

Params = Mapping[str, Union[str, int, None]]


def resolve_config(api_key: Optional[str], base_url: Optional[str]) -> Tuple[str, str]:
    key = api_key if api_key is not None else os.environ.get("SVC_API_KEY")
    if not key:
        raise SvcError("No API key: pass api_key=... or set SVC_API_KEY.")
    url = base_url if base_url is not None else (os.environ.get("SVC_BASE_URL") or DEFAULT_BASE_URL)
    url = url.rstrip("/")
    # The base URL is the origin; forgive a copied ".../v1".
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    return key, url


def path_segment(value: str) -> str:
    """An id as one URL path segment (team ids keep their colons)."""
    if not isinstance(value, str) or value == "":
        raise ValueError(f"an id must be a non-empty string, got {value!r}")
    return quote(value, safe=":")


def clean_params(params: Params) -> Dict[str, str]:
    """Drops unset parameters; the API refuses unknown ones, and "None" must not become a value."""
    return {k: str(v) for k, v in params.items() if v is not None}


def csv(value: Union[str, Iterable[str], None]) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    joined = ",".join(value)
    return joined or None


def default_headers(api_key: str) -> Dict[str, str]:
    return {
        "Authorization": f"Bearer {api_key}",
        "Accept": "application/json",
        "User-Agent": f"svc-client-python/{__version__}",
    }


def new_idempotency_key() -> str:
    return f"svc-py-{uuid.uuid4()}"


def encode_body(body: object) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def should_retry(response: httpx.Response) -> bool:
    """Connection-level trouble is handled by the caller; this judges an answer: 408, 429, 5xx,
    and the 409 ``idempotency_key_in_use`` of a retry that overtook its own first attempt."""
    status = response.status_code
    if status in RETRYABLE_STATUSES or status >= 500:
        return True
    if status == 409:
        body = decode_json(response)
        error = body.get("error") if isinstance(body, dict) else None
        return isinstance(error, dict) and error.get("code") == "idempotency_key_in_use"
    return False


def retry_delay(retries_done: int, headers: Optional[Mapping[str, str]] = None) -> float:
    """Seconds to wait before the next attempt: the server's ``Retry-After`` when it gives a
    usable one, else exponential backoff with jitter."""
    if headers is not None:
        retry_after = parse_retry_after(headers.get("retry-after"))
        if retry_after is not None and retry_after <= MAX_RETRY_AFTER:
            return retry_after
    delay = min(INITIAL_RETRY_DELAY * (2.0 ** retries_done), MAX_RETRY_DELAY)
    return delay * (1.0 - 0.25 * random.random())


def decode_json(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content) if response.content else None
    except ValueError:
        return None


def raise_for_answer(response: httpx.Response) -> None:
    """Raises the error class of a non-2xx answer."""
    if 200 <= response.status_code < 300:
        return
    raise error_for_status(response.status_code, decode_json(response), dict(response.headers))


def data_of(response: httpx.Response) -> Any:
    """The ``data`` of a ``{"data": ...}`` envelope."""
    body = decode_json(response)
    if not isinstance(body, dict) or "data" not in body:
        raise APIError(
            "The answer is not a svc envelope ({\"data\": ...}).",
            status=response.status_code,
            headers=dict(response.headers),
            request_id=response.headers.get("x-request-id"),
            body=body,
        )
    return body["data"]


def page_of(response: httpx.Response) -> Tuple[Any, Optional[str]]:
    """``(data, next_cursor)`` of a list envelope."""
    body = decode_json(response)
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise APIError(
            "The answer is not a svc list ({\"data\": [...], \"next_cursor\": ...}).",
            status=response.status_code,
            headers=dict(response.headers),
            request_id=response.headers.get("x-request-id"),
            body=body,
        )
    cursor = body.get("next_cursor")
    return body["data"], cursor if isinstance(cursor, str) and cursor else None


def stream_url(base_url: str, params: Params) -> str:
    """The WebSocket URL of ``/v1/stream`` derived from the HTTP base URL."""
    if base_url.startswith("https://"):
        origin = "wss://" + base_url[len("https://"):]
    elif base_url.startswith("http://"):
        origin = "ws://" + base_url[len("http://"):]
    else:
        origin = base_url
    query = urlencode(clean_params(params), safe=",")
    return f"{origin}/v1/stream" + (f"?{query}" if query else "")


def export_resume_id(entity: str, record: Mapping[str, object]) -> Optional[str]:
    """The ``after`` value that resumes an export after ``record``."""
    if entity == "plays":
        competition, seq = record.get("competition_id"), record.get("seq")
        return f"{competition}:{seq}" if isinstance(competition, str) and isinstance(seq, int) else None
    rid = record.get("id")
    return rid if isinstance(rid, str) else None


class NdjsonSplitter:
    """Cuts a byte stream into complete lines; a line counts only once its newline arrived."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        self._buffer += chunk
        if b"\n" not in chunk:
            return []
        *lines, self._buffer = self._buffer.split(b"\n")
        return [line for line in lines if line.strip()]

    @property
    def pending(self) -> bool:
        """True when bytes of an unfinished line are buffered (the stream was cut mid-record)."""
        return bool(self._buffer.strip())
