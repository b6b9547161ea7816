#!/usr/bin/env bash
# gpu-run.sh — build, record and check the streamcheck test programs on a GPU
# machine, and compare the findings with the expectations in their headers.
#
# Usage (from the repository root):
#   OUT=/some/dir scripts/gpu-run.sh [build|record|check|report|all|backends]   (default: all)
#
#   build   compile every testdata/cuda/*.cu twice: -cudart static and -cudart shared
#   record  run every built binary and every testdata/python/*.py under
#           `bin/streamcheck record -o TRACEDIR -- PROGRAM`
#   check   run `bin/streamcheck check --format json --leak-check full TRACEDIR` for every trace
#           directory, then report
#   report  only compare the existing JSON with the expectations
#   all     build, record, check (and report)
#   backends  build, then record and check everything twice, with
#           STREAMCHECK_BACKEND=cupti and =interpose (into $SC_WORK/backend-B
#           and $OUT/backend-B), and write $OUT/backends.txt: every case whose
#           status or findings differ between the two (exit 1 if any does).
#           A plain run takes the backend from STREAMCHECK_BACKEND too.
# Every subcommand ends by packing what exists into $OUT/results.tar.gz and
# writing the PASS/FAIL table to $OUT/summary.txt; all output also goes to
# $OUT/log.txt.
#
# Needs: nvcc (CUDA 13), nvidia-smi, python3; bin/streamcheck and
# intercept/libstreamcheck.so prebuilt for record/check; torch and cupy in
# python3 for the Python cases (skipped if missing).
#
# Environment knobs (all optional):
#   OUT            output folder (default .gpu/out); only $OUT/* comes back
#   SC_WORK        work folder for binaries and traces (default .gpu/run; .gpu
#                  is git-ignored, so it survives between remote calls)
#   TRACE_DIR      where traces go (default $SC_WORK/traces): a second recording of
#                  the same binaries (another backend) keeps the first
#   ONLY           extended regex; only case names matching it are built/run/checked
#   BUILD_JOBS     parallel nvcc jobs (default 16)
#   RECORD_JOBS    parallel recordings of the CUDA binaries (default 4);
#                  Python cases always run one at a time
#   REC_TIMEOUT    seconds per CUDA program (default 60)
#   PY_TIMEOUT     seconds per Python program (default 180)
#   NVCC           nvcc to use (default: from PATH, else /usr/local/cuda/bin/nvcc)
#   NVCC_EXTRA     extra nvcc flags
#   RECORD_ARGS    extra arguments for `streamcheck record` (before --)
#   CHECK_ARGS     extra arguments for `streamcheck check`
#   SC_BIN         streamcheck binary (default bin/streamcheck)
#   STREAMCHECK_SHIM  the shim; defaults to intercept/libstreamcheck.so here,
#                  since `streamcheck record` only looks next to itself, in
#                  ../lib, or in $STREAMCHECK_SHIM
#   DOCTOR         set to 0 to skip `streamcheck doctor` before recording
#
# Exit status: 0 when every case passed (PASS or XFAIL), 1 when any case
# failed or could not be run, 2 when the setup is broken (no nvcc for build,
# or no streamcheck binary to read the rule ids from for report).
#
# The script never changes NVIDIA/NCCL environment variables.

set -u
set -o pipefail

