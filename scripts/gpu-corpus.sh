#!/usr/bin/env bash
# gpu-corpus.sh — trace a corpus of real-world programs with streamcheck on a
# GPU machine and, side by side, run them natively and under compute-sanitizer's
# stream-ordered race check, timing all three.
#
# Usage (from the repository root):
#   OUT=/some/dir scripts/gpu-corpus.sh MANIFEST [MANIFEST...]
#
# A manifest is tab-separated, one program a line ('#' lines and blank lines
# are ignored):
#   name  kind  expected  workdir  command [timeout_s]
# kind is cuda, cupy or torch; expected is `clean`, `review` (findings are
# judged by hand), or the comma-separated rule ids a racy program must show;
# workdir is relative to the repository root; command is a shell-quoted
# command line whose leading NAME=VALUE words are environment settings.
# The script runs the programs as given and never builds anything.
#
# For each program: native run (timed), `streamcheck record -o TRACEDIR --
# command` (timed), `streamcheck check --format json TRACEDIR`; then, in a
# second pass and while the deadline allows, `compute-sanitizer --tool
# memcheck --track-stream-ordered-races all command` (timed, its "ERROR
# SUMMARY" kept).
#
# Writes to $OUT:
#   corpus-summary.tsv   one row a program: name, kind, expected, verdict,
#                        native s, streamcheck s, sanitizer s (or skipped /
#                        timeout), calls recorded (events), error findings by
#                        rule, warnings by rule, sanitizer errors, exit codes,
#                        notes
#   corpus-traces.tar.gz the trace folders (those over KEEP_TRACE_MB are left
#                        out and named in the log and the notes), the JSON
#                        reports and every program's output
#   corpus-log.txt       this script's log
#
# Environment knobs (all optional):
#   SC_WORK          work folder (default .gpu/corpus)
#   SC_BIN           streamcheck binary (default bin/streamcheck)
#   STREAMCHECK_SHIM the shim (default intercept/libstreamcheck.so, else
#                    bin/libstreamcheck.so)
#   JOBS             programs run at the same time (default 4; timings are
#                    taken under this much sharing of the GPU and CPUs)
#   TIMEOUT_CUDA, TIMEOUT_CUPY, TIMEOUT_TORCH
#                    seconds per native or recorded run (default 60, 300, 240);
#                    a manifest's sixth column overrides them
#   SANITIZER        0 to skip compute-sanitizer (default 1)
#   SAN_KINDS        kinds run under compute-sanitizer (default "cuda cupy torch")
#   SAN_TIMEOUT      seconds per compute-sanitizer run (default 150)
#   COMPUTE_SANITIZER  the tool (default from PATH, else /usr/local/cuda/bin)
#   DEADLINE_S       seconds after the start past which no new run begins:
#                    later runs are marked skipped (default 480)
#   ONLY             extended regex on names
#   RECORD_ARGS, CHECK_ARGS  extra arguments for record and check
#   KEEP_TRACE_MB    trace folders larger than this are not packed (default 3)
#
# Exit status: 0 when every verdict is ok, found or review; 1 otherwise; 2
# when the setup is broken (no manifest, no streamcheck binary).
#
# The script never changes NVIDIA/NCCL environment variables.

set -u
set -o pipefail

