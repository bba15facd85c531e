"""The ``svc_client`` logger, and ``SVC_LOG`` to turn it on without touching logging config.

A call is one INFO line (method, path, status, duration, request id, and the retries it took);
each attempt that was retried is a DEBUG line. No line carries a header or a body: not the API
key, nor a webhook secret (secrets travel in bodies).
"""
from __future__ import annotations

import logging
import os
from typing import Mapping, Optional

logger = logging.getLogger("svc_client")

_LEVELS: Mapping[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "off": logging.CRITICAL + 1,
}

_env_handler: Optional[logging.Handler] = None


def setup_logging_from_env() -> None:
    """Applies ``SVC_LOG`` (``debug``, ``info``, ``warn``, ``error`` or ``off``): sets the
    logger's level and, unless it is ``off``, writes its lines to stderr. Without ``SVC_LOG`` the
    application's own logging configuration decides, as for any library."""
    global _env_handler
    value = os.environ.get("SVC_LOG", "").strip().lower()
    level = _LEVELS.get(value)
    if level is None:
        if value:
            logger.warning("SVC_LOG=%s is not a log level (debug, info, warn, error, off); ignored", value)
        return
    logger.setLevel(level)
    if level > logging.CRITICAL or _env_handler in logger.handlers:
        return
    _env_handler = logging.StreamHandler()
    _env_handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger.addHandler(_env_handler)

