"""Writes the blocking client from the asyncio one: ``src/svc_client/_client.py`` from
``src/svc_client/_async_client.py``.

    python3 clients/python/scripts/unasync.py             # rewrite _client.py
    python3 clients/python/scripts/unasync.py --stdout    # print it instead

The two clients differ only in how they wait, so one is written by hand and the other derived
from it: ``async`` before ``def``, ``with`` and ``for`` and every ``await`` are dropped, and the
names in ``RENAMES`` are replaced, in code, docstrings and comments alike; imports are sorted
again after renaming. What cannot be renamed (a list's first page fetched at once, or when
awaited) lives in pairs of small functions outside the generated module (``first_page`` /
``async_first_page``). ``tests/test_generated.py`` fails when ``_client.py`` is not what this
script writes.
"""
from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path
from typing import List, Tuple

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "svc_client"
SOURCE = PACKAGE / "_async_client.py"
TARGET = PACKAGE / "_client.py"

RENAMES = {
    "AsyncSvc": "Svc",
    "AsyncSvcWithRawResponse": "SvcWithRawResponse",
    "AsyncStream": "Stream",
    "AsyncPageRequest": "SyncPage",
    "AsyncChangeFollower": "ChangeFollower",
    "AsyncExportIterator": "ExportIterator",
    "__aiter__": "__iter__",
    "AsyncPage": "SyncPage",
    "async_first_page": "first_page",
    "async_to_raw_response_wrapper": "to_raw_response_wrapper",
    "AsyncClient": "Client",
    "AsyncIterator": "Iterator",
    "StopAsyncIteration": "StopIteration",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "aclose": "close",
    "aread": "read",
    "aiter_bytes": "iter_bytes",
}
# In code only: the source uses asyncio for nothing but sleep.
CODE_RENAMES = {**RENAMES, "asyncio": "time"}

DOCSTRING = '"""The blocking client, :class:`Svc`.\n\nWritten by ``scripts/unasync.py`` from ``_async_client.py``: edit that file, then run the script.\n"""'

_SINGLE_LINE_IMPORT = re.compile(r"^from (\S+) import ([\w, ]+)$", re.MULTILINE)
_IMPORT_BLOCK = re.compile(r"^(?:import \w+\n)+", re.MULTILINE)
_PROSE_NAMES = re.compile(r"\b(" + "|".join(sorted(RENAMES, key=len, reverse=True)) + r")\b")
_PROSE_KEYWORDS = re.compile(r"\basync (?=def\b|with\b|for\b)|\bawait ")


def _prose(text: str) -> str:
    return _PROSE_NAMES.sub(lambda m: RENAMES[m.group(1)], _PROSE_KEYWORDS.sub("", text))


def generate() -> str:
    source = SOURCE.read_text()
    line_starts = [0]
    for line in source.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))

    def offset(position: Tuple[int, int]) -> int:
        return line_starts[position[0] - 1] + position[1]

    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    first = next(t for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING))
    edits: List[Tuple[int, int, str]] = []
    for i, token in enumerate(tokens):
        start, end = offset(token.start), offset(token.end)
        if token is first and token.type == tokenize.STRING:
            edits.append((start, end, DOCSTRING))
        elif token.type == tokenize.NAME and token.string in ("async", "await"):
            following = tokens[i + 1]
            if token.string == "await" or following.string in ("def", "with", "for"):
                edits.append((start, offset(following.start), ""))
        elif token.type == tokenize.NAME and token.string in CODE_RENAMES:
            edits.append((start, end, CODE_RENAMES[token.string]))
        elif token.type in (tokenize.STRING, tokenize.COMMENT):
            edits.append((start, end, _prose(token.string)))
    for start, end, text in reversed(edits):
        source = source[:start] + text + source[end:]
    # Two asyncio names can become one (AsyncPage and AsyncPageRequest are both SyncPage), and
    # `import time` does not sort where `import asyncio` did.
    source = _SINGLE_LINE_IMPORT.sub(lambda m: f"from {m.group(1)} import {', '.join(sorted(set(m.group(2).split(', '))))}", source)
    return _IMPORT_BLOCK.sub(lambda m: "".join(sorted(m.group(0).splitlines(keepends=True))), source)


def main(argv: List[str]) -> int:
    text = generate()
    if "--stdout" in argv:
        sys.stdout.write(text)
    else:
        TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
