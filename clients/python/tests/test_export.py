"""export(): typed records streamed from a real svc, resumed with `after` when the connection
drops (a proxy of the test's own cuts the first answer in the middle of a record)."""
from __future__ import annotations

import asyncio
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Tuple
from urllib.parse import parse_qsl, urlsplit

import httpx

from conftest import Keys, SvcProcess
from svc_client import AsyncSvc, Svc


class CuttingProxy:
    """Forwards to svc; the first `cuts` answers stop after `keep` of their bytes, mid-record."""

    def __init__(self, upstream: str, cuts: int = 1, keep: float = 0.5) -> None:
        self.upstream = upstream
        self.cuts = cuts
        self.keep = keep
        self.queries: List[Dict[str, str]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                n = len(proxy.queries)
                proxy.queries.append(dict(parse_qsl(urlsplit(self.path).query)))
                headers = {"authorization": self.headers["Authorization"], "accept-encoding": "identity"}
                answer = httpx.get(proxy.upstream + self.path, headers=headers, timeout=30)
                body = answer.content
                self.send_response(answer.status_code)
                self.send_header("Content-Type", answer.headers.get("content-type", "application/json"))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if n < proxy.cuts and answer.status_code == 200:
                    cut = int(len(body) * proxy.keep)
                    while body[cut - 1 : cut] == b"\n":  # make sure the cut is inside a record
                        cut -= 1
                    self.wfile.write(body[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "CuttingProxy":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def rest_events_of_season(svc: Svc, league: str, season: str) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for competition in svc.competitions.list(league=league, season=season, status="final"):
        out.extend(dict(e) for e in svc.games.events("soccer_" + competition["id"].split("_")[-1]))
    return out


def test_export_events_are_the_rest_records(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        exported: List[Dict[str, Any]] = [dict(e) for e in svc.export(league="wc", season="2014")]
        assert exported and all(e["schema"] == "svc.event.v1" and e["tier"] == "confirmed" for e in exported)
        assert sorted(exported, key=lambda e: str(e["id"])) == sorted(rest_events_of_season(svc, "wc", "2014"), key=lambda e: str(e["id"]))
        competitions = list(svc.export(league="wc", season="2014", entity="competitions"))
        assert len(competitions) == 64 and competitions[0]["id"].startswith("soccer_wc_")


def test_a_dropped_export_resumes_after_the_last_record(server: SvcProcess, keys: Keys) -> None:
    with Svc(api_key=keys.admin, base_url=server.base_url) as direct:
        whole = list(direct.export(league="wc", season="2022"))
        plays = list(direct.export(league="wc", season="2022", entity="plays"))
    with CuttingProxy(server.base_url, cuts=2) as proxy, Svc(api_key=keys.admin, base_url=proxy.base_url) as svc:
        resumed = list(svc.export(league="wc", season="2022"))
        assert resumed == whole
        assert len(proxy.queries) == 3
        assert "after" not in proxy.queries[0]
        first_cut = proxy.queries[1]["after"]
        assert first_cut.startswith("evt_") and first_cut in {e["id"] for e in whole}
        assert proxy.queries[2]["after"] > first_cut
    with CuttingProxy(server.base_url, cuts=1, keep=0.3) as proxy, Svc(api_key=keys.admin, base_url=proxy.base_url) as svc:
        assert list(svc.export(league="wc", season="2022", entity="plays")) == plays
        competition, seq = proxy.queries[1]["after"].rsplit(":", 1)
        assert competition.startswith("soccer_wc_") and seq.isdigit()


def test_async_export_resumes_too(server: SvcProcess, keys: Keys) -> None:
    async def main(base_url: str) -> Tuple[List[Any], List[Any]]:
        async with AsyncSvc(api_key=keys.admin, base_url=server.base_url) as direct, AsyncSvc(api_key=keys.admin, base_url=base_url) as svc:
            whole = [e async for e in direct.export(league="wc", season="2018", from_="2018-06-20", to="2018-07-01")]
            resumed = [e async for e in svc.export(league="wc", season="2018", from_="2018-06-20", to="2018-07-01")]
            return whole, resumed

    with CuttingProxy(server.base_url) as proxy:
        whole, resumed = asyncio.run(main(proxy.base_url))
        assert whole and resumed == whole
        assert all("2018-06-20" <= e["ts"] < "2018-07-01" for e in whole)
        assert len(proxy.queries) == 2 and proxy.queries[1]["from"] == "2018-06-20"




def _csv_value(record: Dict[str, Any], column: str) -> Any:
    value: Any = record
    for part in column.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def test_export_csv_is_the_records_as_rows(server: SvcProcess, keys: Keys) -> None:
    """format="csv": the bytes, read back with Python's own csv module, hold the records' values."""
    import csv
    import io
    import json

    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        by_entity: Dict[str, List[Dict[str, Any]]] = {
            "events": [dict(r) for r in svc.export(league="wc", season="2014", entity="events")],
            "plays": [dict(r) for r in svc.export(league="wc", season="2014", entity="plays")],
            "competitions": [dict(r) for r in svc.export(league="wc", season="2014", entity="competitions")],
        }
        files = {
            "events": b"".join(svc.export(league="wc", season="2014", entity="events", format="csv")),
            "plays": b"".join(svc.export(league="wc", season="2014", entity="plays", format="csv")),
            "competitions": b"".join(svc.export(league="wc", season="2014", entity="competitions", format="csv")),
        }
        for entity, records in by_entity.items():
            data = files[entity]
            rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
            header, body = rows[0], rows[1:]
            assert len(body) == len(records) > 0
            if entity == "events":
                assert "confidence.agreement" in header
            for record, row in zip(records, body):
                for column, cell in zip(header, row):
                    want = _csv_value(record, column)
                    if want is None:
                        assert cell == "", (column, cell)
                    elif isinstance(want, (dict, list)):
                        assert json.loads(cell) == want
                    elif isinstance(want, bool):
                        assert cell == ("true" if want else "false")
                    elif isinstance(want, (int, float)):
                        assert float(cell) == want
                    else:
                        assert cell == want


def test_export_parquet_bytes_are_the_servers_file(server: SvcProcess, keys: Keys) -> None:
    """format="parquet": the client hands over the server's file as is (DuckDB reads it in the server's tests)."""

    async def main() -> bytes:
        async with AsyncSvc(api_key=keys.admin, base_url=server.base_url) as svc:
            return b"".join([chunk async for chunk in svc.export(league="wc", season="2014", entity="plays", format="parquet")])

    via_client = asyncio.run(main())
    direct = httpx.get(
        f"{server.base_url}/v1/export",
        params={"league": "wc", "season": "2014", "entity": "plays", "format": "parquet"},
        headers={"Authorization": f"Bearer {keys.admin}"},
    )
    assert direct.headers["content-type"] == "application/vnd.apache.parquet"
    assert via_client[:4] == b"PAR1" and via_client[-4:] == b"PAR1"
    assert via_client == direct.content


def test_games_with_tz(server: SvcProcess, keys: Keys) -> None:
    """tz= makes date the zone's day; an unknown zone is a 400 naming tz."""
    from svc_client import BadRequestError

    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        page = svc.games.list(date="2022-12-18", tz="Asia/Tokyo")
        utc = svc.games.list(date="2022-12-18")
        # The final (15:00 UTC) is on the 19th in Tokyo: the 18th there holds games before 15:00 UTC only.
        assert "soccer" not in {g["sport"] for g in page.data} or all(str(g["start_time"]) < "2022-12-18T15:00:00.000Z" for g in page.data)
        assert any(g["sport"] == "soccer" for g in utc.data)
        try:
            svc.competitions.list(date="today", tz="Mars/Olympus")
            raise AssertionError("an unknown zone was accepted")
        except BadRequestError as err:
            assert err.param == "tz" and err.code == "invalid_parameter"


def test_pandas_reads_the_csv_export_with_the_records_values(server: SvcProcess, keys: Keys) -> None:
    """pandas (Debian's python3-pandas) reads format="csv" into the records' values, nulls as NaN."""
    import io
    import math

    try:
        import pandas as pd  # type: ignore[import]  # Debian ships no stubs for it
    except ImportError:
        from conftest import unavailable

        unavailable("pandas is missing: apt-get install -y python3-pandas")
        return
    with Svc(api_key=keys.admin, base_url=server.base_url) as svc:
        records = [dict(e) for e in svc.export(league="wc", season="2018")]
        frame = pd.read_csv(io.BytesIO(b"".join(svc.export(league="wc", season="2018", format="csv"))), keep_default_na=False, na_values=[""])
    assert len(frame) == len(records) > 0
    assert str(frame["points"].dtype) == "int64" and str(frame["confidence.reporters"].dtype) == "int64"
    for i, record in enumerate(records):
        row = frame.iloc[i]
        assert row["id"] == record["id"] and row["team"] == record["team"] and int(row["points"]) == record["points"]
        confidence = record["confidence"]
        assert isinstance(confidence, dict) and float(row["confidence.agreement"]) == confidence["agreement"]
        assert pd.Timestamp(row["ts"]) == pd.Timestamp(record["ts"])
        clock = record.get("clock")
        assert (isinstance(row["clock"], float) and math.isnan(row["clock"])) if clock is None else row["clock"] == clock