REPO_ROOT="$(pwd)"
OUT="${OUT:-$REPO_ROOT/.gpu/out}"
SC_WORK="${SC_WORK:-$REPO_ROOT/.gpu/run}"
case "$SC_WORK" in /*) ;; *) SC_WORK="$REPO_ROOT/$SC_WORK" ;; esac
case "$OUT" in /*) ;; *) OUT="$REPO_ROOT/$OUT" ;; esac
BUILD_DIR="$SC_WORK/build"
TRACE_DIR="${TRACE_DIR:-$SC_WORK/traces}"
CUDA_SRC_DIR="$REPO_ROOT/testdata/cuda"
PY_SRC_DIR="$REPO_ROOT/testdata/python"
SC_BIN="${SC_BIN:-$REPO_ROOT/bin/streamcheck}"
case "$SC_BIN" in /*) ;; *) SC_BIN="$REPO_ROOT/$SC_BIN" ;; esac
SHIM="${STREAMCHECK_SHIM:-$REPO_ROOT/intercept/libstreamcheck.so}"
case "$SHIM" in /*) ;; *) SHIM="$REPO_ROOT/$SHIM" ;; esac
if [ -f "$SHIM" ]; then
    export STREAMCHECK_SHIM="$SHIM"
fi
ONLY="${ONLY:-}"
BUILD_JOBS="${BUILD_JOBS:-16}"
RECORD_JOBS="${RECORD_JOBS:-4}"
REC_TIMEOUT="${REC_TIMEOUT:-60}"
PY_TIMEOUT="${PY_TIMEOUT:-180}"
NVCC_EXTRA="${NVCC_EXTRA:-}"
RECORD_ARGS="${RECORD_ARGS:-}"
CHECK_ARGS="${CHECK_ARGS:-}"
VARIANTS="static shared"

mkdir -p "$OUT"
LOG="$OUT/log.txt"

log() { printf '[gpu-run %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

selected() {  # selected NAME: true if NAME passes the ONLY filter
    [ -z "$ONLY" ] && return 0
    printf '%s\n' "$1" | grep -Eq -- "$ONLY"
}

# cuda_cases: one "SOURCE VARIANT" line for each selected CUDA program and
# cudart variant, the list that build and record both work through.
cuda_cases() {
    local src variant
    for src in "$CUDA_SRC_DIR"/*.cu; do
        [ -f "$src" ] || continue
        selected "$(basename "$src" .cu)" || continue
        for variant in $VARIANTS; do
            printf '%s %s\n' "$src" "$variant"
        done
    done
}

find_nvcc() {
    if [ -n "${NVCC:-}" ]; then
        printf '%s\n' "$NVCC"
    elif command -v nvcc >/dev/null 2>&1; then
        command -v nvcc
    elif [ -x /usr/local/cuda/bin/nvcc ]; then
        printf '%s\n' /usr/local/cuda/bin/nvcc
    else
        return 1
    fi
}

# Directories holding libcudart.so of the toolkit that nvcc belongs to.
cuda_lib_dirs() {
    local nvcc root d out=""
    nvcc="$(find_nvcc)" || return 0
    root="$(cd "$(dirname "$(readlink -f "$nvcc")")/.." && pwd)"
    for d in "$root/lib64" "$root/targets/x86_64-linux/lib" "$root/lib"; do
        [ -d "$d" ] && out="${out:+$out:}$d"
    done
    printf '%s\n' "$out"
}

print_env() {
    log "repository: $REPO_ROOT"
    log "work folder: $SC_WORK   output folder: $OUT"
    log "nvidia-smi -L:"
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi -L 2>&1 | sed 's/^/    /'
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/    /'
    else
        echo "    nvidia-smi not found"
    fi
    local nvcc
    if nvcc="$(find_nvcc)"; then
        log "nvcc: $nvcc"
        "$nvcc" --version 2>&1 | sed 's/^/    /'
    else
        log "nvcc: not found"
    fi
    log "streamcheck: $SC_BIN $( [ -x "$SC_BIN" ] && echo '(present)' || echo '(MISSING)')"
    log "shim: $SHIM $( [ -f "$SHIM" ] && echo '(present)' || echo '(MISSING)')"
    if [ -x "$SC_BIN" ]; then
        "$SC_BIN" version 2>&1 | head -n 3 | sed 's/^/    /'
    fi
}

# ---------------------------------------------------------------------------
# build
# ---------------------------------------------------------------------------

build_one() {  # build_one SRC VARIANT  (run by xargs in a child bash)
    local src="$1" variant="$2" name out logf rc
    name="$(basename "$src" .cu)"
    out="$BUILD_DIR/$name-$variant"
    logf="$BUILD_DIR/logs/$name-$variant.log"
    rm -f "$out" "$BUILD_DIR/logs/$name-$variant.rc"
    # shellcheck disable=SC2086
    "$NVCC_BIN" -O2 -g -lineinfo -arch=sm_90 -I "$CUDA_SRC_DIR" -cudart "$variant" $NVCC_EXTRA \
        -o "$out" "$src" >"$logf" 2>&1
    rc=$?
    echo "$rc" >"$BUILD_DIR/logs/$name-$variant.rc"
    if [ "$rc" -eq 0 ]; then
        echo "built  $name-$variant"
    else
        echo "FAILED $name-$variant (rc=$rc, see build/logs/$name-$variant.log)"
    fi
    return 0
}

do_build() {
    local nvcc src name variant list nfail=0 total=0 f
    if ! nvcc="$(find_nvcc)"; then
        log "build: nvcc not found (set NVCC or PATH)"
        return 2
    fi
    export NVCC_BIN="$nvcc" BUILD_DIR CUDA_SRC_DIR NVCC_EXTRA
    export -f build_one
    list="$BUILD_DIR/build-list.txt"
    cuda_cases >"$list"
    total=$(wc -l <"$list")
    log "build: $total binaries with $nvcc, $BUILD_JOBS in parallel"
    local t0=$SECONDS
    xargs -P "$BUILD_JOBS" -L 1 bash -c 'build_one "$0" "$1"' <"$list"
    while read -r src variant; do
        name="$(basename "$src" .cu)"
        f="$BUILD_DIR/logs/$name-$variant.rc"
        if [ ! -f "$f" ] || [ "$(cat "$f")" != "0" ]; then
            nfail=$((nfail + 1))
            log "build failure: $name-$variant"
            sed 's/^/    /' "$BUILD_DIR/logs/$name-$variant.log" 2>/dev/null | head -n 40
        fi
    done <"$list"
    log "build: done in $((SECONDS - t0)) s, $nfail failure(s)"
    return 0
}

# ---------------------------------------------------------------------------
# record
# ---------------------------------------------------------------------------

# run_recorded CASE TIMEOUT ENVSPEC... -- PROGRAM ARGS...
# Writes $TRACE_DIR/CASE/ (trace), CASE.log (program + recorder output), CASE.rc.
run_recorded() {
    local case_name="$1" tmo="$2"
    shift 2
    local envs=()
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
        envs+=("$1")
        shift
    done
    shift  # --
    local tdir="$TRACE_DIR/$case_name" logf="$TRACE_DIR/$case_name.log" rc t0
    rm -rf "$tdir" "$logf" "$TRACE_DIR/$case_name.rc" "$TRACE_DIR/$case_name.json" \
        "$TRACE_DIR/$case_name.check.err" "$TRACE_DIR/$case_name.check.rc"
    t0=$(date +%s%N)
    {
        echo "# case: $case_name"
        echo "# env: ${envs[*]:-}"
        echo "# command: $*"
    } >"$logf"
    if [ -x "$SC_BIN" ]; then
        # shellcheck disable=SC2086
        env ${envs[@]+"${envs[@]}"} timeout -k 10 "$tmo" "$SC_BIN" record -o "$tdir" $RECORD_ARGS -- "$@" \
            >>"$logf" 2>&1
        rc=$?
    else
        # No recorder yet: still run the program so its behaviour can be seen.
        env ${envs[@]+"${envs[@]}"} timeout -k 10 "$tmo" "$@" >>"$logf" 2>&1
        rc=$?
        echo "# streamcheck missing: program ran WITHOUT recording" >>"$logf"
    fi
    echo "$rc" >"$TRACE_DIR/$case_name.rc"
    printf '%-48s rc=%-4s %6d ms\n' "$case_name" "$rc" "$(( ($(date +%s%N) - t0) / 1000000 ))"
    return 0
}

record_binary() {  # record_binary NAME VARIANT  (run by xargs in a child bash)
    local name="$1" variant="$2" bin envs=() need
    bin="$BUILD_DIR/$name-$variant"
    # A program that needs more GPUs than the machine has is skipped
    # (header "streamcheck-devices: N").
    need="$(sed -n 's|^// streamcheck-devices: *\([0-9]*\).*|\1|p' "$CUDA_SRC_DIR/$name.cu" | head -n 1)"
    if [ -n "$need" ] && [ "$need" -gt "$GPU_COUNT" ]; then
        echo "skip   $name-$variant (needs $need GPUs, this machine has $GPU_COUNT)"
        rm -rf "$TRACE_DIR/$name-$variant"
        echo "skipped" >"$TRACE_DIR/$name-$variant.rc"
        echo "needs $need GPUs" >"$TRACE_DIR/$name-$variant.skip"
        return 0
    fi
    if [ ! -x "$bin" ]; then
        echo "skip   $name-$variant (not built)"
        rm -rf "$TRACE_DIR/$name-$variant"
        echo "nobuild" >"$TRACE_DIR/$name-$variant.rc"
        return 0
    fi
    if [ "$variant" = "shared" ] && [ -n "$CUDA_LIBS" ] && ldd "$bin" 2>/dev/null | grep -q 'libcudart.*not found'; then
        envs+=("LD_LIBRARY_PATH=$CUDA_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    fi
    run_recorded "$name-$variant" "$REC_TIMEOUT" ${envs[@]+"${envs[@]}"} -- "$bin"
}

do_record() {
    local src name variant list n=0
    if [ ! -x "$SC_BIN" ]; then
        log "record: $SC_BIN is missing; programs run WITHOUT recording (no traces, check will report NOTRACE)"
    fi
    if [ ! -f "$SHIM" ]; then
        log "record: warning: $SHIM is missing"
    fi
    if [ -x "$SC_BIN" ] && [ "${DOCTOR:-1}" != "0" ]; then
        log "record: streamcheck doctor (self-tests on the GPU)"
        timeout -k 10 180 "$SC_BIN" doctor >"$TRACE_DIR/doctor.log" 2>&1
        local drc=$?
        sed 's/^/    /' "$TRACE_DIR/doctor.log"
        log "record: doctor exit status $drc"
    fi
    GPU_COUNT="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
    export TRACE_DIR BUILD_DIR SC_BIN REC_TIMEOUT RECORD_ARGS GPU_COUNT CUDA_SRC_DIR
    CUDA_LIBS="$(cuda_lib_dirs)"
    export CUDA_LIBS
    export -f run_recorded record_binary
    list="$TRACE_DIR/record-list.txt"
    cuda_cases | while read -r src variant; do
        printf '%s %s\n' "$(basename "$src" .cu)" "$variant"
    done >"$list"
    n=$(wc -l <"$list")
    log "record: $n CUDA binaries, $RECORD_JOBS at a time, timeout ${REC_TIMEOUT}s"
    local t0=$SECONDS
    xargs -P "$RECORD_JOBS" -L 1 bash -c 'record_binary "$0" "$1"' <"$list"
    log "record: CUDA binaries done in $((SECONDS - t0)) s"

    local have_torch=0 have_cupy=0 py
    if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
        have_torch=1
    fi
    if python3 -c 'import cupy' >/dev/null 2>&1; then
        have_cupy=1
    fi
    log "record: python3 $(python3 --version 2>&1); torch: $have_torch; cupy: $have_cupy"
    python3 -c 'import torch; print("    torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -n 1
    python3 -c 'import cupy; print("    cupy", cupy.__version__)' 2>&1 | tail -n 1
    for py in "$PY_SRC_DIR"/*.py; do
        [ -f "$py" ] || continue
        name="$(basename "$py" .py)"
        # *_plugin.py files are pytest plugins for the corpus, not programs.
        case "$name" in *_plugin) continue ;; esac
        selected "$name" || continue
        case "$name" in
            torch_nccl_* | cupy_nccl_*)
                # NCCL's calls are recorded through the shim's wrappers of
                # NCCL's functions, which only a preloaded shim interposes.
                if { [ "${name#torch_}" != "$name" ] && [ "$have_torch" -ne 1 ]; } ||
                    { [ "${name#cupy_}" != "$name" ] && ! python3 -c 'from cupy.cuda import nccl' >/dev/null 2>&1; }; then
                    echo "skip   $name-py (torch with CUDA, or cupy.cuda.nccl, not importable)"
                    echo "skipped" >"$TRACE_DIR/$name-py.rc"
                    echo "module not available" >"$TRACE_DIR/$name-py.skip"
                    continue
                fi
                RECORD_ARGS="$RECORD_ARGS --preload" run_recorded "$name-py" "$PY_TIMEOUT" \
                    "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync" NCCL_NVLS_ENABLE=0 -- python3 "$py"
                ;;
            torch_* | triton_*)
                if [ "$have_torch" -ne 1 ] || { [ "${name#triton_}" != "$name" ] && ! python3 -c 'import triton' >/dev/null 2>&1; }; then
                    echo "skip   $name-py (torch with CUDA, or triton, not importable)"
                    echo "skipped" >"$TRACE_DIR/$name-py.rc"
                    echo "module not available" >"$TRACE_DIR/$name-py.skip"
                    continue
                fi
                run_recorded "$name-py" "$PY_TIMEOUT" "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync" \
                    -- python3 "$py"
                ;;
            jax_*)
                if ! python3 -c 'import jax, sys; sys.exit(0 if jax.default_backend() == "gpu" else 1)' >/dev/null 2>&1; then
                    echo "skip   $name-py (jax with a GPU backend not importable)"
                    echo "skipped" >"$TRACE_DIR/$name-py.rc"
                    echo "module not available" >"$TRACE_DIR/$name-py.skip"
                    continue
                fi
                # JAX's stream-ordered allocator; torch (for DLPack hand-offs) on its cudaMallocAsync backend.
                run_recorded "$name-py" "$PY_TIMEOUT" XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async \
                    XLA_PYTHON_CLIENT_PREALLOCATE=false PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
                    -- python3 "$py"
                ;;
            cupy_*)
                if [ "$have_cupy" -ne 1 ]; then
                    echo "skip   $name-py (cupy not importable)"
                    echo "skipped" >"$TRACE_DIR/$name-py.rc"
                    echo "module not available" >"$TRACE_DIR/$name-py.skip"
                    continue
                fi
                run_recorded "$name-py" "$PY_TIMEOUT" -- python3 "$py"
                ;;
            *)
                run_recorded "$name-py" "$PY_TIMEOUT" -- python3 "$py"
                ;;
        esac
    done
    log "record: all done in $((SECONDS - t0)) s"
    return 0
}

# ---------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------

do_check() {
    local d case_name json rc n=0
    if [ ! -x "$SC_BIN" ]; then
        log "check: $SC_BIN is missing; nothing checked"
        return 0
    fi
    local t0=$SECONDS
    for d in "$TRACE_DIR"/*/; do
        [ -d "$d" ] || continue
        d="${d%/}"
        case_name="$(basename "$d")"
        selected "${case_name%-*}" || continue
        json="$TRACE_DIR/$case_name.json"
        # shellcheck disable=SC2086
        "$SC_BIN" check --format json --leak-check full $CHECK_ARGS "$d" >"$json" 2>"$TRACE_DIR/$case_name.check.err"
        rc=$?
        if [ ! -s "$json" ]; then
            # Fall back to naming the trace files themselves.
            local files=()
            while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$d" -type f -print0 | sort -z)
            if [ "${#files[@]}" -gt 0 ]; then
                # shellcheck disable=SC2086
                "$SC_BIN" check --format json --leak-check full $CHECK_ARGS "${files[@]}" >"$json" \
                    2>>"$TRACE_DIR/$case_name.check.err"
                rc=$?
            fi
        fi
        echo "$rc" >"$TRACE_DIR/$case_name.check.rc"
        n=$((n + 1))
    done
    log "check: $n trace folder(s) checked in $((SECONDS - t0)) s"
    return 0
}

