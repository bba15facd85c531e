"""The generated modules are what their generators write now: ``types.py`` from packages/schema,
``_client.py`` (blocking) from ``_async_client.py`` (asyncio)."""
from __future__ import annotations

import difflib
import shutil
import subprocess
import sys

from conftest import ROOT, SRC, unavailable

PACKAGE = SRC / "svc_client"


def assert_same(path_in_repo: str, checked_in: str, generated: str, regenerate: str) -> None:
    if checked_in != generated:
        diff = "".join(difflib.unified_diff(checked_in.splitlines(True), generated.splitlines(True), f"{path_in_repo} (checked in)", f"{path_in_repo} (generated)", n=1))
        raise AssertionError(f"{path_in_repo} differs from what its generator writes; run `{regenerate}`:\n{diff[:6000]}")


def test_types_py_is_generated_from_the_schema() -> None:
    node = shutil.which("node")
    if node is None:
        unavailable("node is not installed: cannot run the types generator")
        return
    script = "clients/python/scripts/generate_types.ts"
    done = subprocess.run([node, "--import", "tsx", script, "--stdout"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert_same("clients/python/src/svc_client/types.py", (PACKAGE / "types.py").read_text(), done.stdout, f"node --import tsx {script}")


def test_the_blocking_client_is_generated_from_the_asyncio_one() -> None:
    script = "clients/python/scripts/unasync.py"
    done = subprocess.run([sys.executable, script, "--stdout"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert_same("clients/python/src/svc_client/_client.py", (PACKAGE / "_client.py").read_text(), done.stdout, f"python3 {script}")
    assert "await " not in done.stdout and "async " not in done.stdout and "Async" not in done.stdout
