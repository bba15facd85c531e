"""Fixtures: a real svc process (started once per run) and the keys the tests use.

The server is the compiled `svc serve` (`node --conditions=svc-compiled
packages/server/dist/main.js serve`, built here first when it is missing or stale, as `npm
run build` does) on a free port with a temporary data dir, the simulator off and a bootstrap key. Without `node` or when it cannot
start, the tests that need it are skipped, except under CI, where they fail.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "clients" / "python" / "src"
VECTORS = ROOT / "packages" / "schema" / "test-vectors"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

BOOTSTRAP_KEY = "svc_test_PyClientBootstrap0123456789abcdefXYZ"
IN_CI = bool(os.environ.get("CI"))


_PORT_RESERVATIONS = Path(tempfile.gettempdir()) / "svc-test-ports"
_LOWEST_PORT = 10_000
_RESERVATION_TTL_S = 30 * 60


def _ephemeral_low() -> int:
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
        return low if low > _LOWEST_PORT + 1000 else 32_768
    except (OSError, ValueError, IndexError):
        return 32_768


def _reserve(port: int) -> bool:
    file = _PORT_RESERVATIONS / str(port)
    try:
        os.close(os.open(file, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        pass
    try:
        if time.time() - file.stat().st_mtime < _RESERVATION_TTL_S:
            return False
        file.unlink(missing_ok=True)
        os.close(os.open(file, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except OSError:
        return False


def free_port() -> int:
    """A port below the kernel's ephemeral range, reserved across the suite's processes.

    A port from binding port 0 can be handed to another test's listener or outgoing connection
    before svc listens on it (a stub in another shard then answered svc's /healthz); the scheme is
    the TypeScript tests' own (packages/server/test/ports.ts, docs/testing.md "Ports").
    """
    _PORT_RESERVATIONS.mkdir(parents=True, exist_ok=True)
    high = _ephemeral_low()
    for _ in range(1000):
        port = random.randrange(_LOWEST_PORT, high)
        if not _reserve(port):
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port between {_LOWEST_PORT} and {high}")


def unavailable(reason: str) -> None:
    """A missing service fails under CI and skips elsewhere."""
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


_built = False


def svc_command(node: str) -> List[str]:
    """The compiled `svc`, built once per run (an incremental tsc build is a no-op when fresh)."""
    global _built
    # Under the repository's vitest run the build is current already (its global setup made it).
    if not _built and not os.environ.get("SVC_TEST_COMPILED"):
        tsc = str(ROOT / "node_modules" / "typescript" / "bin" / "tsc")
        for project in ("packages/schema/tsconfig.build.json", "packages/server/tsconfig.build.json"):
            done = subprocess.run([node, tsc, "-p", project], cwd=ROOT, capture_output=True, timeout=300)
            if done.returncode != 0:
                raise RuntimeError(f"building {project} failed: {done.stdout.decode(errors='replace')}")
        _built = True
    return [node, "--conditions=svc-compiled", "packages/server/dist/main.js"]


@dataclass
class SvcProcess:
    """A real svc serving one data dir on one port; can be killed and started again."""

    data_dir: str
    port: int
    log_path: str
    proc: Optional[subprocess.Popen[bytes]] = None
    extra_env: Dict[str, str] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> Dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                "SVC_DATA_DIR": self.data_dir,
                "SVC_PORT": str(self.port),
                "SVC_HOST": "127.0.0.1",
                "SVC_SIMULATOR": "off",
                "SVC_BOOTSTRAP_KEY": BOOTSTRAP_KEY,
                "SVC_WEBHOOK_ALLOW_PRIVATE": "on",
                "SVC_LOG_LEVEL": "warn",
                "SVC_DATABASE_URL": "",
                "SVC_REDIS_URL": "",
            }
        )
        env.update(self.extra_env)
        return env

    def start(self, timeout: float = 120.0) -> None:
        node = shutil.which("node")
        if node is None:
            unavailable("node is not installed: cannot start svc")
            return
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [*svc_command(node), "serve"],
            cwd=ROOT,
            env=self.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                unavailable(f"svc exited with {self.proc.returncode}:\n{Path(self.log_path).read_text(errors='replace')[-3000:]}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        unavailable(f"svc did not answer /healthz within {timeout} s:\n{Path(self.log_path).read_text(errors='replace')[-3000:]}")

    def kill(self) -> None:
        """SIGKILL: no drain, no goodbye to stream clients."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.proc = None

    def cli(self, *args: str) -> str:
        node = shutil.which("node") or "node"
        done = subprocess.run(
            [*svc_command(node), *args],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"svc {' '.join(args)} failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
        return done.stdout.decode()

    def create_key(self, name: str, products: str, plan: str = "internal", sports: Optional[str] = None) -> str:
        args = ["keys", "create", "--name", name, "--plan", plan, "--products", products, "--json"]
        if sports:
            args += ["--sports", sports]
        out = self.cli(*args)
        line = [l for l in out.splitlines() if l.startswith("{")][-1]
        key = json.loads(line)["key"]
        assert isinstance(key, str)
        return key

    def clone(self, tmp_root: str) -> "SvcProcess":
        """Another svc on a copy of this one's database (SQLite online backup), keys included."""
        data_dir = tempfile.mkdtemp(prefix="svc-py-clone-", dir=tmp_root)
        src = sqlite3.connect(os.path.join(self.data_dir, "svc.db"))
        dst = sqlite3.connect(os.path.join(data_dir, "svc.db"))
        with dst:
            src.backup(dst)
        src.close()
        dst.close()
        for name in os.listdir(self.data_dir):
            path = os.path.join(self.data_dir, name)
            if os.path.isfile(path) and not name.startswith("svc.db"):
                shutil.copy(path, data_dir)
        return SvcProcess(data_dir=data_dir, port=free_port(), log_path=os.path.join(data_dir, "svc.log"))


@dataclass
class Keys:
    admin: str
    reporters: List[str]
    live: str
    basketball: str
    free: str


@pytest.fixture(scope="session")
def tmp_root() -> Iterator[str]:
    root = tempfile.mkdtemp(prefix="svc-py-tests-")
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def server(tmp_root: str) -> Iterator[SvcProcess]:
    data_dir = tempfile.mkdtemp(prefix="svc-py-data-", dir=tmp_root)
    # A database with the archive imported already (the vitest run's template) spares the
    # server its import; without one it imports the archive itself on its first start.
    archive = os.environ.get("SVC_TEST_ARCHIVE_DB")
    if archive:
        shutil.copyfile(archive, os.path.join(data_dir, "svc.db"))
    svc = SvcProcess(data_dir=data_dir, port=free_port(), log_path=os.path.join(tmp_root, "svc.log"))
    try:
        svc.start()
        yield svc
    finally:
        svc.kill()


@pytest.fixture(scope="session")
def keys(server: SvcProcess) -> Keys:
    """Keys made with the `svc keys create --json` CLI, in parallel."""
    specs = {
        "r1": ("report", "internal", None),
        "r2": ("report", "internal", None),
        "r3": ("report", "internal", None),
        "live": ("live", "internal", None),
        "basketball": ("live,archive", "internal", "basketball"),
        "free": ("live", "free", None),
    }
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(server.create_key, f"py-{name}", products, plan, sports) for name, (products, plan, sports) in specs.items()}
        made = {name: f.result() for name, f in futures.items()}
    return Keys(
        admin=BOOTSTRAP_KEY,
        reporters=[made["r1"], made["r2"], made["r3"]],
        live=made["live"],
        basketball=made["basketball"],
        free=made["free"],
    )


@pytest.fixture(scope="session")
def today_games(server: SvcProcess) -> List[Dict[str, object]]:
    """Today's team-sport games that take crowd reports (each test takes its own)."""
    response = httpx.get(
        f"{server.base_url}/v1/games",
        params={"date": "today", "limit": "1000"},
        headers={"Authorization": f"Bearer {BOOTSTRAP_KEY}"},
    )
    response.raise_for_status()
    games = [g for g in response.json()["data"] if g["eligibility"]["reports"]]
    assert len(games) >= 6, "the archive import creates today's games"
    return games


class GamePool:
    """Hands each test scores of its own: a (game, side) slot, so consensus on one never joins
    another test's candidate. The archive creates only a few of today's games."""

    def __init__(self, games: List[Dict[str, object]]) -> None:
        self._slots = [(g, role) for role in ("home", "away") for g in games]

    def take(self, sport: Optional[str] = None) -> Tuple[Dict[str, object], str]:
        if sport is None:
            # Any sport will do: take from the one with the most slots left, so the tests that need
            # a given sport (basketball's points, a whole game) still find one, whatever the order.
            counts: Dict[object, int] = {}
            for g, _ in self._slots:
                counts[g["sport"]] = counts.get(g["sport"], 0) + 1
            if counts:
                sport = str(max(counts, key=lambda s: counts[s]))
        for i, (g, role) in enumerate(self._slots):
            if sport is None or g["sport"] == sport:
                return self._slots.pop(i)
        raise AssertionError(f"no {sport or 'team-sport'} game slot left for this run")

    def take_game(self, sport: str) -> Dict[str, object]:
        """A game with both sides free."""
        for g, _ in list(self._slots):
            if g["sport"] == sport and sum(1 for x, _ in self._slots if x is g) == 2:
                self._slots = [(x, r) for x, r in self._slots if x is not g]
                return g
        raise AssertionError(f"no whole {sport} game left for this run")


@pytest.fixture(scope="session")
def game_pool(today_games: List[Dict[str, object]]) -> GamePool:
    return GamePool(today_games)


def team_code(game: Dict[str, object], role: str = "home") -> str:
    competitors = game["competitors"]
    assert isinstance(competitors, list)
    for c in competitors:
        if c["role"] == role:
            return str(c["entity_id"]).split(":")[-1]
    raise AssertionError(f"no {role} competitor")
