#!/usr/bin/env bash
# End-to-end load test on one machine: a private redis-server, two pillarz replicas sharing it,
# and the load generator against both. In the same run it measures what to compare with:
#   - the HTTP floor: the same generator asking only GET /healthz/live;
#   - Redis: redis-benchmark SET, and an EVAL of the same shape as the move script;
#   - the CPU time per move of the replicas, of Redis and of the generator itself (from /proc
#     and the shell's child times, so any build can be measured): where the time goes;
#   - the move latency at 70 % of the peak rate;
#   - Redis memory per finished 40-ply pillarz game (and per 1,000-ply Alcazar game).
#
#   load-tests/run.sh [duration, default 30s] [players, default 32]
#   PILLARZ_BIN=/path/to/other/pillarz load-tests/run.sh 20s 16
#
# PILLARZ_BIN chooses the replicas' binary (to compare builds back to back); the generator is
# always this tree's release build.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-30s}
players=${2:-32}

cargo build --release --quiet
gen=target/release/pillarz
bin=${PILLARZ_BIN:-$gen}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_port=$(free_port); a_port=$(free_port); b_port=$(free_port)
work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  >"$work/redis.log" 2>&1 & pids+=($!)
redis_pid=$!
until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do sleep 0.1; done

replicas=()
for port in "$a_port" "$b_port"; do
  PILLARZ_LISTEN=127.0.0.1:$port PILLARZ_REDIS_URL=redis://127.0.0.1:$redis_port PILLARZ_ANON_QUOTAS=off \
    RUST_LOG=warn "$bin" serve >"$work/pillarz-$port.log" 2>&1 & pids+=($!)
  replicas+=($!)
done
for port in "$a_port" "$b_port"; do
  until curl -fs "http://127.0.0.1:$port/healthz/ready" >/dev/null; do sleep 0.1; done