# ---------------------------------------------------------------------------
# report: compare the JSON with the expectations in the source headers
# ---------------------------------------------------------------------------

do_report() {
    python3 - "$REPO_ROOT" "$SC_WORK" "$ONLY" "$SC_BIN" <<'PYEOF'
import json
import os
import re
import subprocess
import sys

repo, work, only, sc_bin = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
trace_dir = os.path.join(work, "traces")
build_dir = os.path.join(work, "build")



def rules_of(binary):
    """The rule ids streamcheck reports, read from its own SARIF (the demo's
    run lists every rule), so that a new rule is never ignored here."""
    try:
        out = subprocess.run([binary, "demo", "--format", "sarif"], capture_output=True, text=True,
                             timeout=120).stdout
        return {r["id"] for r in json.loads(out)["runs"][0]["tool"]["driver"]["rules"]}
    except (OSError, ValueError, KeyError, IndexError, subprocess.SubprocessError) as e:
        print(f"report: cannot read the rules from {binary}: {e}", file=sys.stderr)
        sys.exit(2)


KNOWN = rules_of(sc_bin)
RULE_KEYS = ("rule", "rule_id", "ruleId", "ruleID", "id", "check", "kind", "type", "code", "name")
LIST_KEYS = ("findings", "diagnostics", "results", "issues", "reports", "problems", "errors", "warnings")
HEADER = re.compile(r"^\s*(?://|#)\s*streamcheck-(expect-count|expect-api|expect|allow|may-fail)\s*:\s*(.*?)\s*$")


def norm(v):
    return v.strip().lower().replace("_", "-") if isinstance(v, str) else None


def parse_header(path):
    exp, allow, may_fail, apis = {}, set(), [], set()
    last = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f):
            if i > 60:
                break
            m = HEADER.match(line)
            if not m:
                continue
            key, val = m.group(1), m.group(2)
            word = norm(val.split()[0]) if val.split() else ""
            if key == "expect":
                if word == "clean":
                    last = None
                    continue
                exp.setdefault(word, None)
                last = word
            elif key == "expect-count":
                n = re.match(r"\d+", val)
                if n and last is not None:
                    exp[last] = int(n.group(0))
            elif key == "allow":
                allow.add(word)
            elif key == "expect-api":
                apis.add(val.split()[0])
            else:
                may_fail.append(val)
    return exp, allow, may_fail, apis


