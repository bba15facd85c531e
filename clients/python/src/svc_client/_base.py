"""What the blocking and the asyncio clients share: configuration, per-call options, request
shaping, the retry policy, the log lines and the decoding of answers. No I/O happens here."""
from __future__ import annotations

import json
import os
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Dict, Generic, Iterable, Iterator, List, Mapping, Optional, Tuple, Type, TypeVar, Union, cast
from urllib.parse import quote, urlencode

import httpx

from ._errors import APIConnectionError, APIError, APITimeoutError, SvcError, error_for_status, parse_retry_after
from ._logs import logger, setup_logging_from_env
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

T = TypeVar("T")

#: Set by the ``with_raw_response`` wrappers in ``extra_headers``; removed before sending.
RAW_RESPONSE_HEADER = "X-Svc-Client-Raw-Response"


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
#: A call's ``timeout=``: seconds, ``None`` for no limit, or not given for the client's.
Timeout = Union[float, None, NotGiven]
#: A call's ``extra_headers=``.
Headers = Optional[Mapping[str, str]]


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


def backoff(retries_done: int, jitter: Optional[float] = None) -> float:
    """Seconds before retry ``retries_done`` (0-based) when the server names no time."""
    delay = min(INITIAL_RETRY_DELAY * (2.0 ** retries_done), MAX_RETRY_DELAY)
    return delay * (1.0 - 0.25 * (random.random() if jitter is None else jitter))


def is_retryable(status: int, body: object = None) -> bool:
    """408, 429 and 5xx, and the 409 ``idempotency_key_in_use`` of a retry that overtook its own
    first attempt (the first one's answer will be replayed once it is stored)."""
    if status in RETRYABLE_STATUSES or status >= 500:
        return True
    if status == 409:
        error = body.get("error") if isinstance(body, dict) else None
        return isinstance(error, dict) and error.get("code") == "idempotency_key_in_use"
    return False


def retry_wait(status: int, retry_after: Optional[str], retries_done: int, max_retries: int, *, body: object = None, jitter: Optional[float] = None) -> Optional[float]:
    """Seconds to wait before retrying an error answer, or ``None`` to raise it now.

    The rule both svc clients follow: a retryable status is retried while retries are left,
    after max(``Retry-After``, backoff); a ``Retry-After`` over 60 s is not waited out inside a
    call, so the error (``RateLimitError.retry_after`` for a 429) goes to the caller at once.
    """
    if not is_retryable(status, body) or retries_done >= max_retries:
        return None
    server_wait = parse_retry_after(retry_after)
    if server_wait is not None and server_wait > MAX_RETRY_AFTER:
        return None
    return max(server_wait or 0.0, backoff(retries_done, jitter))


def decode_json(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content) if response.content else None
    except ValueError:
        return None


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


def one(record: Type[T]) -> Callable[[httpx.Response], T]:
    """The parser of a ``{"data": record}`` answer."""
    # The API's records are plain JSON; the TypedDict is the server's contract for them.
    return lambda response: cast(T, data_of(response))


def whole(record: Type[T]) -> Callable[[httpx.Response], T]:
    """The parser of an answer that is the record itself (``GET /v1/standings``: tables and ``as_of``)."""
    # The API's records are plain JSON; the TypedDict is the server's contract for them.
    return lambda response: cast(T, decode_json(response))


def many(record: Type[T]) -> Callable[[httpx.Response], List[T]]:
    """The parser of a ``{"data": [record, ...]}`` answer (a batch write's results)."""
    return lambda response: cast(List[T], data_of(response))


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


@dataclass(frozen=True)
class RequestOptions:
    """The per-call keyword arguments every method takes, beside its own."""

    timeout: Timeout = NOT_GIVEN
    max_retries: Optional[int] = None
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    idempotency_key: Optional[str] = None

    @property
    def raw(self) -> bool:
        return RAW_RESPONSE_HEADER in self.extra_headers

    def without_raw(self) -> "RequestOptions":
        """The same options for the calls a raw answer leads to (a page's next pages)."""
        headers = {k: v for k, v in self.extra_headers.items() if k != RAW_RESPONSE_HEADER}
        return RequestOptions(self.timeout, self.max_retries, headers, self.idempotency_key)


def request_options(timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None, idempotency_key: Optional[str] = None) -> RequestOptions:
    if max_retries is not None and max_retries < 0:
        raise ValueError("max_retries must be >= 0")
    if idempotency_key is not None and not 0 < len(idempotency_key) <= 255:
        raise ValueError("idempotency_key must be 1 to 255 characters")
    return RequestOptions(timeout, max_retries, dict(extra_headers or {}), idempotency_key)


