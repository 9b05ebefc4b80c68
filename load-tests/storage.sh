#!/usr/bin/env bash
# The storage benchmark: a private redis-server and two replicas (one with its game cache, one
# with --cache-mb 0, so every request decodes the game from Redis), then `pillarz bench-storage`:
# bytes in Redis for a finished 40-ply pillarz game and a 1,000-ply Alcazar game, and
# GET /v1/games/{id} latency at ply 10 against ply 1,000 on both replicas.
#
#   load-tests/storage.sh [rounds, default 2000]
#   PILLARZ_BIN=/path/to/other/pillarz load-tests/storage.sh   # another build's replicas
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2000}

cargo build --release --quiet
gen=target/release/pillarz
bin=${PILLARZ_BIN:-$gen}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_port=$(free_port); cached=$(free_port); uncached=$(free_port)
work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  >"$work/redis.log" 2>&1 & pids+=($!)
until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do sleep 0.1; done
PILLARZ_LISTEN=127.0.0.1:$cached PILLARZ_REDIS_URL=redis://127.0.0.1:$redis_port PILLARZ_ANON_QUOTAS=off \
  RUST_LOG=warn "$bin" serve >"$work/cached.log" 2>&1 & pids+=($!)
extra=()
if "$bin" serve --help | grep -q -- --cache-mb; then extra=(--cache-mb 0); fi
PILLARZ_LISTEN=127.0.0.1:$uncached PILLARZ_REDIS_URL=redis://127.0.0.1:$redis_port PILLARZ_ANON_QUOTAS=off \
  RUST_LOG=warn "$bin" serve "${extra[@]}" >"$work/uncached.log" 2>&1 & pids+=($!)
for port in "$cached" "$uncached"; do
  until curl -fs "http://127.0.0.1:$port/healthz/ready" >/dev/null; do sleep 0.1; done
done
"$gen" bench-storage --target "http://127.0.0.1:$cached" \
  --more-targets "http://127.0.0.1:$uncached" \
  --redis "redis://127.0.0.1:$redis_port" --rounds "$rounds"