def apis_of(doc):
    """API names of the reported operations (each finding's first operation)."""
    out = set()
    for f in (doc.get("findings") or []) if isinstance(doc, dict) else []:
        ops = f.get("operations") if isinstance(f, dict) else None
        if isinstance(ops, list) and ops and isinstance(ops[0], dict):
            out.add(str(ops[0].get("api", "")))
    return out


def rule_of(d):
    for k in RULE_KEYS:
        v = norm(d.get(k))
        if v in KNOWN:
            return v
    return None


def walk(node, out):
    if isinstance(node, dict):
        r = rule_of(node)
        if r is not None:
            out.append(r)
            return
        for v in node.values():
            walk(v, out)
    elif isinstance(node, list):
        for v in node:
            walk(v, out)


def findings_of(doc):
    """List of rule ids, one per finding, from streamcheck's JSON (shape-tolerant)."""
    lists = []
    if isinstance(doc, list):
        lists.append(doc)
    elif isinstance(doc, dict):
        for k in LIST_KEYS:
            if isinstance(doc.get(k), list):
                lists.append(doc[k])
        if not lists and isinstance(doc.get("runs"), list):  # SARIF
            for run in doc["runs"]:
                if isinstance(run, dict) and isinstance(run.get("results"), list):
                    lists.append(run["results"])
    out = []
    if lists:  # a findings list exists (possibly empty): trust it
        for lst in lists:
            for item in lst:
                r = rule_of(item) if isinstance(item, dict) else None
                if r is not None:
                    out.append(r)
        return out
    walk(doc, out)
    return out


