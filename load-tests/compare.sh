#!/usr/bin/env bash
# Compares this tree's service with another build's, back to back: `run.sh` for the other build,
# then for this one, alternating, `rounds` times each. A machine shared with others (or a
# virtual machine) changes its speed by a third within minutes, so only alternating pairs say
# anything; this prints each pair's ratios and, over all pairs, the ratio of the mean moves/s and
# the geometric mean of the pairs' ratios with its 95 % interval (Student's t on the logarithms).
#
#   load-tests/compare.sh <commit or path to a pillarz binary> [rounds, default 3] [duration, default 20s] [players, default 16]
#   load-tests/compare.sh 7595161 6
#
# A commit is built once, in a temporary worktree (its own target directory under target/,
# kept between runs). Every run's full report is kept under target/compare/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
other=$1
rounds=${2:-3}
duration=${3:-20s}
players=${4:-16}
case $rounds in '' | *[!0-9]* | 0) echo "rounds must be a positive number, not '$rounds'" >&2; exit 2 ;; esac

if [ -x "$other" ] && [ -f "$other" ]; then
  base_bin=$(realpath "$other")
  label=$(basename "$other")
else
  commit=$(git rev-parse --verify --quiet "$other^{commit}") || { echo "$other: neither a binary nor a commit" >&2; exit 2; }
  label=$(git rev-parse --short "$commit")
  base_target=$PWD/target/compare/build-$label
  base_bin=$base_target/release/pillarz
  if [ ! -x "$base_bin" ]; then
    tree=$(mktemp -d)
    trap 'git worktree remove --force "$tree"' EXIT
    git worktree add --quiet --detach "$tree" "$commit"
    (cd "$tree" && CARGO_TARGET_DIR=$base_target cargo build --release --quiet)
    git worktree remove --force "$tree"
    trap - EXIT
  fi
fi
cargo build --release --quiet
head_bin=$PWD/target/release/pillarz
head_label=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src Cargo.toml Cargo.lock || echo +changes)

out=target/compare/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  for side in base head; do
    bin=$base_bin; [ "$side" = head ] && bin=$head_bin
    echo "round $round/$rounds: $side ($bin)" >&2
    PILLARZ_BIN=$bin load-tests/run.sh "$duration" "$players" >"$out/$side-$round.txt" 2>&1 || {
      echo "run.sh failed; its report: $out/$side-$round.txt" >&2; exit 1; }
  done
done

python3 - "$out" "$rounds" "$label" "$head_label" <<'PY'
import math, re, sys
out, rounds, base_label, head_label = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

def report(path):
    text = open(path).read()
    def num(pattern):
        m = re.search(pattern, text)
        if not m:
            sys.exit(f"{path}: no match for {pattern!r}")
        return float(m.group(1))
    errors = [tuple(map(int, m)) for m in re.findall(
        r"^errors (\d+), lost moves (\d+), duplicated moves (\d+), games that do not replay (\d+)", text, re.M)]
    return {
        "moves": num(r"service moves/s ([0-9.]+)"),
        "cpu": num(r"service CPU per move: ([0-9.]+) us \(both replicas"),
        "redis": num(r"Redis ([0-9.]+) us,"),
        "gen": num(r"load generator ([0-9.]+) us"),
        "p99": num(r"([0-9.]+) ms at 70 %"),
        "memory": num(r"pillarz game: ([0-9]+) bytes"),
        "faults": sum(sum(e) for e in errors[-2:]) if len(errors) >= 2 else None,
    }

# Student's t, two-sided 95 %, by degrees of freedom.
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
       2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]
pairs = [(report(f"{out}/base-{r}.txt"), report(f"{out}/head-{r}.txt")) for r in range(1, rounds + 1)]
print(f"{base_label} → {head_label}, {rounds} alternating rounds (reports in {out})")
print("| round | moves/s | ratio | replicas' CPU/move µs | ratio | Redis µs/move | generator µs/move | move p99 at 70 %, ms | bytes/game | errors+lost+dup+unreplayable |")
print("|---|---|---|---|---|---|---|---|---|---|")
for i, (b, h) in enumerate(pairs, 1):
    faults = "?" if b["faults"] is None or h["faults"] is None else f"{b['faults']:.0f} → {h['faults']:.0f}"
    print(f"| {i} | {b['moves']:,.0f} → {h['moves']:,.0f} | {h['moves'] / b['moves']:.2f}× "
          f"| {b['cpu']:.0f} → {h['cpu']:.0f} | {100 * h['cpu'] / b['cpu']:.1f} % "
          f"| {b['redis']:.0f} → {h['redis']:.0f} | {b['gen']:.0f} → {h['gen']:.0f} "
          f"| {b['p99']:.2f} → {h['p99']:.2f} | {b['memory']:,.0f} → {h['memory']:,.0f} | {faults} |")
mean = lambda xs: sum(xs) / len(xs)
base_moves, head_moves = mean([b["moves"] for b, _ in pairs]), mean([h["moves"] for _, h in pairs])
logs = [math.log(h["moves"] / b["moves"]) for b, h in pairs]
print(f"moves/s: mean {base_moves:,.0f} → {head_moves:,.0f}, ratio of the means {head_moves / base_moves:.2f}×; "
      f"geometric mean of the pairs' ratios {math.exp(mean(logs)):.2f}×", end="")
if len(logs) > 1:
    sd = math.sqrt(sum((x - mean(logs)) ** 2 for x in logs) / (len(logs) - 1))
    half = T95[min(len(logs) - 2, len(T95) - 1)] * sd / math.sqrt(len(logs))
    print(f", 95 % interval {math.exp(mean(logs) - half):.2f}–{math.exp(mean(logs) + half):.2f}×")
else:
    print(" (one pair: no interval)")
cpu = [h["cpu"] / b["cpu"] for b, h in pairs]
print(f"replicas' CPU per move: {100 * min(cpu):.1f}–{100 * max(cpu):.1f} % of the other build's")
PY
