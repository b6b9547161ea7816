#!/usr/bin/env bash
# hostfn_runs.sh — does the driver run the trampoline the shim writes into a
# host function's CUPTI parameters? Builds testdata/cuda/host_func_completion_ok.cu,
# records it with each way of recording host functions' runs (the default
# rewrite, and STREAMCHECK_HOSTFN=marker), and prints, for each, how many
# host functions were enqueued and how many runs were recorded (with their
# tokens matched), the shim's own counts, and what `check` finds.
# The rewrite is honoured when "wrap" shows as many matched runs as enqueues
# and `check` finds nothing.
#
# Usage (from the repository root, after scripts/build.sh):
#   scripts/probe/hostfn_runs.sh [OUTDIR]      (default .gpu/hostfn)
set -euo pipefail
out="${1:-.gpu/hostfn}"
mkdir -p "$out"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
bin="$out/host_func_completion_ok"
"$nvcc" -O2 -std=c++17 -o "$bin" testdata/cuda/host_func_completion_ok.cu
export STREAMCHECK_SHIM="${STREAMCHECK_SHIM:-$PWD/bin/libstreamcheck.so}"
for mode in wrap marker; do
    dir="$out/$mode"
    rm -rf "$dir"
    echo "== STREAMCHECK_HOSTFN=$mode"
    STREAMCHECK_HOSTFN=$mode STREAMCHECK_STATS=1 bin/streamcheck record -o "$dir" -- "$bin" 2>&1 |
        grep -E 'STREAMCHECK_NOTE|host functions|streamcheck:' || true
    for tr in "$dir"/*.sctrace; do
        bin/streamcheck convert "$tr" > "$tr.jsonl"
        python3 - "$tr.jsonl" <<'PY'
import json, sys
enq, runs = {}, {}
for line in open(sys.argv[1]):
    ev = json.loads(line)
    if ev.get("op") == "host_func":
        enq[ev.get("value", 0)] = ev
    elif ev.get("op") == "host_fn_run":
        runs[ev.get("value", 0)] = ev
matched = [t for t in runs if t in enq and t not in (0, "0x0")]
print(f"host_func {len(enq)} (with a token {sum(1 for t in enq if t not in (0, '0x0'))}), host_fn_run {len(runs)}, matched {len(matched)}")
for t in matched:
    print(f"  token {t}: enqueued on tid {enq[t].get('tid')}, ran on tid {runs[t].get('tid')}")
PY
    done
    bin/streamcheck check "$dir" || true
done
