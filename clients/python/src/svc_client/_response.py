"""Raw responses: ``svc.with_raw_response.<resource>.<method>(...)`` answers with the HTTP
response of the call (status, headers, request id) and ``parse()`` for what the method returns.

The wrappers mark the call with a header the client strips before sending: every method
already passes ``extra_headers`` down to the request, so no method needs a second signature
for its raw form.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Awaitable, Callable, Dict, Generic, Optional, TypeVar, cast

import httpx

from ._base import RAW_RESPONSE_HEADER

if TYPE_CHECKING:
    from typing_extensions import ParamSpec

    P = ParamSpec("P")

__all__ = ["APIResponse"]

T = TypeVar("T")
R = TypeVar("R")

_UNPARSED = object()


class APIResponse(Generic[T]):
    """The HTTP answer of one call (a 2xx: errors raise as usual).

    Attributes:
        http_response: the :class:`httpx.Response` itself (body already read).
        elapsed: seconds from sending the request to its answer (the last attempt).
    """

    def __init__(self, http_response: httpx.Response, parse: Callable[[httpx.Response], T], elapsed: float) -> None:
        self.http_response = http_response
        self.elapsed = elapsed
        self._parse = parse
        self._parsed: object = _UNPARSED

    @property
    def status_code(self) -> int:
        return self.http_response.status_code

    @property
    def headers(self) -> httpx.Headers:
        """Case-insensitive: ``headers["x-request-id"]``, ``headers["ratelimit-remaining"]``."""
        return self.http_response.headers

    @property
    def request_id(self) -> Optional[str]:
        """The ``X-Request-Id`` svc gave this request: quote it when asking for help."""
        value = self.http_response.headers.get("x-request-id")
        return value if isinstance(value, str) else None

    def parse(self) -> T:
        """What the method returns without ``with_raw_response`` (a record, a list, a page)."""
        if self._parsed is _UNPARSED:
            self._parsed = self._parse(self.http_response)
        return cast(T, self._parsed)

    def __repr__(self) -> str:
        return f"<APIResponse {self.http_response.request.method} {self.http_response.request.url.path} {self.status_code} request_id={self.request_id}>"


def _mark_raw(kwargs: Dict[str, object]) -> None:
    headers = kwargs.get("extra_headers")
    marked: Dict[str, str] = dict(cast(Dict[str, str], headers)) if headers else {}
    marked[RAW_RESPONSE_HEADER] = "true"
    kwargs["extra_headers"] = marked


def to_raw_response_wrapper(func: Callable[P, R]) -> Callable[P, APIResponse[R]]:
    """``func`` answering with its :class:`APIResponse` instead of its value."""

    @functools.wraps(func)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> APIResponse[R]:
        _mark_raw(kwargs)
        return cast(APIResponse[R], func(*args, **kwargs))

    return wrapped


def async_to_raw_response_wrapper(func: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[APIResponse[R]]]:
    """The same for the asyncio client's methods (coroutines and awaitable list requests)."""

    @functools.wraps(func)
    async def wrapped(*args: P.args, **kwargs: P.kwargs) -> APIResponse[R]:
        _mark_raw(kwargs)
        return cast(APIResponse[R], await func(*args, **kwargs))

    return wrapped