done
targets="http://127.0.0.1:$a_port,http://127.0.0.1:$b_port"
cpu_ticks() { local t=0; for pid in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$t"; }
# CPU seconds of this shell's finished children (the generator is the only one that ends
# during a load phase), into $1. `times` runs in this shell: in a subshell it would see none.
children_cpu() {
  times >"$work/times"
  awk 'END { split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' \
    "$work/times" >"$1"
}

echo "== pillarz ($bin): two replicas, one Redis, $players concurrent games, $duration =="
before=$(cpu_ticks "${replicas[@]}"); redis_before=$(cpu_ticks "$redis_pid"); children_cpu "$work/gen_before"
"$gen" loadgen --targets "$targets" --duration "$duration" --players "$players" | tee "$work/report.txt"
after=$(cpu_ticks "${replicas[@]}"); redis_after=$(cpu_ticks "$redis_pid"); children_cpu "$work/gen_after"

moves=$(sed -n 's/.*: \([0-9.]*\) moves\/s.*/\1/p' "$work/report.txt")
played=$(sed -n 's/.* games, \([0-9]*\) moves in .*/\1/p' "$work/report.txt")
p99=$(awk '$1 == "POST" && $2 == "/v1/games/{id}/moves" {print $7}' "$work/report.txt")

echo
echo "== the same players at 70 % of that rate =="
paced=$(python3 -c "print(0.7 * $moves)")
"$gen" loadgen --targets "$targets" --duration "$duration" --players "$players" \
  --moves-per-sec "$paced" | tee "$work/paced.txt"
paced_p99=$(awk '$1 == "POST" && $2 == "/v1/games/{id}/moves" {print $7}' "$work/paced.txt")

echo
echo "== the HTTP floor: the same generator against GET /healthz/live =="
"$gen" loadgen --floor --targets "$targets" --duration "$duration" --players "$players" | tee "$work/floor.txt"
floor=$(sed -n 's/^\([0-9.]*\) requests\/s in all/\1/p' "$work/floor.txt")

echo
echo "== redis-benchmark against the same Redis =="
redis-benchmark -p "$redis_port" -t set -n 200000 -c 50 -q | tee "$work/redis.txt"
# The move script's shape: the same reads, writes, appends, index, stream, answer and publish.
shape="local t = redis.call('TIME')
local g = redis.call('HMGET', KEYS[1], 'v', 'w')
local saved = redis.call('HGET', KEYS[3], ARGV[1])
local w = string.sub(ARGV[1] .. ' ' .. (g[2] or ''), 1, 33)
redis.call('HSET', KEYS[1], 'v', ARGV[2], 's', ARGV[3], 'w', w, 'd', ARGV[5])
redis.call('ZADD', KEYS[4], ARGV[5], KEYS[1])
redis.call('PEXPIRE', KEYS[4], 600000)
redis.call('PEXPIRE', KEYS[1], 600000)
redis.call('RPUSH', KEYS[2], ARGV[6])
redis.call('PEXPIRE', KEYS[2], 600000)
redis.call('PEXPIRE', KEYS[5], 600000)
redis.call('HSET', KEYS[3], ARGV[1], ARGV[7])
redis.call('PEXPIRE', KEYS[3], 600000)
redis.call('PUBLISH', 'bench:changes', KEYS[1] .. ' ' .. ARGV[2])
return {1, t[1]}"
live='{"p":"00000/00o00x0/00000/00x00o0/00000 1","n":12,"rem":[597000,598000],"ts":1764571234567,"at":1764571234567}'
redis-benchmark -p "$redis_port" -n 200000 -c 50 -r 100000 -q \
  EVAL "$shape" 5 'bench:{__rand_int__}:g' 'bench:{__rand_int__}:e' 'bench:{__rand_int__}:i' 'bench:due' \
  'bench:{__rand_int__}:r' \
  0123456789abcdef 13 "$live" 'b2-c3^d4' 1764571234567 '13 m 4523 b2-c3^d4 597000 598000' 'fingerpr13' \
  | tee "$work/eval.txt"
sets=$(tr '\r' '\n' <"$work/redis.txt" | sed -n 's/^ *SET: \([0-9.]*\) requests per second.*/\1/p' | tail -n 1)
evals=$(tr '\r' '\n' <"$work/eval.txt" | sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' | tail -n 1)

echo
echo "== Redis memory per game =="
"$gen" bench-storage --target "http://127.0.0.1:$a_port" --redis "redis://127.0.0.1:$redis_port" \
  --rounds 500 | tee "$work/storage.txt"
memory=$(sed -n 's/^pillarz, finished at ply 40: \([0-9]*\) bytes.*/\1/p' "$work/storage.txt")

echo
python3 - "$moves" "$floor" "$sets" "$evals" "$((after - before))" "$(getconf CLK_TCK)" "$played" \
  "$p99" "$paced" "$paced_p99" "$memory" "$((redis_after - redis_before))" "$(cat "$work/gen_before")" "$(cat "$work/gen_after")" \
  "$(nproc)" <<'PY'
import sys
moves, floor, sets, evals = map(float, sys.argv[1:5])
ticks, hz, played = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
p99, paced, paced_p99, memory = sys.argv[8], float(sys.argv[9]), sys.argv[10], sys.argv[11]
redis_ticks, gen_cpu, cores = int(sys.argv[12]), float(sys.argv[14]) - float(sys.argv[13]), int(sys.argv[15])
per_move = lambda seconds: seconds * 1e6 / max(played, 1)
service, redis, generator = per_move(ticks / hz), per_move(redis_ticks / hz), per_move(gen_cpu)
print(f"service moves/s {moves:.1f}: {moves / floor:.4f} of the HTTP floor ({floor:.0f} req/s), "
      f"{moves / evals:.4f} of a move-shaped EVAL ({evals:.0f}/s), {moves / sets:.4f} of SET ({sets:.0f}/s)")
print(f"service CPU per move: {service:.0f} us (both replicas, {ticks / hz:.1f} s)")
print(f"where the time goes, CPU per move: replicas {service:.0f} us, Redis {redis:.0f} us, "
      f"load generator {generator:.0f} us; {cores} cores at this rate give {cores * 1e6 / max(moves, 1):.0f} us")
print(f"move p99: {p99} ms at the peak; {paced_p99} ms at 70 % of it ({paced:.0f} moves/s)")
print(f"Redis memory per finished 40-ply pillarz game: {memory} bytes")
PY
# The generator's audit of both runs (non-2xx answers, lost and duplicated moves), last.
grep -h '^errors ' "$work/report.txt" "$work/paced.txt"