def trace_notes(doc):
    """Damage, dropped events and repeated findings reported by streamcheck check.
    Returns (notes, bad); bad means the trace cannot be trusted to be complete."""
    notes, bad = [], False
    if not isinstance(doc, dict):
        return notes, bad
    for t in doc.get("traces") or []:
        if not isinstance(t, dict):
            continue
        name = os.path.basename(str(t.get("file", "")))
        if t.get("damage"):
            notes.append(f"trace {name} damaged: {str(t['damage'])[:100]}")
            bad = True
        if t.get("dropped"):
            notes.append(f"trace {name} dropped {t['dropped']} event(s)")
            bad = True
    if isinstance(doc.get("traces"), list) and not doc["traces"]:
        notes.append("no trace file in the folder")
        bad = True
    for f in doc.get("findings") or []:
        if isinstance(f, dict) and isinstance(f.get("count"), int) and f["count"] > 1:
            notes.append(f"{f.get('rule')} repeated {f['count']}x")
    return notes, bad


def load_json(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if not text.strip():
        raise ValueError("empty output")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        docs = [json.loads(l) for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]
        return docs


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return default


def fmt(counts):
    if not counts:
        return "clean"
    return ",".join(f"{r}({n})" if n != 1 else r for r, n in sorted(counts.items()))


cases = []
cuda_dir = os.path.join(repo, "testdata", "cuda")
py_dir = os.path.join(repo, "testdata", "python")
for fn in sorted(os.listdir(cuda_dir)) if os.path.isdir(cuda_dir) else []:
    if fn.endswith(".cu"):
        for variant in ("static", "shared"):
            cases.append((fn[:-3], variant, os.path.join(cuda_dir, fn)))
for fn in sorted(os.listdir(py_dir)) if os.path.isdir(py_dir) else []:
    if fn.endswith(".py") and not fn.endswith("_plugin.py"):
        cases.append((fn[:-3], "py", os.path.join(py_dir, fn)))

rows, records = [], []
tally = {"PASS": 0, "XFAIL": 0, "FAIL": 0, "ERROR": 0, "SKIP": 0}
for name, variant, src in cases:
    if only and not re.search(only, name):
        continue
    case = f"{name}-{variant}"
    exp, allow, may_fail, want_apis = parse_header(src)
    reported_apis = set()
    rc = read(os.path.join(trace_dir, case + ".rc"), "").strip()
    plog = read(os.path.join(trace_dir, case + ".log"))
    notes = []
    soft_fail = "STREAMCHECK_SOFT_FAIL" in plog
    if soft_fail:
        notes.append("racy call rejected by CUDA")
    if "STREAMCHECK_SOFT_OK" in plog:
        notes.append("racy call accepted by CUDA")
    hard = plog.count("STREAMCHECK_CUDA_ERROR")
    if hard:
        notes.append(f"{hard} unexpected CUDA error(s)")
    for m in re.finditer(r"STREAMCHECK_NOTE (address reused: \w+|.*timed out.*|.*unexpectedly.*)", plog):
        notes.append(m.group(1).split(" (")[0])
    found = {}
    status = None
    incomplete = False
    if variant != "py":
        brc = read(os.path.join(build_dir, "logs", case + ".rc"), "").strip()
        if brc and brc != "0":
            status, notes = "ERROR", ["build failed"] + notes
    if status is None:
        if rc == "":
            status, notes = "ERROR", ["not recorded"] + notes
        elif rc == "skipped":
            why = read(os.path.join(trace_dir, case + ".skip"), "").strip() or "skipped"
            status, notes = "SKIP", [why] + notes
        elif rc == "nobuild":
            status, notes = "ERROR", ["not built"] + notes
        elif rc in ("124", "137"):
            status, notes = "ERROR", [f"timed out (rc={rc})"] + notes
    if status is None:
        jpath = os.path.join(trace_dir, case + ".json")
        if not os.path.isfile(jpath):
            status, notes = "ERROR", ["NOTRACE: no check output"] + notes
        else:
            crc = read(os.path.join(trace_dir, case + ".check.rc"), "").strip()
            if crc in ("2", "3"):
                notes.append(f"check exit {crc}")
            try:
                doc = load_json(jpath)
                for r in findings_of(doc):
                    found[r] = found.get(r, 0) + 1
                reported_apis = apis_of(doc)
                tnotes, incomplete = trace_notes(doc)
                notes.extend(tnotes)
            except Exception as e:  # noqa: BLE001
                err = read(os.path.join(trace_dir, case + ".check.err")).strip().splitlines()
                status = "ERROR"
                notes = [f"check output unreadable: {e}"] + ([err[-1][:120]] if err else []) + notes
    missing, unexpected = [], []
    if status is None:
        for r, n in exp.items():
            got = found.get(r, 0)
            if got == 0 or (n is not None and got != n):
                missing.append(f"{r}: want {n if n is not None else '>=1'} got {got}")
        for r, n in found.items():
            if r not in exp and r not in allow:
                unexpected.append(f"{r}({n})")
        for api in sorted(want_apis - reported_apis):
            missing.append(f"no finding reported at {api}")
        if rc != "0":
            notes.insert(0, f"program exit {rc}")
        if not missing and not unexpected:
            status = "PASS" if rc == "0" and not incomplete else "FAIL"
        elif missing and not unexpected and soft_fail and may_fail:
            status = "XFAIL"
            notes.insert(0, "expected finding missing because CUDA rejected the racy call")
        else:
            status = "FAIL"
        if missing:
            notes.insert(0, "missing " + "; ".join(missing))
        if unexpected:
            notes.insert(0, "unexpected " + ", ".join(unexpected))
    tally[status] += 1
    want = {r: (n if n is not None else 1) for r, n in exp.items()}
    rows.append((case, status, fmt(want) + (" (+allow " + ",".join(sorted(allow)) + ")" if allow else ""),
                 fmt(found) if status not in ("ERROR", "SKIP") or found else "-", "; ".join(notes)))
    records.append({"case": case, "program": name, "variant": variant, "status": status,
                    "expected": {r: n for r, n in exp.items()}, "allowed": sorted(allow),
                    "found": found, "exit": rc, "notes": notes})

w0 = max([len(r[0]) for r in rows] + [4])
w2 = max([len(r[2]) for r in rows] + [8])
w3 = max([len(r[3]) for r in rows] + [5])
lines = [f"{'case':<{w0}}  {'status':<6}  {'expected':<{w2}}  {'found':<{w3}}  notes",
         f"{'-' * w0}  ------  {'-' * w2}  {'-' * w3}  -----"]
for case, status, want, got, note in rows:
    lines.append(f"{case:<{w0}}  {status:<6}  {want:<{w2}}  {got:<{w3}}  {note}")
lines.append("")
lines.append(f"{tally['PASS'] + tally['XFAIL']} passed, {tally['FAIL'] + tally['ERROR']} failed"
             f" (PASS {tally['PASS']}, XFAIL {tally['XFAIL']}, FAIL {tally['FAIL']},"
             f" ERROR {tally['ERROR']}, SKIP {tally['SKIP']})")
table = "\n".join(lines) + "\n"
with open(os.path.join(work, "results.txt"), "w", encoding="utf-8") as f:
    f.write(table)
with open(os.path.join(work, "results.json"), "w", encoding="utf-8") as f:
    json.dump({"tally": tally, "cases": records}, f, indent=1, sort_keys=True)
sys.stdout.write(table)
sys.exit(0 if tally["FAIL"] + tally["ERROR"] == 0 else 1)
PYEOF
}

