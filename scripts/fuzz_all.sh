#!/usr/bin/env bash
# Runs every cargo-fuzz target (docs/fuzzing.md) for RUNS executions, one after the other, at
# nice 19, and prints one Markdown table row per target: executions, executions per second,
# crashes, corpus size (inputs / bytes at the end), seconds, and the command.
#
# Usage: scripts/fuzz_all.sh [RUNS] [TARGET...]   (default 10000000 runs, every target)
# New inputs and logs go under $FUZZ_WORK (default /tmp/flatlsm-fuzz); the committed seeds in
# fuzz/corpus/<target> are only read. Needs nightly and cargo-fuzz; build first with
# `cd fuzz && cargo +nightly fuzz build -O -a`.
set -u
cd "$(dirname "$0")/../fuzz" || exit 1
runs=${1:-10000000}
shift $(($# > 0 ? 1 : 0))
work=${FUZZ_WORK:-/tmp/flatlsm-fuzz}

# About 1.25 times the largest seed, at least 1 KiB.
declare -A max_len=(
    [pm_log]=16384 [sst_footer]=1024 [sst_block]=4096 [sst_bloom]=4096 [sst_table]=8192
    [manifest]=4096 [version_edit]=1024 [vlog]=32768 [vlog_redirect]=4096 [wal]=8192
    [pm_skiplist]=8192 [pm_btree]=24576 [rowtable]=12288 [matrix_container]=24576
    [options_file]=4096 [identity]=1024 [export_format]=12288
)
all=(pm_log sst_footer sst_block sst_bloom sst_table manifest version_edit vlog vlog_redirect
    wal pm_skiplist pm_btree rowtable matrix_container options_file identity export_format)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

stat() { grep -m1 "^stat::$1:" "$2" | awk '{print $2}'; }

echo "| target | executions | exec/s | crashes | corpus (inputs / bytes) | seconds | max_len |"
echo "| --- | ---: | ---: | ---: | --- | ---: | ---: |"
for t in "${targets[@]}"; do
    mkdir -p "$work/$t" "artifacts/$t"
    before=$(ls "artifacts/$t" | wc -l)
    start=$(date +%s)
    nice -n 19 cargo +nightly fuzz run -O -a "$t" "$work/$t" "corpus/$t" -- \
        -runs="$runs" -max_len="${max_len[$t]}" -timeout=10 -print_final_stats=1 \
        > "$work/$t.log" 2>&1
    rc=$?
    seconds=$(($(date +%s) - start))
    crashes=$(($(ls "artifacts/$t" | wc -l) - before))
    corpus=$(grep -E "^#[0-9]+" "$work/$t.log" | tail -1 | sed -E 's/.*corp: ([0-9]+)\/([0-9a-zA-Z]+).*/\1 \/ \2/')
    execs=$(stat number_of_executed_units "$work/$t.log")
    speed=$(stat average_exec_per_sec "$work/$t.log")
    [ "$rc" -ne 0 ] && crashes="$crashes (exit $rc)"
    echo "| \`$t\` | ${execs:-?} | ${speed:-?} | $crashes | $corpus | $seconds | ${max_len[$t]} |"
done
