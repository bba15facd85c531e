"""svc-client: the Python client of svc, the sports scoring data service.

Blocking::

    from svc_client import Svc
    with Svc() as svc:                      # SVC_API_KEY, SVC_BASE_URL from the environment
        print(svc.me()["plan"])
        for competition in svc.competitions.list(league="wc", season="2022"):
            print(competition["id"])
        with svc.stream(sport="soccer") as events:
            for event in events:
                print(event["type"], event["tier"], event["team"], event["points"])

asyncio::

    from svc_client import AsyncSvc
    async with AsyncSvc() as svc:
        async for event in svc.stream(sport="soccer"):
            ...

Webhooks::

    from svc_client import verify_webhook
    event = verify_webhook(raw_body, request.headers["X-SVC-Signature"], secret)
"""
from ._async_client import AsyncChangeFollower, AsyncSvc
from ._base import NOT_GIVEN, AsyncExportIterator, ExportIterator, NotGiven
from ._client import ChangeFollower, Svc
from ._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    SchemaMismatchError,
    SvcError,
    WebhookVerificationError,
)
from ._response import APIResponse
from ._stream import AsyncStream, Stream
from ._version import __version__
from .pagination import AsyncPage, AsyncPageRequest, SyncPage
from .types import EVENT_SCHEMA, PLAY_SCHEMA
from .webhooks import SIGNATURE_HEADER, generate_test_header, verify_signature, verify_webhook

__all__ = [
    "__version__",
    "Svc",
    "AsyncSvc",
    "Stream",
    "AsyncStream",
    "ChangeFollower",
    "AsyncChangeFollower",
    "ExportIterator",
    "AsyncExportIterator",
    "APIResponse",
    "SyncPage",
    "AsyncPage",
    "AsyncPageRequest",
    "NOT_GIVEN",
    "NotGiven",
    "EVENT_SCHEMA",
    "PLAY_SCHEMA",
    "SIGNATURE_HEADER",
    "verify_webhook",
    "verify_signature",
    "generate_test_header",
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