# ---------------------------------------------------------------------------
# pack results into $OUT (at most 8 files come back, 16 MiB each)
# ---------------------------------------------------------------------------

do_pack() {
    local limit=$((15 * 1024 * 1024)) size items=() i
    [ -f "$SC_WORK/results.txt" ] && cp "$SC_WORK/results.txt" "$OUT/summary.txt"
    rm -f "$OUT"/results.tar.gz "$OUT"/traces.tar.gz.part-*
    for i in traces build/logs results.txt results.json; do
        [ -e "$SC_WORK/$i" ] && items+=("$i")
    done
    if [ "${#items[@]}" -eq 0 ]; then
        log "pack: nothing to pack yet"
        return 0
    fi
    tar -C "$SC_WORK" -S -czf "$OUT/results.tar.gz" "${items[@]}"
    size=$(stat -c %s "$OUT/results.tar.gz")
    if [ "$size" -gt "$limit" ]; then
        log "pack: full archive is $size bytes (> 15 MiB); traces go into separate parts"
        items=()
        for i in build/logs results.txt results.json; do
            [ -e "$SC_WORK/$i" ] && items+=("$i")
        done
        # everything but the raw trace folders: logs, rc files and JSON reports
        (cd "$SC_WORK" && find traces -maxdepth 1 -type f -print0) >"$SC_WORK/.pack-list"
        tar -C "$SC_WORK" -S -czf "$OUT/results.tar.gz" ${items[@]+"${items[@]}"} --null -T "$SC_WORK/.pack-list"
        tar -C "$SC_WORK" -S -czf - traces | split -b 15m -d -a 2 - "$OUT/traces.tar.gz.part-"
        local parts
        parts=$(find "$OUT" -maxdepth 1 -name 'traces.tar.gz.part-*' | wc -l)
        if [ "$parts" -gt 5 ]; then
            log "pack: traces need $parts parts; only the first 5 fit in the 8 returned files; dropping the rest"
            find "$OUT" -maxdepth 1 -name 'traces.tar.gz.part-*' | sort | tail -n +6 | xargs -r rm -f
        fi
        log "pack: reassemble with: cat traces.tar.gz.part-* | tar -xzf -"
    fi
    log "pack: $(ls -l "$OUT" | tail -n +2 | awk '{print $NF" "$5}' | tr '\n' ' ')"
    return 0
}

