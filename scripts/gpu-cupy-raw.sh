#!/usr/bin/env bash
# gpu-cupy-raw.sh — time CuPy's tests/cupy_tests/core_tests/test_raw.py natively
# and under `streamcheck run`, every allocation from MemoryAsyncPool, and, if the
# recorded run is still going after WATCH_S seconds, dump where every thread of
# the program's Python processes is (native stacks by gdb, Python stacks by
# py-spy when installed, kernel wait channels), so that a stall can be told from
# a crawl and placed.
#
# Usage (from the repository root, on the GPU machine, after scripts/build.sh and
# scripts/corpus-build.sh have put CuPy's tests at the installed CuPy's tag):
#   OUT=/some/dir scripts/gpu-cupy-raw.sh
#
# Environment knobs (all optional):
#   CUPY_SRC   CuPy's source checkout holding tests/ (default .corpus/src/cupy)
#   EVERY      keep every EVERY-th test, as the corpus does (default 3; 1: all)
#   TIMEOUT_S  seconds per run (default 600)
#   WATCH_S    seconds into the recorded run at which stacks are dumped (default 150)
#   SC_BIN     streamcheck binary (default bin/streamcheck)
#   STAGE      all (default): warm, then both timed runs; warm: only the warming
#              run, then CuPy's kernel cache packed into $OUT/cupy-cache.tar.gz;
#              timed: no warming run, the cache unpacked from CACHE_TAR first
#              (so a cache warmed on one machine call is used by the next)
#   CACHE_TAR  packed kernel cache for STAGE=timed
#   STAGE=side no warming run; the native and the recorded run at the same
#              time (for tests whose warm-up is per process, as Jitify's is),
#              without the stack dump
#   PYTEST_ARGS more pytest arguments, split at spaces (e.g. "-v --durations=20")
#   MARK       a pytest -m expression (e.g. "not slow": CuPy's CI leaves out
#              the tests marked slow, the Jitify ones among them)
#   STAGE=probe runs only PROBE_ID (a pytest node id) natively, and dumps the
#              stacks at WATCH_S if it is still running: where a test that
#              stalls natively spends its time
#
# CuPy's kernel cache is kept in .gpu/cupy-kernel-cache (CUPY_CACHE_DIR), so
# the warm and timed runs share it whoever runs them.
#
# Runs, in order: a native run that warms CuPy's kernel cache (not timed), a
# timed native run, a timed `streamcheck run --keep TRACEDIR` with
# STREAMCHECK_STATS=1. Writes to $OUT: cupy-raw-summary.txt (times and their
# ratio, exit codes, trace sizes), cupy-raw-{native,recorded}.log (pytest's and
# streamcheck's output), cupy-raw-{native,recorded}-times.tsv (each finished
# test's call time, compared in the summary on the tests both runs finished,
# so a run the timeout ends still gives a ratio), cupy-raw-stacks.txt (only if
# the watch fired).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
OUT="${OUT:?set OUT to a folder for the results}"
CUPY_SRC="${CUPY_SRC:-$root/.corpus/src/cupy}"
EVERY="${EVERY:-3}"
TIMEOUT_S="${TIMEOUT_S:-600}"
WATCH_S="${WATCH_S:-150}"
SC_BIN="${SC_BIN:-$root/bin/streamcheck}"
mkdir -p "$OUT"
test -f "$CUPY_SRC/tests/cupy_tests/core_tests/test_raw.py" || { echo "no test_raw.py under $CUPY_SRC/tests" >&2; exit 2; }
test -x "$SC_BIN" || { echo "no streamcheck binary at $SC_BIN (run scripts/build.sh)" >&2; exit 2; }
summary="$OUT/cupy-raw-summary.txt"
: > "$summary"

# shellcheck disable=SC2206 # PYTEST_ARGS is a list of words
pytest_cmd=(python3 -m pytest -q -p no:cacheprovider -p cupy_async_pool_plugin ${PYTEST_ARGS:-} ${MARK:+-m "$MARK"})
if [ "${STAGE:-all}" = probe ]; then
    pytest_cmd+=("${PROBE_ID:?set PROBE_ID for STAGE=probe}")
