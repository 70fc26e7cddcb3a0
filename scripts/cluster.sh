#!/usr/bin/env bash
# Starts, stops or reports N `flatlsm serve` processes behind twemproxy (nutcracker) on loopback.
#
#   scripts/cluster.sh up N       # servers on ports 7001..700N, the proxy on 22121
#   scripts/cluster.sh status N   # each process and a PING through it
#   scripts/cluster.sh down N     # SIGTERM (graceful: each server closes its database)
#
# Environment: FLATLSM_BIN (default target/release/flatlsm, built if missing),
# CLUSTER_DIR (default /tmp/flatlsm-cluster: databases, logs, pid files, nutcracker.yml),
# BASE_PORT (7001), PROXY_PORT (22121; its stats port is the next one), SERVE_FLAGS (extra flags for every server, e.g. --sync).
# The generated nutcracker.yml follows examples/nutcracker.yml (ketama, no auto-eject).
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-}
n=${2:-3}
bin=${FLATLSM_BIN:-target/release/flatlsm}
dir=${CLUSTER_DIR:-/tmp/flatlsm-cluster}
base=${BASE_PORT:-7001}
proxy=${PROXY_PORT:-22121}

usage() { echo "usage: $0 up|down|status N" >&2; exit 2; }
[[ "$n" =~ ^[1-9][0-9]*$ ]] || usage

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_port() { # port: wait up to 30 s for a PONG
  for _ in $(seq 300); do
    redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "cluster: nothing answers on port $1" >&2; return 1
}

write_config() {
  {
    echo "flatlsm:"
    echo "  listen: 127.0.0.1:$proxy"
    echo "  hash: fnv1a_64"
    echo "  distribution: ketama"
    echo "  redis: true"
    echo "  auto_eject_hosts: false"
    echo "  timeout: 5000"
    echo "  server_retry_timeout: 1000"
    echo "  server_failure_limit: 1"
    echo "  servers:"
    for i in $(seq "$n"); do echo "    - 127.0.0.1:$((base + i - 1)):1 flatlsm$i"; done
  } > "$dir/nutcracker.yml"
}

up() {
  command -v nutcracker >/dev/null || { echo "cluster: nutcracker not found (apt-get install nutcracker)" >&2; exit 1; }
  [ -x "$bin" ] || cargo build --release -p flatlsm-cli
  mkdir -p "$dir"
  for i in $(seq "$n"); do
    if alive "$dir/server$i.pid"; then continue; fi
    # shellcheck disable=SC2086
    "$bin" serve --db "$dir/db$i" --create-if-missing --port $((base + i - 1)) --dir "$dir/saves$i" \
      ${SERVE_FLAGS:-} >"$dir/server$i.log" 2>&1 &
    echo $! > "$dir/server$i.pid"
  done
  for i in $(seq "$n"); do wait_port $((base + i - 1)); done
  write_config
  if ! alive "$dir/nutcracker.pid"; then
    nutcracker -c "$dir/nutcracker.yml" -o "$dir/nutcracker.log" -a 127.0.0.1 -s $((proxy + 1)) \
      >"$dir/nutcracker.out" 2>&1 &
    echo $! > "$dir/nutcracker.pid"
  fi
  wait_port "$proxy"
  echo "cluster: $n servers on ports $base..$((base + n - 1)), nutcracker on 127.0.0.1:$proxy"
}

down() {
  for pidfile in "$dir/nutcracker.pid" $(seq -f "$dir/server%g.pid" "$n"); do
    if alive "$pidfile"; then
      pid=$(cat "$pidfile")
      kill -TERM "$pid"
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -f "$pidfile"
  done
  echo "cluster: stopped (data kept in $dir)"
}

status() {
  for i in $(seq "$n"); do
    port=$((base + i - 1))
    state=down; alive "$dir/server$i.pid" && state="pid $(cat "$dir/server$i.pid")"
    echo "server$i :$port $state $(redis-cli -p "$port" dbsize 2>/dev/null | sed 's/^/keys~/')"
  done
  state=down; alive "$dir/nutcracker.pid" && state="pid $(cat "$dir/nutcracker.pid")"
  echo "nutcracker :$proxy $state $(redis-cli -p "$proxy" ping 2>/dev/null || true)"
}

case "$cmd" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) usage ;;
esac