# ---------------------------------------------------------------------------
# backends: the whole suite under each recording backend, findings compared
# ---------------------------------------------------------------------------

do_backends() {
    local b rc=0
    for b in cupti interpose; do
        mkdir -p "$SC_WORK/backend-$b" "$OUT/backend-$b"
        ln -sfn "$BUILD_DIR" "$SC_WORK/backend-$b/build"
        log "backends: recording with the $b backend"
        STREAMCHECK_BACKEND=$b SC_WORK="$SC_WORK/backend-$b" OUT="$OUT/backend-$b" bash "$0" record >/dev/null
        STREAMCHECK_BACKEND=$b SC_WORK="$SC_WORK/backend-$b" OUT="$OUT/backend-$b" bash "$0" check >/dev/null
    done
    # summary.txt: "case  status  expected  found  notes", columns two or more spaces apart.
    local a="$OUT/backend-cupti/summary.txt" i="$OUT/backend-interpose/summary.txt"
    if [ ! -s "$a" ] || [ ! -s "$i" ]; then
        log "backends: a summary is missing ($a, $i)"
        return 1
    fi
    awk -F'  +' '
        FNR == 1 { file++ }
        /^#/ || $1 ~ /^-+$/ || $1 == "case" || NF < 2 { next }
        file == 1 { cs[$1] = $2; cf[$1] = $4; order[++n] = $1; next }
        { is[$1] = $2; if_[$1] = $4; if (!($1 in cs)) order[++n] = $1 }
        END {
            printf "%-44s %-8s %-8s %s\n", "case", "cupti", "interpose", "findings (cupti | interpose)"
            d = 0
            for (k = 1; k <= n; k++) {
                c = order[k]
                if (cs[c] == is[c] && cf[c] == if_[c]) continue
                d++
                printf "%-44s %-8s %-8s %s | %s\n", c, cs[c], is[c], cf[c], if_[c]
            }
            printf "%d of %d cases differ\n", d, n
            exit d > 0
        }' "$a" "$i" >"$OUT/backends.txt" || rc=1
    log "backends: $(tail -1 "$OUT/backends.txt")"
    return "$rc"
}