REPO_ROOT="$(pwd)"
OUT="${OUT:-$REPO_ROOT/.gpu/out}"
SC_WORK="${SC_WORK:-$REPO_ROOT/.gpu/corpus}"
case "$SC_WORK" in /*) ;; *) SC_WORK="$REPO_ROOT/$SC_WORK" ;; esac
case "$OUT" in /*) ;; *) OUT="$REPO_ROOT/$OUT" ;; esac
SC_BIN="${SC_BIN:-$REPO_ROOT/bin/streamcheck}"
case "$SC_BIN" in /*) ;; *) SC_BIN="$REPO_ROOT/$SC_BIN" ;; esac
SHIM="${STREAMCHECK_SHIM:-}"
if [ -z "$SHIM" ]; then
    SHIM="$REPO_ROOT/intercept/libstreamcheck.so"
    [ -f "$SHIM" ] || SHIM="$REPO_ROOT/bin/libstreamcheck.so"
fi
case "$SHIM" in /*) ;; *) SHIM="$REPO_ROOT/$SHIM" ;; esac
[ -f "$SHIM" ] && export STREAMCHECK_SHIM="$SHIM"
JOBS="${JOBS:-4}"
TIMEOUT_CUDA="${TIMEOUT_CUDA:-60}"
TIMEOUT_CUPY="${TIMEOUT_CUPY:-300}"
TIMEOUT_TORCH="${TIMEOUT_TORCH:-240}"
SANITIZER="${SANITIZER:-1}"
SAN_KINDS="${SAN_KINDS:-cuda cupy torch}"
SAN_TIMEOUT="${SAN_TIMEOUT:-150}"
DEADLINE_S="${DEADLINE_S:-480}"
ONLY="${ONLY:-}"
RECORD_ARGS="${RECORD_ARGS:-}"
CHECK_ARGS="${CHECK_ARGS:-}"
KEEP_TRACE_MB="${KEEP_TRACE_MB:-3}"
RES="$SC_WORK/res"
TRACES="$SC_WORK/traces"
START_EPOCH="$(date +%s)"

mkdir -p "$OUT"
LOG="$OUT/corpus-log.txt"

log() { printf '[gpu-corpus %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

find_sanitizer() {
    if [ -n "${COMPUTE_SANITIZER:-}" ]; then
        printf '%s\n' "$COMPUTE_SANITIZER"
    elif command -v compute-sanitizer >/dev/null 2>&1; then
        command -v compute-sanitizer
    elif [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
        printf '%s\n' /usr/local/cuda/bin/compute-sanitizer
    else
        return 1
    fi
}

print_env() {
    log "repository: $REPO_ROOT   work folder: $SC_WORK   output folder: $OUT"
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/    /'
    else
        echo "    nvidia-smi not found"
    fi
    log "streamcheck: $SC_BIN $( [ -x "$SC_BIN" ] && echo '(present)' || echo '(MISSING)')"
    log "shim: $SHIM $( [ -f "$SHIM" ] && echo '(present)' || echo '(MISSING)')"
    local san
    if san="$(find_sanitizer)"; then
        log "compute-sanitizer: $san ($("$san" --version 2>&1 | grep -i version | head -n 1))"
    else
        log "compute-sanitizer: not found"
    fi
    log "python3: $(python3 --version 2>&1)"
    log "jobs: $JOBS   deadline: ${DEADLINE_S}s   sanitizer: $SANITIZER ($SAN_KINDS, ${SAN_TIMEOUT}s each)"
}

# past_deadline: true once DEADLINE_S seconds have gone by since the start.
past_deadline() { [ $(( $(date +%s) - START_EPOCH )) -ge "$DEADLINE_S" ]; }

# timed OUTFILE RCFILE TIMEFILE TIMEOUT -- ENV... -- CMD...: runs CMD under
# timeout with the environment settings, writes its output, status and
# wall-clock seconds.
timed() {
    local outf="$1" rcf="$2" tf="$3" tmo="$4" t0 t1 rc
    shift 4
    shift  # --
    local envs=()
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift  # --
    t0=$(date +%s%N)
    env ${envs[@]+"${envs[@]}"} timeout -k 10 "$tmo" "$@" >"$outf" 2>&1 </dev/null
    rc=$?
    t1=$(date +%s%N)
    echo "$rc" >"$rcf"
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", (b - a) / 1e9 }' >"$tf"
    return 0
}

# parse_entry FILE: sets E_NAME E_KIND E_EXPECT E_DIR E_TMO and the arrays
# E_ENV (leading NAME=VALUE words) and E_CMD from one manifest line.
parse_entry() {
    local line cmd
    line="$(cat "$1")"
    IFS=$'\t' read -r E_NAME E_KIND E_EXPECT E_DIR cmd E_TMO <<<"$line"
    if [ -z "${E_TMO:-}" ]; then
        case "$E_KIND" in
            cupy) E_TMO="$TIMEOUT_CUPY" ;;
            torch) E_TMO="$TIMEOUT_TORCH" ;;
            *) E_TMO="$TIMEOUT_CUDA" ;;
        esac
    fi
    E_ENV=()
    E_CMD=()
    local words=()
    eval "words=($cmd)"
    local w seen_cmd=0
    for w in ${words[@]+"${words[@]}"}; do
        if [ "$seen_cmd" -eq 0 ] && [[ "$w" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then
            E_ENV+=("$w")
        else
            seen_cmd=1
            E_CMD+=("$w")
        fi
    done
    case "$E_DIR" in /*) ;; *) E_DIR="$REPO_ROOT/$E_DIR" ;; esac
}

# run_entry NAME: native, recorded and checked runs of one program.
run_entry() {
    local name="$1" r="$RES/$1"
    parse_entry "$RES/$name.entry"
    rm -rf "$TRACES/$name"
    {
        echo "# name: $E_NAME  kind: $E_KIND  expected: $E_EXPECT"
        echo "# workdir: $E_DIR"
        echo "# env: ${E_ENV[*]:-}"
        echo "# command: ${E_CMD[*]:-}"
    } >"$r.cmd"
    if [ "${#E_CMD[@]}" -eq 0 ] || [ ! -d "$E_DIR" ]; then
        echo "bad entry (no command or no folder $E_DIR)" >"$r.error"
        echo "error  $name (bad entry)"
        return 0
    fi
    if past_deadline; then
        echo "deadline" >"$r.native.rc"
        echo "skipped (deadline) $name"
        return 0
    fi
    cd "$E_DIR" || return 0
    timed "$r.native.log" "$r.native.rc" "$r.native.s" "$E_TMO" -- ${E_ENV[@]+"${E_ENV[@]}"} -- "${E_CMD[@]}"
    # shellcheck disable=SC2086
    timed "$r.record.log" "$r.record.rc" "$r.record.s" "$E_TMO" -- ${E_ENV[@]+"${E_ENV[@]}"} -- \
        "$SC_BIN" record -o "$TRACES/$name" $RECORD_ARGS -- "${E_CMD[@]}"
    cd "$REPO_ROOT" || return 0
    if [ -d "$TRACES/$name" ]; then
        # shellcheck disable=SC2086
        "$SC_BIN" check --format json $CHECK_ARGS "$TRACES/$name" >"$r.json" 2>"$r.check.err"
        echo "$?" >"$r.check.rc"
    else
        echo "no trace folder" >"$r.check.err"
    fi
    printf '%-48s native rc=%-3s %7ss   streamcheck rc=%-3s %7ss\n' "$name" \
        "$(cat "$r.native.rc")" "$(cat "$r.native.s")" "$(cat "$r.record.rc")" "$(cat "$r.record.s")"
    return 0
}

# san_entry NAME: the same program under compute-sanitizer's stream-ordered check.
san_entry() {
    local name="$1" r="$RES/$1" k
    parse_entry "$RES/$name.entry"
    local want=0
    for k in $SAN_KINDS; do [ "$k" = "$E_KIND" ] && want=1; done
    if [ "$want" -ne 1 ]; then
        echo "skipped" >"$r.san.status"
        return 0
    fi
    if past_deadline; then
        echo "skipped(deadline)" >"$r.san.status"
        return 0
    fi
    if [ "${#E_CMD[@]}" -eq 0 ] || [ ! -d "$E_DIR" ]; then
        echo "skipped" >"$r.san.status"
        return 0
    fi
    cd "$E_DIR" || return 0
    timed "$r.san.log" "$r.san.rc" "$r.san.s" "$SAN_TIMEOUT" -- ${E_ENV[@]+"${E_ENV[@]}"} -- \
        "$SAN_BIN" --tool memcheck --track-stream-ordered-races all "${E_CMD[@]}"
    cd "$REPO_ROOT" || return 0
    case "$(cat "$r.san.rc")" in
        124 | 137) echo "timeout" >"$r.san.status" ;;
        *) echo "ran" >"$r.san.status" ;;
    esac
    printf '%-48s sanitizer rc=%-3s %7ss  %s\n' "$name" "$(cat "$r.san.rc")" "$(cat "$r.san.s")" \
        "$(grep -o 'ERROR SUMMARY: [0-9]* error[s]*' "$r.san.log" | tail -n 1)"
    return 0
}

load_manifests() {  # load_manifests FILE...: one $RES/NAME.entry per line; names in $SC_WORK/names.txt
    local f line name n=0
    : >"$SC_WORK/names.txt"
    for f in "$@"; do
        if [ ! -f "$f" ]; then
            log "manifest $f not found"
            return 2
        fi
        while IFS= read -r line || [ -n "$line" ]; do
            case "$line" in '' | '#'*) continue ;; esac
            name="${line%%$'\t'*}"
            if ! [[ "$name" =~ ^[A-Za-z0-9_.+-]+$ ]]; then
                log "manifest $f: bad name '$name'"
                continue
            fi
            if [ -n "$ONLY" ] && ! printf '%s\n' "$name" | grep -Eq -- "$ONLY"; then
                continue
            fi
            if grep -qx -- "$name" "$SC_WORK/names.txt"; then
                log "manifest $f: duplicate name $name (later line ignored)"
                continue
            fi
            printf '%s\n' "$line" >"$RES/$name.entry"
            printf '%s\n' "$name" >>"$SC_WORK/names.txt"
            n=$((n + 1))
        done <"$f"
    done
    log "manifest: $n program(s) from $*"
    return 0
}

summarize() {
    python3 - "$RES" "$TRACES" "$SC_WORK/names.txt" "$SC_WORK/corpus-summary.tsv" "$SC_WORK/dropped.txt" <<'PYEOF'
import json, os, re, sys

res, traces, names_file, out, dropped_file = sys.argv[1:6]


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return default


dropped = set(read(dropped_file).split())
rows = []
bad = 0
for name in read(names_file).split():
    p = os.path.join(res, name)
    entry = read(p + ".entry").split("\t")
    kind = entry[1] if len(entry) > 1 else "?"
    expected = entry[2] if len(entry) > 2 else "?"
    notes = []
    native_rc, record_rc = read(p + ".native.rc", "-"), read(p + ".record.rc", "-")
    native_s = read(p + ".native.s", "-")
    record_s = read(p + ".record.s", "-")
    if native_rc == "deadline":
        native_s = record_s = "skipped(deadline)"
    for what, rc in (("native", native_rc), ("streamcheck", record_rc)):
        if rc in ("124", "137"):
            notes.append(f"{what} timed out")
    st = read(p + ".san.status", "skipped")
    san_s, san_err = st, "-"
    if st in ("ran", "timeout"):
        san_s = read(p + ".san.s", "-") if st == "ran" else "timeout"
        m = re.findall(r"ERROR SUMMARY: (\d+) error", read(p + ".san.log"))
        san_err = m[-1] if m else "-"
        if st == "ran" and read(p + ".san.rc") not in ("0", ""):
            notes.append(f"sanitizer exit {read(p + '.san.rc')}")
    events, errs, warns, verdict = "-", {}, {}, None
    if read(p + ".error"):
        verdict = "ERROR"
        notes.append(read(p + ".error"))
    jtext = read(p + ".json")
    doc = None
    if verdict is None:
        try:
            doc = json.loads(jtext) if jtext else None
        except json.JSONDecodeError as e:
            notes.append(f"check output unreadable: {e}")
    if doc is None and verdict is None:
        verdict = "NOTRACE" if native_rc != "deadline" else "SKIPPED"
        err = read(p + ".check.err").splitlines()
        if err:
            notes.append(err[-1][:160])
    if doc is not None:
        ts = doc.get("traces") or []
        events = str(sum(int(t.get("events") or 0) for t in ts))
        for t in ts:
            if t.get("damage"):
                notes.append(f"trace damaged: {str(t['damage'])[:100]}")
            if t.get("dropped"):
                notes.append(f"dropped {t['dropped']} call(s)")
        if not ts:
            notes.append("no trace file")
        for f in doc.get("findings") or []:
            d = errs if f.get("severity") == "error" else warns
            rule = str(f.get("rule"))
            d[rule] = d.get(rule, 0) + 1
        if not ts:
            verdict = "NOTRACE"
        elif record_rc in ("124", "137"):
            verdict = "TIMEOUT"
        elif expected == "clean":
            verdict = "ok" if not errs else "FALSE-ALARM?"
        elif expected == "review":
            verdict = "review"
        else:
            want = [r for r in expected.split(",") if r]
            miss = [r for r in want if r not in errs and r not in warns]
            verdict = "found" if not miss else "MISSING " + ",".join(miss)
    if native_rc not in ("0", "-", "deadline"):
        notes.append(f"native exit {native_rc}")
    if record_rc not in ("0", "-", native_rc):
        notes.append(f"recorded exit {record_rc}")
    if name in dropped:
        notes.append("trace not packed (too large)")
    if verdict not in ("ok", "found", "review", "SKIPPED"):
        bad += 1

    def fmt(d):
        return ",".join(f"{r}x{n}" for r, n in sorted(d.items())) or "-"

    rows.append([name, kind, expected, verdict, native_s, record_s, san_s, events, fmt(errs),
                 fmt(warns), san_err, native_rc, record_rc, "; ".join(notes) or "-"])
head = ["name", "kind", "expected", "verdict", "native_s", "streamcheck_s", "sanitizer_s", "events",
        "errors", "warnings", "sanitizer_errors", "native_rc", "record_rc", "notes"]
with open(out, "w", encoding="utf-8") as f:
    f.write("\t".join(head) + "\n")
    for r in rows:
        f.write("\t".join(x.replace("\t", " ") for x in r) + "\n")
for r in [head] + rows:
    print("  ".join(x[:60] for x in r[:11]))
sys.exit(1 if bad else 0)
PYEOF
}

pack() {
    local limit=$((15 * 1024 * 1024)) keep=$((KEEP_TRACE_MB * 1024)) d size name
    : >"$SC_WORK/dropped.txt"
    rm -rf "$SC_WORK/pack"
    mkdir -p "$SC_WORK/pack"
    for d in "$TRACES"/*/; do
        [ -d "$d" ] || continue
        d="${d%/}"
        name="$(basename "$d")"
        size=$(du -sk "$d" | cut -f1)
        if [ "$size" -gt "$keep" ]; then
            echo "$name" >>"$SC_WORK/dropped.txt"
            log "pack: trace of $name is ${size} KiB (> ${KEEP_TRACE_MB} MiB): not packed"
        fi
    done
    summarize
    local rc=$?
    cp "$SC_WORK/corpus-summary.tsv" "$OUT/corpus-summary.tsv"
    while :; do
        (cd "$SC_WORK" && {
            printf '%s\n' corpus-summary.tsv res
            for d in traces/*/; do
                [ -d "$d" ] || continue
                d="${d%/}"
                grep -qx -- "$(basename "$d")" dropped.txt || printf '%s\n' "$d"
            done
        }) >"$SC_WORK/pack/list"
        tar -C "$SC_WORK" -S -czf "$OUT/corpus-traces.tar.gz" -T "$SC_WORK/pack/list"
        size=$(stat -c %s "$OUT/corpus-traces.tar.gz")
        [ "$size" -le "$limit" ] && break
        # Too big: leave out the largest trace still packed, and try again.
        name="$(cd "$TRACES" && du -sk -- */ 2>/dev/null | sort -rn | cut -f2 | tr -d / |
            while read -r n; do grep -qx -- "$n" "$SC_WORK/dropped.txt" || { echo "$n"; break; }; done)"
        if [ -z "$name" ]; then
            log "pack: archive is $size bytes even without traces"
            break
        fi
        echo "$name" >>"$SC_WORK/dropped.txt"
        log "pack: archive $size bytes > 15 MiB: trace of $name not packed"
    done
    # The notes must name every trace left out, so summarize once more.
    summarize >/dev/null
    cp "$SC_WORK/corpus-summary.tsv" "$OUT/corpus-summary.tsv"
    (cd "$SC_WORK" && tar -S -czf "$OUT/corpus-traces.tar.gz" -T "$SC_WORK/pack/list")
    log "pack: $(ls -l "$OUT" | tail -n +2 | awk '{print $NF" "$5}' | tr '\n' ' ')"
    return "$rc"
}