else
    pytest_cmd+=(tests/cupy_tests/core_tests/test_raw.py)
fi
export PYTHONPATH="$root/testdata/python${PYTHONPATH:+:$PYTHONPATH}" STREAMCHECK_PYTEST_EVERY="$EVERY"

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.1f}')"; }

# dump_stacks PID: where every thread of every Python process under PID is.
dump_stacks() {
    local top=$1 f="$OUT/cupy-raw-stacks.txt"
    {
        echo "== process tree at $(date -u +%FT%TZ)"
        ps -o pid,ppid,stat,etime,time,wchan:32,args --forest -g "$(ps -o sid= -p "$top" | tr -d ' ')" 2>/dev/null || ps -ef --forest
        for pid in $(pgrep -f 'pytest' ); do
            echo "== pid $pid: threads and kernel wait channels"
            for t in /proc/"$pid"/task/*; do
                printf '%s %s %s\n' "${t##*/}" "$(cat "$t"/comm 2>/dev/null)" "$(cat "$t"/wchan 2>/dev/null)"
            done
            echo "== pid $pid: trace files open"
            ls -l /proc/"$pid"/fd 2>/dev/null | grep -E 'sctrace|perf-' || true
            if command -v py-spy >/dev/null; then
                echo "== pid $pid: py-spy dump --native"
                timeout 60 py-spy dump --native --pid "$pid" 2>&1
            fi
            if command -v gdb >/dev/null; then
                echo "== pid $pid: gdb thread apply all bt"
                timeout 120 gdb -p "$pid" -batch -ex 'set pagination off' -ex 'thread apply all bt 40' 2>&1 | grep -v '^\[New LWP'
            fi
        done
    } > "$f" 2>&1
    echo "stacks dumped at ${WATCH_S}s: $f" >> "$summary"
}

# timed LOG CMD...: runs CMD with its output in LOG and sets rc (its exit
# status) and secs (its wall time). With watch=1, the stacks are dumped if
# CMD still runs after WATCH_S seconds.
timed() {
    local log=$1 t0 pid watcher=
    shift
    t0=$(now)
    "$@" > "$log" 2>&1 &
    pid=$!
    if [ "${watch:-0}" = 1 ]; then
        ( sleep "$WATCH_S"; kill -0 "$pid" 2>/dev/null && dump_stacks "$pid" ) &
        watcher=$!
    fi
    wait "$pid"
    rc=$?
    secs=$(elapsed "$t0" "$(now)")
    if [ -n "$watcher" ]; then
        kill "$watcher" 2>/dev/null
        wait "$watcher" 2>/dev/null
    fi
}

STAGE="${STAGE:-all}"
if [ "$STAGE" = probe ]; then
    cd "$CUPY_SRC" || exit 2
    watch=1 timed "$OUT/cupy-raw-probe.log" timeout "$TIMEOUT_S" "${pytest_cmd[@]}"
    echo "probe $PROBE_ID natively: ${secs}s, exit $rc (124: timed out), $(tail -n 1 "$OUT/cupy-raw-probe.log")" | tee -a "$summary"
    exit 0
fi
export CUPY_CACHE_DIR="$root/.gpu/cupy-kernel-cache"
mkdir -p "$CUPY_CACHE_DIR"
cd "$CUPY_SRC" || exit 2
if [ "$STAGE" = side ]; then
    :
elif [ "$STAGE" = timed ]; then
    tar -xzf "${CACHE_TAR:?set CACHE_TAR for STAGE=timed}" -C "$CUPY_CACHE_DIR" || exit 2
    echo "kernel cache: $(find "$CUPY_CACHE_DIR" -type f | wc -l) files from $CACHE_TAR" | tee -a "$summary"