# ---------------------------------------------------------------------------

main() {
    local cmd="${1:-all}" rc=0 r
    log "gpu-run.sh $cmd   (ONLY='${ONLY}')"
    case "$cmd" in
        build|record|check|report|all|backends) mkdir -p "$BUILD_DIR/logs" "$TRACE_DIR" ;;
    esac
    print_env
    case "$cmd" in
        build)
            do_build; rc=$?
            ;;
        record)
            do_record; rc=$?
            ;;
        check)
            do_check
            do_report; rc=$?
            ;;
        report)
            do_report; rc=$?
            ;;
        all)
            do_build; r=$?
            if [ "$r" -eq 2 ]; then
                rc=2
            else
                do_record
                do_check
                do_report; rc=$?
            fi
            ;;
        backends)
            do_build; r=$?
            if [ "$r" -eq 2 ]; then
                rc=2
            else
                do_backends; rc=$?
            fi
            ;;
        -h|--help|help)
            sed -n '2,40p' "$0"
            return 0
            ;;
        *)
            echo "usage: $0 [build|record|check|report|all|backends]" >&2
            return 2
            ;;
    esac
    do_pack
    log "exit status $rc"
    return "$rc"
}

main "$@" 2>&1 | tee -a "$LOG"
exit "${PIPESTATUS[0]}"
