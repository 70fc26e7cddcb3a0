#!/usr/bin/env bash
# Issue 30's second target: `flatlsm serve` still serving with 1.5x more data than fits in the
# memory it has, where redis-server cannot. Each server runs alone inside a Linux memory cgroup
# of LIMIT bytes (heap, page cache and tmpfs pages all count, as on a machine with that much
# memory), and gets the same load:
#   1. SET: redis-benchmark -t set -r KEYS -n 3*KEYS -d 1024 -c 50 -P 16 (95% of KEYS get a
#      value: KEYS * 1 KiB = 1.5 * LIMIT of live data),
#   2. GET and INCR: -n 1000000 over the same keys, then DBSIZE and the process's state.
# A server the cgroup kills (out of memory) is reported as such.
#
#   scripts/bench-serve-large.sh [LIMIT_BYTES]   (default 2147483648)
#
# Environment as scripts/bench-serve.sh: FLATLSM_BIN, BENCH_DIR (default
# /var/tmp/flatlsm-bench-serve-large, wiped first), PM_PATH (wiped first), SERVE_FLAGS. Needs
# root (or a delegated cgroup subtree), redis-server and redis-benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-2147483648}
keys=$((limit * 3 / 2 / 1024))
bin=${FLATLSM_BIN:-target/release/flatlsm}
dir=${BENCH_DIR:-/var/tmp/flatlsm-bench-serve-large}
port=6392
[ -x "$bin" ] || cargo build --release -p flatlsm-cli
rm -rf "$dir" ${PM_PATH:+"$PM_PATH"} && mkdir -p "$dir/redis"

# This shell's memory cgroup (v1 `memory` hierarchy or v2); each server gets a child of it.
own=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
if [ -n "$own" ]; then
  root=/sys/fs/cgroup/memory$own limit_file=memory.limit_in_bytes peak_file=memory.max_usage_in_bytes
  oom_file=memory.oom_control
else
  root=/sys/fs/cgroup$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
  limit_file=memory.max peak_file=memory.peak oom_file=memory.events
fi
server="" group=""
cleanup() {
  [ -n "$server" ] && kill -KILL "$server" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -n "$group" ] && rmdir "$group" 2>/dev/null || true
}
trap cleanup EXIT

# Starts "$@" as $name inside a new cgroup of $limit bytes; its pid in $server.
start_in_group() {
  group=$root/flatlsm-serve-large-$name-$$
  mkdir "$group" && echo "$limit" > "$group/$limit_file"
  sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$group" "$@" > "$dir/$name.log" 2>&1 &
  server=$!
  for _ in $(seq 600); do redis-cli -p $port ping >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "bench-serve-large: $name does not answer" >&2; exit 1
}

# Stops the server and removes its cgroup.
stop() {
  redis-cli -p $port shutdown "$@" >/dev/null 2>&1 || true
  wait "$server" 2>/dev/null || true
  server=""
  rmdir "$group" && group=""
}

# One step of the load, as CSV; a line saying so if the server died during it (and 1).
step() {
  local what=$1 started=$SECONDS
  shift
  local out
  out=$(redis-benchmark -p $port "$@" -c 50 -P 16 -d 1024 --csv 2>/dev/null | tail -n +2 | tr -d '"' || true)
  if ! kill -0 "$server" 2>/dev/null; then
    local kills
    kills=$(awk '$1 == "oom_kill" { print $2 }' "$group/$oom_file")
    echo "$name,$what,died after $((SECONDS - started)) s (out-of-memory kills in its cgroup: ${kills:-?})"
    return 1
  fi
  echo "$out" | awk -F, -v n="$name" -v w="$what" \
    '{ printf "%s,%s,%s,%.0f req/s,p50 %.3f ms,p99 %.3f ms\n", n, w, $1, $2, $5, $7 }'
}

# The whole load against one server; stops at the first step it did not survive.
load() {
  step "fill $keys keys x 1 KiB" -t set -r "$keys" -n $((keys * 3)) || return 0
  step "reads" -t get -r "$keys" -n 1000000 || return 0
  step "counters" -t incr -r "$keys" -n 1000000 || return 0
  local peak=$(($(cat "$group/$peak_file") >> 20))
  echo "$name,keys $(redis-cli -p $port dbsize),peak memory $peak MiB of $((limit >> 20)) MiB"
}

echo "limit $((limit >> 20)) MiB, $keys keys of 1 KiB: $((keys >> 10)) MiB of live data"
pm_flags=()
case "${PM_PATH:-}" in
  "") ;;
  /dev/shm/*) pm_flags=(--pm-mode emulated --pm-path "$PM_PATH") ;;
  *) pm_flags=(--pm-path "$PM_PATH") ;;
esac
name=flatlsm
# shellcheck disable=SC2086
start_in_group "$bin" serve --db "$dir/flatlsm" --create-if-missing --port $port --timeout 0 \
  "${pm_flags[@]}" ${SERVE_FLAGS:-}
load
stop

name=redis-server
start_in_group redis-server --port $port --bind 127.0.0.1 --dir "$dir/redis" --save "" \
  --appendonly yes --appendfsync everysec
load
stop nosave