else
    echo "warming CuPy's kernel cache (native run, not timed)"
    timed "$OUT/cupy-raw-warm.log" timeout "$TIMEOUT_S" "${pytest_cmd[@]}"
    echo "warm (cold cache): ${secs}s, exit $rc, $(tail -n 1 "$OUT/cupy-raw-warm.log")" | tee -a "$summary"
fi
if [ "$STAGE" = warm ]; then
    tar -czf "$OUT/cupy-cache.tar.gz" -C "$CUPY_CACHE_DIR" .
    echo "kernel cache packed: $(du -h "$OUT/cupy-cache.tar.gz" | cut -f1), $(find "$CUPY_CACHE_DIR" -type f | wc -l) files" | tee -a "$summary"
    exit 0
fi

# native_run, recorded_run: each timed into $OUT/cupy-raw-{native,recorded}.s
native_run() {
    STREAMCHECK_PYTEST_TIMES="$OUT/cupy-raw-native-times.tsv" \
        timed "$OUT/cupy-raw-native.log" timeout "$TIMEOUT_S" "${pytest_cmd[@]}"
    echo "$secs" > "$OUT/cupy-raw-native.s"
    echo "native: ${secs}s, exit $rc (124: timed out), $(tail -n 1 "$OUT/cupy-raw-native.log")" | tee -a "$summary"
}
traces="$OUT/cupy-raw-traces"
recorded_run() {
    rm -rf "$traces"
    STREAMCHECK_STATS=1 STREAMCHECK_PYTEST_TIMES="$OUT/cupy-raw-recorded-times.tsv" watch=$watch_recorded timed "$OUT/cupy-raw-recorded.log" timeout "$TIMEOUT_S" "$SC_BIN" run --keep "$traces" -- "${pytest_cmd[@]}"
    echo "$secs" > "$OUT/cupy-raw-recorded.s"
    echo "streamcheck run: ${secs}s, exit $rc (124: timed out), pytest: $(grep -E '(passed|failed|error)' "$OUT/cupy-raw-recorded.log" | tail -n 1)" | tee -a "$summary"
}
rm -f "$OUT"/cupy-raw-*-times.tsv
watch_recorded=1
if [ "$STAGE" = side ]; then
    # A stack dump stops the recorded run for a while: none side by side.
    watch_recorded=0
    # Side by side: Jitify's warm-up is per process and takes minutes, so
    # the two runs share the machine's state instead of taking turns.
    native_run &
    recorded_run &
    wait
else
    native_run
    recorded_run
fi
native_s=$(cat "$OUT/cupy-raw-native.s") rec_s=$(cat "$OUT/cupy-raw-recorded.s")
echo "ratio recorded/native: $(python3 -c "print(f'{$rec_s / max($native_s, 0.1):.2f}')")" | tee -a "$summary"
# Per test: a run the timeout ended still compares on the tests both finished.
python3 - "$OUT/cupy-raw-native-times.tsv" "$OUT/cupy-raw-recorded-times.tsv" <<'PY' | tee -a "$summary"
import sys
def load(p):
    try:
        return {l.split("\t")[0]: float(l.split("\t")[2]) for l in open(p) if l.count("\t") == 2}
    except OSError:
        return {}
nat, rec = load(sys.argv[1]), load(sys.argv[2])
both = [k for k in nat if k in rec]
n, r = sum(nat[k] for k in both), sum(rec[k] for k in both)
print(f"tests finished: native {len(nat)}, recorded {len(rec)}, both {len(both)}")
print(f"call time of the tests both finished: native {n:.1f}s, recorded {r:.1f}s, ratio {r / max(n, 0.001):.2f}")
for k in sorted(both, key=lambda k: -nat[k])[:8]:
    print(f"  {nat[k]:8.1f}s native {rec[k]:8.1f}s recorded  {k}")
PY
echo "traces:" >> "$summary"
ls -l "$traces" >> "$summary" 2>&1
grep '^streamcheck: stats:' "$OUT/cupy-raw-recorded.log" >> "$summary"
