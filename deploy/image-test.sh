#!/usr/bin/env bash
# Builds the svc image with podman and runs it as an operator would (docs/operations.md "The image"):
#   1. one container on SQLite with a named volume on /data: ready, healthy, not root, drained by
#      `podman stop` (exit 0), and after a restart the same database (the demo key of the first
#      start still answers);
#   2. two containers as a cluster on this machine's PostgreSQL and Redis (host network): each
#      answers, a report through one appears on the other's stream, `podman stop` drains both.
# Prints the image's size over its base and the time to ready. Exits non-zero on any failure.
#
#   deploy/image-test.sh            # makes the base stand-in first if it is missing (make-base-image.sh)
#
# Without podman (or debootstrap and runc for the stand-in) it is skipped with the command that
# installs them, unless CI is set: then it fails. .ci/run installs them and runs it after the suite.
# SVC_TEST_PG_URL and SVC_TEST_REDIS_URL name the servers (the test suite's defaults otherwise).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export CONTAINERS_CONF="$root/deploy/podman/containers.conf"
base=${SVC_IMAGE_BASE:-node:26-bookworm-slim}
image=${SVC_IMAGE:-localhost/svc:image-test}
pg_admin=${SVC_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}
redis_url=${SVC_TEST_REDIS_URL:-redis://127.0.0.1:6379}
run_id="$$-$(date +%s)"

missing=()
for tool in podman runc debootstrap curl psql; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  line="image test: needs ${missing[*]}: apt-get install -y podman runc debootstrap curl postgresql-client"
  if [ -n "${CI:-}" ]; then echo "$line (CI is set: required)" >&2; exit 1; fi
  echo "$line (skipped)" >&2
  exit 0
fi

say() { echo "image test: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
# podman without systemd reports that it cannot schedule health checks by timer: noise here (the
# check itself is run below with `podman healthcheck run`).
pm() { podman "$@" 2> >(grep -v 'systemd connection' >&2); }

containers=()
volume="svc-image-test-$run_id"
database="svc_image_test_${run_id//-/_}"
cleanup() {
  # -v: the anonymous volumes of VOLUME /data go with the containers.
  for c in "${containers[@]}"; do podman rm -f -v "$c" >/dev/null 2>&1 || true; done
  podman volume rm -f "$volume" >/dev/null 2>&1 || true
  psql "$pg_admin" -qc "drop database if exists $database with (force)" >/dev/null 2>&1 || true
}
trap cleanup EXIT

free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Polls /readyz on a port until 200; fails after $2 seconds or when the container exits.
wait_ready() {
  local port=$1 limit=$2 name=$3 started
  started=$(now)
  for _ in $(seq 1 $((limit * 4))); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ]; then return 0; fi
    [ "$(podman inspect --format '{{.State.Running}}' "$name")" = true ] || { podman logs "$name" >&2; fail "$name exited before it was ready"; }
    sleep 0.25
  done
  podman logs "$name" >&2
  fail "$name not ready within ${limit}s (since $started)"
}

# podman stop (SIGTERM, SIGKILL after 15 s): the container must exit 0 having logged its drain.
stop_drained() {
  local name=$1 started code
  started=$(now)
  pm stop --time 15 "$name" >/dev/null
  code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
  [ "$code" = 0 ] || { podman logs --tail 20 "$name" >&2; fail "$name exited $code on podman stop"; }
  podman logs "$name" 2>/dev/null | grep -q '"msg":"drained"' || fail "$name did not log its drain"
  say "$name: podman stop drained it, exit 0 in $(secs "$started" "$(now)") s"
}

# The base: the official image where a registry is reachable, else the local stand-in.
if ! podman image exists "$base"; then
  say "no $base here: making the local stand-in (deploy/make-base-image.sh)"
  deploy/make-base-image.sh
fi

say "building $image on $base"
started=$(now)
pm build --pull=never --format docker --build-arg "BASE=$base" -t "$image" -f Containerfile . >"${TMPDIR:-/tmp}/svc-image-build-$run_id.log" 2>&1 ||
  { tail -n 40 "${TMPDIR:-/tmp}/svc-image-build-$run_id.log" >&2; fail "podman build"; }
rm -f "${TMPDIR:-/tmp}/svc-image-build-$run_id.log"
build_s=$(secs "$started" "$(now)")
image_bytes=$(podman image inspect --format '{{.Size}}' "$image")
base_bytes=$(podman image inspect --format '{{.Size}}' "$base")
over_mb=$(awk -v i="$image_bytes" -v b="$base_bytes" 'BEGIN { printf "%.1f", (i - b) / 1e6 }')
say "built in $build_s s: $(awk -v i="$image_bytes" 'BEGIN { printf "%.0f", i / 1e6 }') MB, $over_mb MB over the base"

# --- 1. One node on SQLite, its data dir a named volume.
one="svc-image-one-$run_id"
containers+=("$one")
port=$(free_port)
started=$(now)
pm run -d --name "$one" --network host -e SVC_PORT="$port" -e SVC_SIMULATOR=off -v "$volume:/data" "$image" >/dev/null
wait_ready "$port" 120 "$one"
ready_first=$(secs "$started" "$(now)")
key=$(podman logs "$one" 2>&1 | grep -oE 'svc_test_[A-Za-z0-9]{32}' | head -n1)
[ -n "$key" ] || fail "no demo key in the banner"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $key" "http://127.0.0.1:$port/v1/me")" = 200 ] || fail "/v1/me with the demo key"
[ "$(podman exec "$one" id -u)" != 0 ] || fail "svc runs as root"
podman exec "$one" test -f /data/svc.db || fail "no /data/svc.db"
pm healthcheck run "$one" >/dev/null || fail "the HEALTHCHECK (/livez) fails"
say "$one: ready in $ready_first s (first start: archive imported), healthy, uid $(podman exec "$one" id -u)"
stop_drained "$one"
started=$(now)
pm start "$one" >/dev/null
wait_ready "$port" 60 "$one"
ready_again=$(secs "$started" "$(now)")
podman logs "$one" 2>&1 | grep -q 'sandbox demo key, kept in /data/demo-key' || fail "the restart did not find its demo key"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $key" "http://127.0.0.1:$port/v1/me")" = 200 ] || fail "the key of the first start does not answer after the restart"
say "$one: restarted on the same volume in $ready_again s, the first start's key answers"
stop_drained "$one"

# --- 2. Two nodes as a cluster on the host's PostgreSQL and Redis.
psql "$pg_admin" -qc "create database $database" || fail "cannot create database $database"
db_url=$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(u.toString())' "$pg_admin" "$database")
admin_key="svc_test_ImageTest${run_id//-/}ImageTest"
admin_key=${admin_key:0:41}
secret=$(node -e 'console.log(require("crypto").randomBytes(32).toString("hex"))')
ports=()
for n in a b; do
  name="svc-image-$n-$run_id"
  containers+=("$name")
  p=$(free_port)
  ports+=("$p")
  pm run -d --name "$name" --network host \
    -e SVC_PORT="$p" -e SVC_SIMULATOR=off -e SVC_DATABASE_URL="$db_url" -e SVC_REDIS_URL="$redis_url" \
    -e SVC_REDIS_PREFIX="svc-image-test-$run_id:" -e SVC_SECRET_KEY="$secret" -e SVC_BOOTSTRAP_KEY="$admin_key" \
    "$image" >/dev/null
  # The first node imports the archive into PostgreSQL; the second waits for it.
  started=$(now)
  wait_ready "$p" 180 "$name"
  say "$name: ready in $(secs "$started" "$(now)") s on PostgreSQL and Redis"
done
a="svc-image-a-$run_id"
b="svc-image-b-$run_id"
for p in "${ports[@]}"; do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $admin_key" "http://127.0.0.1:$p/v1/me")" = 200 ] || fail "/v1/me on port $p"
done
# A stream on B (server-sent events), then a report through A.
game=$(curl -sf -H "authorization: Bearer $admin_key" "http://127.0.0.1:${ports[0]}/v1/games?date=today&sport=basketball&limit=100" |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { const g = JSON.parse(s).data.find((x) => x.status === "scheduled" || x.status === "live"); console.log(g.id, g.competitors[0].entity_id.split(":").pop()); })')
read -r game_id team <<<"$game"
[ -n "$game_id" ] || fail "no basketball game today"
stream_out="${TMPDIR:-/tmp}/svc-image-stream-$run_id"
curl -sN -H "authorization: Bearer $admin_key" -H 'accept: text/event-stream' "http://127.0.0.1:${ports[1]}/v1/stream?game=$game_id" >"$stream_out" &
stream_pid=$!
for _ in $(seq 1 40); do grep -q 'event: subscribed' "$stream_out" 2>/dev/null && break; sleep 0.25; done
grep -q 'event: subscribed' "$stream_out" || fail "the stream on B did not subscribe"
report=$(curl -s -w ' %{http_code}' -X POST -H "authorization: Bearer $admin_key" -H 'content-type: application/json' \
  -d "{\"game_id\": \"$game_id\", \"team\": \"$team\", \"points\": 2}" "http://127.0.0.1:${ports[0]}/v1/reports")
[ "${report##* }" = 202 ] || fail "the report through A: $report"
event_id=$(echo "$report" | grep -oE 'evt_[0-9]+' | head -n1)
[ -n "$event_id" ] || fail "the report through A opened no event: $report"
for _ in $(seq 1 40); do grep -q "id: $event_id" "$stream_out" && break; sleep 0.25; done
kill "$stream_pid" 2>/dev/null || true
grep -q "id: $event_id" "$stream_out" || { cat "$stream_out" >&2; fail "$event_id (reported through A) did not reach B's stream"; }
rm -f "$stream_out"
say "a report through A ($event_id) reached a stream client on B"
stop_drained "$a"
stop_drained "$b"

say "passed: image $over_mb MB over its base ($base), built in $build_s s; ready in $ready_first s on a fresh volume (archive imported), $ready_again s on restart"
