"""Every Python example of clients/python/README.md and of the repository's README.md runs
against a real svc and passes ``mypy --strict``."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from conftest import ROOT, SRC, Keys, SvcProcess

READMES = [ROOT / "clients" / "python" / "README.md", ROOT / "README.md"]
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def snippets() -> List[Tuple[str, str]]:
    """(name, code) of every ```python block, named by file and heading."""
    found: List[Tuple[str, str]] = []
    for readme in READMES:
        text = readme.read_text()
        for match in FENCE.finditer(text):
            heading = re.findall(r"^#+ (.+)$", text[: match.start()], re.MULTILINE)
            found.append((f"{readme.relative_to(ROOT)} / {heading[-1] if heading else 'top'} #{len(found)}", match.group(1)))
    return found


SNIPPETS = snippets()

# What some examples must print (stdout, or stderr for log lines): proof they did their job.
EXPECTED: Dict[str, List[str]] = {
    "Ids and records": ["Lusail", "ARG", "Lionel Messi"],
    "asyncio": ["soccer_wc_21728", "France"],
    "Standings, box scores, leaders": ["Group C 1 team:wc:ARG 6", "team:wc:ARG [4, 2]", "1 player:wc:kylian-mbappe 8", "2022 7 [('goal', 3), ('penalty_goal', 4)]"],
    "Per-call options": ["Argentina"],
    "Raw responses": ["200 req_", "final", "wc_2022"],
    "Logging": ["INFO:svc_client:GET /v1/me 200 "],
    "Errors, retries, idempotency": ["404 not_found resource_not_found"],
    "Your own httpx client": ["wc_2022"],
    "Live stream": ["stopped; resume later with since ="],
    "Stream tokens for a web page": ["token for the page: sst_ expires "],
    "Reporters (operators)": [" suspended", "404 resource_not_found"],
    "Sandbox replays": ["scheduled", "provisional ARG 1", "confirmed FRA 3"],
    "Export and a backtest": ["[('FRA', 16), ('ARG', 15)"],
    "Webhooks": ["verified test ", "True 200 "],
    "Python client": ["soccer_wc_21728", "req_"],
}


def test_the_readmes_have_python_examples() -> None:
    names = [name for name, _ in SNIPPETS]
    for heading in EXPECTED:
        assert any(f"/ {heading} #" in n for n in names), f"no example under {heading!r}"


@pytest.mark.parametrize("name,code", SNIPPETS, ids=[name for name, _ in SNIPPETS])
def test_the_example_runs(name: str, code: str, server: SvcProcess, keys: Keys) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SVC_LOG"}
    env.update({"SVC_API_KEY": keys.admin, "SVC_BASE_URL": server.base_url, "PYTHONPATH": str(SRC)})
    if "/ Sandbox replays #" in name:
        # A replay's game joins its key's lists and streams: a key of its own keeps the others' as they are.
        env["SVC_API_KEY"] = server.create_key("py-readme-replays", "live")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{name}:\n{done.stderr}"
    heading = name.split(" / ", 1)[1].rsplit(" #", 1)[0]
    for expected in EXPECTED.get(heading, []):
        assert expected in done.stdout + done.stderr, f"{name}: {expected!r} not in:\n{done.stdout}{done.stderr}"


def test_the_examples_pass_mypy_strict() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for i, (_, code) in enumerate(SNIPPETS):
            Path(tmp, f"example_{i}.py").write_text(code)
        done = subprocess.run(
            # A cache of its own (beside the one of the client's mypy run, which runs at the same
            # time): typeshed and httpx are checked once, not on every run (docs/testing.md).
            [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.9", "--cache-dir", str(ROOT / ".mypy_cache" / "readme-examples"), tmp],
            env={**os.environ, "MYPYPATH": str(SRC)},
            capture_output=True,
            text=True,
            timeout=300,
        )
    names = "\n".join(f"example_{i}.py: {name}" for i, (name, _) in enumerate(SNIPPETS))
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n{names}"
