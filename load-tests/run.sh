#!/usr/bin/env bash
# End-to-end load test on one machine: a private redis-server, two pillarz replicas sharing it,
# the load generator against both, then redis-benchmark against the same Redis; prints the
# service's moves per second as a fraction of Redis's own SET ceiling measured in this run.
#
#   load-tests/run.sh [duration, default 30s] [players, default 32]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-30s}
players=${2:-32}

cargo build --release --quiet
bin=target/release/pillarz
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_port=$(free_port); a_port=$(free_port); b_port=$(free_port)
work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  >"$work/redis.log" 2>&1 & pids+=($!)
until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do sleep 0.1; done

for port in "$a_port" "$b_port"; do
  PILLARZ_LISTEN=127.0.0.1:$port PILLARZ_REDIS_URL=redis://127.0.0.1:$redis_port \
    RUST_LOG=warn "$bin" serve >"$work/pillarz-$port.log" 2>&1 & pids+=($!)
done
for port in "$a_port" "$b_port"; do
  until curl -fs "http://127.0.0.1:$port/healthz/ready" >/dev/null; do sleep 0.1; done
done

echo "== pillarz: two replicas, one Redis, $players concurrent games, $duration =="
"$bin" loadgen --targets "http://127.0.0.1:$a_port,http://127.0.0.1:$b_port" \
  --duration "$duration" --players "$players" | tee "$work/report.txt"

echo
echo "== redis-benchmark against the same Redis =="
redis-benchmark -p "$redis_port" -t set -n 200000 -c 50 -q | tee "$work/redis.txt"

moves=$(sed -n 's/.*: \([0-9.]*\) moves\/s.*/\1/p' "$work/report.txt")
sets=$(tr '\r' '\n' <"$work/redis.txt" | sed -n 's/^ *SET: \([0-9.]*\) requests per second.*/\1/p' | tail -n 1)
python3 - "$moves" "$sets" <<'PY'
import sys
moves, sets = float(sys.argv[1]), float(sys.argv[2])
print(f"service moves/s {moves:.1f} = {moves / sets:.4f} of Redis's SET ceiling ({sets:.0f}/s)")
PY