class Call:
    """One call through its attempts: the retry budget, the waits, and its log lines."""

    def __init__(self, request: httpx.Request, max_retries: int) -> None:
        self.request = request
        self.max_retries = max_retries
        self.retries = 0
        #: Seconds the last attempt took, until its answer's headers.
        self.elapsed = 0.0
        self._started = 0.0
        self._target = f"{request.method} {request.url.raw_path.decode('ascii', 'replace')}"

    def attempt(self) -> None:
        self._started = time.monotonic()

    def after_failure(self, exc: httpx.TransportError) -> float:
        """The wait before the next attempt after no answer came; raises when no retry is left."""
        self.elapsed = time.monotonic() - self._started
        outcome = f"failed {self.elapsed * 1000:.0f}ms: {type(exc).__name__}"
        if self.retries >= self.max_retries:
            logger.info("%s %s%s", self._target, outcome, self._retries_note())
            if isinstance(exc, httpx.TimeoutException):
                raise APITimeoutError(cause=exc) from exc
            raise APIConnectionError(f"Connection error: {exc}", cause=exc) from exc
        return self._retry(outcome, backoff(self.retries))

    def after_answer(self, response: httpx.Response) -> Optional[float]:
        """``None`` for a 2xx; else the wait before retrying it, or the answer's error raised.
        An error answer must have been read."""
        self.elapsed = time.monotonic() - self._started
        status = response.status_code
        outcome = f"{status} {self.elapsed * 1000:.0f}ms request_id={response.headers.get('x-request-id') or '-'}"
        if 200 <= status < 300:
            logger.info("%s %s%s", self._target, outcome, self._retries_note())
            return None
        body = decode_json(response)
        wait = retry_wait(status, response.headers.get("retry-after"), self.retries, self.max_retries, body=body)
        if wait is None:
            logger.info("%s %s%s", self._target, outcome, self._retries_note())
            raise error_for_status(status, body, dict(response.headers))
        return self._retry(outcome, wait)

    # One INFO line per call, its outcome; each attempt that is retried is a DEBUG line.
    def _retry(self, outcome: str, wait: float) -> float:
        self.retries += 1
        logger.debug("%s %s; retrying in %.2fs (retry %d of %d)", self._target, outcome, wait, self.retries, self.max_retries)
        return wait

    def _retries_note(self) -> str:
        return f" after {self.retries} {'retry' if self.retries == 1 else 'retries'}" if self.retries else ""


HttpClient = TypeVar("HttpClient", httpx.Client, httpx.AsyncClient)


class ClientBase(Generic[HttpClient]):
    """Configuration and request building, the same for :class:`Svc` and :class:`AsyncSvc`."""

    _http: HttpClient

    def __init__(self, api_key: Optional[str], base_url: Optional[str], timeout: float, max_retries: int) -> None:
        self.api_key, self.base_url = resolve_config(api_key, base_url)
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.timeout = timeout
        self.max_retries = max_retries
        self._headers = default_headers(self.api_key)
        setup_logging_from_env()

    def _call(self, method: str, path: str, params: Optional[Params], body: object, options: RequestOptions) -> Call:
        headers = dict(self._headers)
        content: Optional[bytes] = None
        if not isinstance(body, NotGiven):
            content = encode_body(body)
            headers["Content-Type"] = "application/json"
        if method == "POST":
            # One key for every attempt of this call: the server replays the first answer.
            headers["Idempotency-Key"] = options.idempotency_key or new_idempotency_key()
        headers.update(options.without_raw().extra_headers)
        timeout = self.timeout if isinstance(options.timeout, NotGiven) else options.timeout
        request = self._http.build_request(method, self.base_url + path, params=clean_params(params or {}), content=content, headers=headers, timeout=timeout)
        return Call(request, self.max_retries if options.max_retries is None else options.max_retries)


class ExportIterator(Iterator[T]):
    """What ``Svc.export()`` returns: the records (or a file's bytes), and once the first answer came
    in, ``changes_cursor``: the change feed's position for this export (``X-Changes-Cursor``).
    Follow ``svc.changes.follow(since=it.changes_cursor)`` after the last record and a copy built
    from the export stays exact (docs/changes.md)."""

    def __init__(self, start: Callable[[Callable[[Optional[str]], None]], Iterator[T]]) -> None:
        self.changes_cursor: Optional[str] = None
        self._records = start(self._first_cursor)

    def _first_cursor(self, cursor: Optional[str]) -> None:
        # The first answer's: a resumed export must not move it past records it never sent.
        if self.changes_cursor is None:
            self.changes_cursor = cursor

    def __iter__(self) -> "ExportIterator[T]":
        return self

    def __next__(self) -> T:
        return next(self._records)


class AsyncExportIterator(AsyncIterator[T]):
    """What ``AsyncSvc.export()`` returns: :class:`ExportIterator`'s asyncio twin."""

    def __init__(self, start: Callable[[Callable[[Optional[str]], None]], AsyncIterator[T]]) -> None:
        self.changes_cursor: Optional[str] = None
        self._records = start(self._first_cursor)

    def _first_cursor(self, cursor: Optional[str]) -> None:
        if self.changes_cursor is None:
            self.changes_cursor = cursor

    def __aiter__(self) -> "AsyncExportIterator[T]":
        return self

    async def __anext__(self) -> T:
        return await self._records.__anext__()
