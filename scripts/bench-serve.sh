#!/usr/bin/env bash
# The issue-30 target measurement: redis-benchmark against `flatlsm serve` and against
# redis-server in its durable setting (--appendonly yes --appendfsync everysec), one after the
# other on this machine, the same load, printing throughput and P50/P99 of both and the ratio.
#
#   scripts/bench-serve.sh [N] [extra redis-benchmark flags]
#
# N: requests per test (default 1000000). Load: -t set,get,incr,mset -r 1000000 -c 50 -P 16
# -d 1024. Environment: FLATLSM_BIN (default target/release/flatlsm, built if missing),
# BENCH_DIR (default /var/tmp/flatlsm-bench-serve; wiped first), PM_PATH (flatlsm's PM
# directory, wiped first too; default inside the database), SERVE_FLAGS (e.g. --sync), PORT_FLATLSM (6390),
# PORT_REDIS (6391), WARM_MEMORY (1: before each server starts, free memory is filled with
# clean page cache read from a sparse file, as `flatlsm bench --warm_memory` does, so neither
# server pays this VM's first touch of memory handed back to the host; 0: off). Needs redis-server and redis-benchmark (apt-get install redis-server
# redis-tools). Raw outputs are kept in $BENCH_DIR/*.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
shift || true
bin=${FLATLSM_BIN:-target/release/flatlsm}
dir=${BENCH_DIR:-/var/tmp/flatlsm-bench-serve}
pf=${PORT_FLATLSM:-6390}
pr=${PORT_REDIS:-6391}
load=(-t set,get,incr,mset -n "$n" -r 1000000 -c 50 -P 16 -d 1024 --csv "$@")

for tool in redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "bench-serve: $tool not found (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
[ -x "$bin" ] || cargo build --release -p flatlsm-cli
rm -rf "$dir" ${PM_PATH:+"$PM_PATH"} && mkdir -p "$dir/redis"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# Reads a sparse file (holes: no disk space) until free memory is down to 1/64 of the machine
# (at least 256 MiB): the pages the next server takes then come from reclaim, not from memory
# the VM's balloon handed back to the host (docs/design-decisions.md, "Fresh memory").
warm_memory() {
  [ "${WARM_MEMORY:-1}" = 1 ] || return 0
  local total free reserve
  # Kibibytes from /proc/meminfo, bytes in bash's integers (awk would print 2.5e+10).
  total=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024 ))
  free=$(( $(awk '/^MemFree:/ {print $2}' /proc/meminfo) * 1024 ))
  reserve=$(( total / 64 > 268435456 ? total / 64 : 268435456 ))
  # A new file each time: pages cached by an earlier warm-up would be read again for nothing.
  local file="$dir/warm.$RANDOM"
  truncate -s "$total" "$file"
  if [ "$free" -gt "$reserve" ]; then
    dd if="$file" of=/dev/null bs=1M count=$(( (free - reserve) >> 20 )) status=none
  fi
}

wait_port() {
  for _ in $(seq 600); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "bench-serve: nothing answers on port $1" >&2; exit 1
}

# One redis-benchmark run; its CSV (test, rps, avg, min, p50, p95, p99, max) into $2.
run_load() {
  echo "== $(date +%T) redis-benchmark ${load[*]} -p $1" >&2
  redis-benchmark -p "$1" "${load[@]}" > "$2"
}

pm_flags=()
# A PM directory in DRAM (/dev/shm) is refused unless emulated PM is asked for explicitly.
case "${PM_PATH:-}" in
  "") ;;
  /dev/shm/*) pm_flags=(--pm-mode emulated --pm-path "$PM_PATH") ;;
  *) pm_flags=(--pm-path "$PM_PATH") ;;
esac
warm_memory
# shellcheck disable=SC2086
"$bin" serve --db "$dir/flatlsm" --create-if-missing --port "$pf" --timeout 0 "${pm_flags[@]}" \
  ${SERVE_FLAGS:-} > "$dir/flatlsm.log" 2>&1 &
pids+=($!)
wait_port "$pf"
run_load "$pf" "$dir/flatlsm.csv"
redis-cli -p "$pf" info persistence | grep -E "flatlsm_(stall|write_amp|num_files:)" >&2 || true
redis-cli -p "$pf" shutdown >/dev/null 2>&1 || true

warm_memory
redis-server --port "$pr" --bind 127.0.0.1 --dir "$dir/redis" --save "" \
  --appendonly yes --appendfsync everysec > "$dir/redis.log" 2>&1 &
pids+=($!)
wait_port "$pr"
run_load "$pr" "$dir/redis.csv"
redis-cli -p "$pr" shutdown nosave >/dev/null 2>&1 || true

# Columns: "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
echo
printf '%-16s %14s %9s %9s %14s %9s %9s %8s\n' test flatlsm_rps p50_ms p99_ms redis_aof_rps p50_ms p99_ms ratio
join -t, <(tail -n +2 "$dir/flatlsm.csv" | sort) <(tail -n +2 "$dir/redis.csv" | sort) | tr -d '"' |
  awk -F, '{ printf "%-16s %14.0f %9.3f %9.3f %14.0f %9.3f %9.3f %7.2fx\n", $1, $2, $5, $7, $9, $12, $14, $2 / $9 }'
echo
echo "target: flatlsm >= 0.8x redis-server (appendfsync everysec) on every test; raw CSVs in $dir"
