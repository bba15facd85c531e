"""Error classes. Every failure the client raises is a :class:`SvcError`.

HTTP errors carry the API's error body (``{"error": {"type", "code", "message", "param"?,
"request_id"}}``) as attributes, one class per status as in the API reference.
"""
from __future__ import annotations

import email.utils
import time
from typing import Mapping, Optional, Type

__all__ = [
    "SvcError",
    "APIError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "RateLimitError",
    "InternalServerError",
    "APIConnectionError",
    "APITimeoutError",
    "SchemaMismatchError",
    "WebhookVerificationError",
]


class SvcError(Exception):
    """Base class of every error this library raises."""


class APIError(SvcError):
    """An error answer of the API, or a failure to get one (see :class:`APIConnectionError`).

    Attributes:
        status: HTTP status (``None`` when no answer arrived).
        type: the error ``type`` (``invalid_request``, ``authentication_error``, ...).
        code: the machine-readable ``code`` (``product_not_in_plan``, ``unknown_game``, ...).
        param: the request parameter at fault, when there is one.
        request_id: the ``request_id`` of the body, else the ``X-Request-Id`` header.
        headers: the response headers (lower-case names).
        body: the decoded JSON body, when it was JSON.
    """

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        type: Optional[str] = None,
        code: Optional[str] = None,
        param: Optional[str] = None,
        request_id: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        body: object = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.code = code
        self.param = param
        self.request_id = request_id
        self.headers: Mapping[str, str] = dict(headers) if headers is not None else {}
        self.body = body

    def __str__(self) -> str:
        parts = [self.message]
        details = [f"{k}={v}" for k, v in (("status", self.status), ("code", self.code), ("param", self.param), ("request_id", self.request_id)) if v is not None]
        if details:
            parts.append(f"({', '.join(details)})")
        return " ".join(parts)


class BadRequestError(APIError):
    """400 ``invalid_request``: a bad parameter or body; ``param`` names it."""


class AuthenticationError(APIError):
    """401: no key, an unknown or revoked key, or a key of the other environment."""


class PermissionDeniedError(APIError):
    """403: the key lacks the product (``product_not_in_plan``) or the sport/league (``sport_not_in_scope``)."""


class NotFoundError(APIError):
    """404: no such record."""


class ConflictError(APIError):
    """409: e.g. a report on a final game, or an ``Idempotency-Key`` reused with another body."""


class RateLimitError(APIError):
    """429, or a stream closed with 4029 (over the plan's stream connections).

    ``retry_after`` is the server's ``Retry-After`` in seconds, when it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        retry_after: Optional[float] = None,
        status: Optional[int] = 429,
        type: Optional[str] = "rate_limit_error",
        code: Optional[str] = None,
        param: Optional[str] = None,
        request_id: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        body: object = None,
    ) -> None:
        super().__init__(message, status=status, type=type, code=code, param=param, request_id=request_id, headers=headers, body=body)
        self.retry_after = retry_after


class InternalServerError(APIError):
    """A 5xx answer."""


class APIConnectionError(APIError):
    """No answer: the connection failed or broke (after the client's retries)."""

    def __init__(self, message: str = "Connection error.", *, cause: Optional[BaseException] = None) -> None:
        super().__init__(message)
        self.__cause__ = cause


class APITimeoutError(APIConnectionError):
    """The request took longer than the client's ``timeout`` (after the client's retries)."""

    def __init__(self, message: str = "Request timed out.", *, cause: Optional[BaseException] = None) -> None:
        super().__init__(message, cause=cause)


class SchemaMismatchError(SvcError):
    """An event carries a ``schema`` this client does not read (it reads ``svc.event.v1``).

    Attributes:
        schema: the schema the event declared (``None`` when it had none).
        expected: the schema this client supports.
        event: the offending record as received.
    """

    def __init__(self, schema: object, expected: str, event: object) -> None:
        super().__init__(f"event schema {schema!r} is not supported by this client (it reads {expected!r}); upgrade svc-client")
        self.schema = schema
        self.expected = expected
        self.event = event


class WebhookVerificationError(SvcError):
    """A webhook failed verification.

    ``reason`` is one of ``missing_header``, ``malformed``, ``missing_timestamp``,
    ``missing_signature``, ``timestamp_out_of_tolerance``, ``signature_mismatch``,
    ``invalid_payload`` (the signed body is not a JSON object).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"webhook signature verification failed: {reason}")
        self.reason = reason


_STATUS_CLASSES: Mapping[int, Type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
}


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds from a ``Retry-After`` value (delta-seconds or an HTTP date), else ``None``."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):  # not a date either (3.9 raises TypeError, later ValueError)
            return None
        seconds = parsed.timestamp() - (time.time() if now is None else now)
    if seconds != seconds or seconds < 0:  # NaN or in the past
        return 0.0 if seconds == seconds else None
    return seconds


def error_for_status(status: int, body: object, headers: Mapping[str, str]) -> APIError:
    """The error class for an HTTP error answer, filled from the API's error body."""
    err: Mapping[str, object] = {}
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            err = inner

    def text(name: str) -> Optional[str]:
        value = err.get(name)
        return value if isinstance(value, str) else None

    lower = {k.lower(): v for k, v in headers.items()}
    message = text("message") or f"HTTP {status}"
    request_id = text("request_id") or lower.get("x-request-id")
    if status == 429:
        return RateLimitError(
            message,
            retry_after=parse_retry_after(lower.get("retry-after")),
            status=status,
            type=text("type"),
            code=text("code"),
            param=text("param"),
            request_id=request_id,
            headers=lower,
            body=body,
        )
    cls = _STATUS_CLASSES.get(status) or (InternalServerError if status >= 500 else APIError)
    return cls(message, status=status, type=text("type"), code=text("code"), param=text("param"), request_id=request_id, headers=lower, body=body)
