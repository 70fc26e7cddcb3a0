#!/bin/sh
# The FlatLSM paper's micro-benchmark, scaled to this machine, against RocksDB (in process and
# Debian's db_bench). See docs/bench.md. Usage: scripts/compare-paper-scaled.sh [OUT_DIR] [PM_DIR]
# Needs: apt-get install -y libclang-dev rocksdb-tools; ~25 GiB free under OUT_DIR; ~3 GiB tmpfs.
set -eu
out=${1:-/var/tmp/flatlsm-paper}
pm=${2:-/dev/shm/flatlsm-pm}
cargo build --release -p flatlsm-cli --features rocksdb
mkdir -p "$out"
"${CARGO_TARGET_DIR:-target}"/release/flatlsm bench --preset paper-scaled --pm_path "$pm" --db "$out/db" \
    --compare rocksdb --plot "$out/plots" --json "$out/result.json" | tee "$out/report.txt"
