"""The README's backtest example runs against a real svc."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import ROOT, SRC, Keys, SvcProcess

README = ROOT / "clients" / "python" / "README.md"


def test_examples_backtest_runs_on_an_exported_season(server: SvcProcess, keys: Keys) -> None:
    env = {**os.environ, "SVC_API_KEY": keys.admin, "SVC_BASE_URL": server.base_url, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "clients/python/examples/backtest.py"), "--league", "wc", "--season", "2022"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # 172 goals of the 2022 World Cup in the real archive; Argentina and France at the top.
    assert re.search(r"wc 2022: 172 goals in \d+ games, \d+ lead changes", done.stdout), done.stdout
    assert "ARG" in done.stdout and "FRA" in done.stdout


def test_the_readme_backtest_snippet_runs(server: SvcProcess, keys: Keys) -> None:
    text = README.read_text()
    snippet = text.split("## Export and a backtest", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    env = {**os.environ, "SVC_API_KEY": keys.admin, "SVC_BASE_URL": server.base_url, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", snippet], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[('FRA', 16), ('ARG', 15)"), done.stdout