main() {
    if [ "$#" -eq 0 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
        sed -n '2,60p' "$0"
        [ "$#" -eq 0 ] && return 2
        return 0
    fi
    log "gpu-corpus.sh $*   (ONLY='${ONLY}')"
    print_env
    if [ ! -x "$SC_BIN" ]; then
        log "streamcheck binary $SC_BIN is missing (build it with scripts/build.sh)"
        return 2
    fi
    rm -rf "$RES" "$TRACES"
    mkdir -p "$RES" "$TRACES"
    load_manifests "$@" || return 2
    export RES TRACES SC_BIN RECORD_ARGS CHECK_ARGS REPO_ROOT START_EPOCH DEADLINE_S \
        TIMEOUT_CUDA TIMEOUT_CUPY TIMEOUT_TORCH SAN_KINDS SAN_TIMEOUT
    export -f timed parse_entry run_entry san_entry past_deadline
    local t0=$SECONDS
    log "pass 1: native, streamcheck record and check, $JOBS at a time"
    xargs -P "$JOBS" -n 1 bash -c 'run_entry "$0"' <"$SC_WORK/names.txt"
    log "pass 1: $((SECONDS - t0)) s"
    if [ "$SANITIZER" != "0" ]; then
        if SAN_BIN="$(find_sanitizer)"; then
            export SAN_BIN
            local t1=$SECONDS
            log "pass 2: compute-sanitizer, $JOBS at a time"
            xargs -P "$JOBS" -n 1 bash -c 'san_entry "$0"' <"$SC_WORK/names.txt"
            log "pass 2: $((SECONDS - t1)) s"
        else
            log "pass 2: compute-sanitizer not found; skipped"
        fi
    fi
    pack
    local rc=$?
    log "done in $((SECONDS - t0)) s, exit status $rc"
    return "$rc"
}

main "$@" 2>&1 | tee -a "$LOG"
exit "${PIPESTATUS[0]}"
