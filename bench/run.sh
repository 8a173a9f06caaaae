#!/usr/bin/env bash
# bench/run.sh — builds zlink_bench against zlink and against libzmq, runs
# the two in alternation (A B A B ...) and reports the median of every cell
# with the zlink/libzmq ratio: throughput, round-trip latency, and the
# latency of a message that ends a pause after a burst (PAIR). Also the
# syscall, callgrind and idle-memory profiles, and the bench/RESULTS.md
# report with its ratio chart.
#
#   bench/run.sh --quick            small matrix, under a minute (ci/demo.sh)
#   bench/run.sh --full             every pattern x transport x size
#   bench/run.sh --syscalls         syscalls per message (LD_PRELOAD + perf)
#   bench/run.sh --callgrind        instructions per message (valgrind)
#   bench/run.sh --idle-memory [--conns N]   RSS per idle tcp connection
#   bench/run.sh --trie             publisher match rate, 10,000 subscriptions
#   bench/run.sh --loopback         plain write/read loops on one loopback
#                                   connection, no library, and the fill alone
#                                   (64, 256 KiB)
#   bench/run.sh --ws               zlink ws beside zlink tcp (PAIR, PUBSUB;
#                                   64 B, 1 KiB, 64 KiB): ws / tcp per cell
#                                   then bench/ws_cells.sh: zlink wss beside
#                                   zlink tls and ws, zlink ws beside libzmq ws
#   bench/run.sh --tls              zlink tls and curve against zlink tcp and libzmq
#                                   CURVE (PAIR, DEALER_ROUTER; 64 B, 1 KiB,
#                                   64 KiB), and handshakes per second
#   bench/run.sh --cross-process    the headline cells (tcp, ipc) with sender
#                                   and receiver in two processes
#   bench/run.sh --many-clients     ROUTER echo process, N DEALERs x K in
#                                   flight in another (10x100, 100x30,
#                                   1000x4; 64 B, 1 KiB)
#   bench/run.sh --req-rate         CPU per request at 1k, 10k, 50k req/s
#   bench/run.sh --idle-cpu         CPU of 1000 silent connections, 5 s
#   bench/run.sh --game             the three above, the cross-process
#                                   ping-pong, then issue 31's goal table
#   bench/run.sh --full --report    all of the above, then RESULTS.md + SVG
#   bench/run.sh --report-only      rewrite RESULTS.md + SVG from the last
#                                   run's bench/results/ (no new runs)
#
# The report's writers are in bench/report.sh, the two-process runs in
# bench/game.sh.
#
# Other options: --runs N (default 3), --build-dir DIR (default
# ${ZLINK_BUILD_ROOT:-build}/bench), --results DIR (default bench/results),
# --no-build, --timeout S (per run, default 60), --patterns "P ...",
# --transports "T ...", --sizes "N ...".
# Modes combine; with none given, --quick runs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
COMMAND="bench/run.sh${*:+ $*}"
BUILD_DIR=${ZLINK_BUILD_ROOT:-$ROOT/build}/bench
RESULTS=$ROOT/bench/results
RUNS=3
TIMEOUT=60
CONNS=10000
BURST=100 # messages per burst of the latency-after-a-burst rows
DO_BUILD=1
BUILD_DIR_GIVEN=0
MATRIX=""
DO_SYSCALLS=0
DO_CALLGRIND=0
DO_IDLE=0
DO_TRIE=0
DO_LOOPBACK=0
DO_WS=0
DO_TLS=0
DO_XPROC=0
DO_MANY=0
DO_RATE=0
DO_IDLE_CPU=0
DO_GOALS=0
HANDSHAKES=300
DO_REPORT=0
REPORT_ONLY=0
PATTERNS_OVERRIDE=""
TRANSPORTS_OVERRIDE=""
SIZES_OVERRIDE=""

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' \
        "${BASH_SOURCE[0]}"
    exit "${1:-0}"
}

while (($#)); do
    case $1 in
    --quick) MATRIX=quick ;;
    --full) MATRIX=full ;;
    --syscalls) DO_SYSCALLS=1 ;;
    --callgrind) DO_CALLGRIND=1 ;;
    --idle-memory) DO_IDLE=1 ;;
    --trie) DO_TRIE=1 ;;
    --loopback) DO_LOOPBACK=1 ;;
    --ws) DO_WS=1 ;;
    --tls) DO_TLS=1 ;;
    --cross-process) DO_XPROC=1 ;;
    --many-clients) DO_MANY=1 ;;
    --req-rate) DO_RATE=1 ;;
    --idle-cpu) DO_IDLE_CPU=1 ;;
    --game) DO_MANY=1 DO_RATE=1 DO_IDLE_CPU=1 DO_GOALS=1 ;;
    --report) DO_REPORT=1 ;;
    --report-only) REPORT_ONLY=1 ;;
    --conns) CONNS=$2; shift ;;
    --runs) RUNS=$2; shift ;;
    --timeout) TIMEOUT=$2; shift ;;
    --build-dir) BUILD_DIR=$2; BUILD_DIR_GIVEN=1; shift ;;
    --results) RESULTS=$2; shift ;;
    --no-build) DO_BUILD=0 ;;
    --patterns) PATTERNS_OVERRIDE=$2; shift ;;
    --transports) TRANSPORTS_OVERRIDE=$2; shift ;;
    --sizes) SIZES_OVERRIDE=$2; shift ;;
    -h | --help) usage 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage 2 ;;
    esac
    shift
done

if ((DO_REPORT)); then
    # The report holds every table; --quick --report makes a quick one.
    MATRIX=${MATRIX:-full}
    DO_SYSCALLS=1 DO_CALLGRIND=1 DO_IDLE=1 DO_TRIE=1 DO_LOOPBACK=1
    DO_XPROC=1 DO_MANY=1 DO_RATE=1 DO_IDLE_CPU=1 DO_GOALS=1
fi
if [[ -z $MATRIX ]] && ((!DO_SYSCALLS && !DO_CALLGRIND && !DO_IDLE && !DO_TRIE && !DO_LOOPBACK && !DO_WS && !DO_TLS && !DO_XPROC && !DO_MANY && !DO_RATE && !DO_IDLE_CPU && !DO_GOALS)); then
    MATRIX=quick
fi
((RUNS >= 1)) || { echo "run.sh: --runs must be at least 1" >&2; exit 2; }

LIBS=(zlink libzmq)
BIN_DIR=$BUILD_DIR/bench
mkdir -p "$RESULTS"
STARTED=$(date -u '+%Y-%m-%d %H:%M UTC')
COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
if [[ $COMMIT != '?' ]] && ! git -C "$ROOT" diff --quiet HEAD -- src include CMakeLists.txt cmake 2>/dev/null; then
    COMMIT+=" with uncommitted changes to src/, include/ or cmake"
fi

# ---- build ---------------------------------------------------------------

build() {
    local gen=() log=$RESULTS/build.log
    command -v ninja >/dev/null && gen=(-G Ninja)
    if [[ ! -f $BUILD_DIR/CMakeCache.txt ]]; then
        gen+=(-DCMAKE_BUILD_TYPE=Release -DZLINK_BUILD_TESTS=OFF)
    else
        gen=()
    fi
    if ! { cmake "${gen[@]}" -S "$ROOT" -B "$BUILD_DIR" -DZLINK_BUILD_BENCH=ON &&
        cmake --build "$BUILD_DIR" --target zlink_bench_zlink \
            zlink_bench_libzmq syscount zlink_trie_bench loopback_raw \
            game_bench_zlink game_bench_libzmq; } >"$log" 2>&1; then
        echo "run.sh: the build failed; the end of $log:" >&2
        tail -n 25 "$log" >&2
        exit 1
    fi
}

if ((REPORT_ONLY)); then
    DO_BUILD=0
fi
if ((DO_BUILD)); then
    if ! pkg-config --exists libzmq 2>/dev/null; then
        echo "run.sh: libzmq not found by pkg-config; the side-by-side build" \
            "needs it (Debian: apt-get install libzmq3-dev pkg-config)" >&2
        exit 1
    fi
    echo "== building zlink_bench (Release, zlink and libzmq) in $BUILD_DIR"
    build
fi
for lib in "${LIBS[@]}"; do
    ((REPORT_ONLY)) && break
    [[ -x $BIN_DIR/zlink_bench_$lib ]] || {
        echo "run.sh: $BIN_DIR/zlink_bench_$lib is missing" >&2
        exit 1
    }
done

FAILURES=$RESULTS/failures.txt
((REPORT_ONLY)) || : >"$FAILURES"

# Runs one cell once for one library. Appends a row to $RAW:
#   lib,kind,pattern,transport,size,run,status,rc,msg_s,mb_s,p50,p99,
#   mean,elapsed,count
# and records a reproducing command for anything that is not OK.
run_one() {
    local lib=$1 kind=$2 pattern=$3 transport=$4 size=$5 count=$6 run=$7
    # REQ and REP take turns: latency cells only.
    [[ $pattern == REQ_REP* && $kind != *lat ]] && return 0
    local args=(--pattern "$pattern" --transport "$transport" --size "$size"
        --count "$count" --csv)
    # xthr, xlat, xburst: the same cells across two processes.
    [[ $kind == x* ]] && args+=(--cross-process)
    [[ $kind == *lat ]] && args+=(--latency)
    [[ $kind == *burst ]] && args+=(--burst "$BURST")
    local out rc=0
    out=$(timeout "$TIMEOUT" "$BIN_DIR/zlink_bench_$lib" "${args[@]}" \
        2>"$RESULTS/last_stderr.txt") || rc=$?
    local line
    line=$(grep "^$lib,$kind," <<<"$out" | head -n1 || true)
    local status msg_s mb_s p50 p99 mean elapsed
    if [[ -n $line ]]; then
        IFS=, read -r _ _ _ _ _ _ _ status elapsed msg_s mb_s p50 p99 mean _ \
            <<<"$line"
    else
        status=CRASHED
        ((rc == 124)) && status=TIMEOUT
        elapsed="" msg_s="" mb_s="" p50="" p99="" mean=""
    fi
    echo "$lib,${kind#x},$pattern,$transport,$size,$run,$status,$rc,$msg_s,$mb_s,$p50,$p99,$mean,$elapsed,$count" >>"$RAW"
    local why=""
    if [[ $status != OK && $status != UNSUPPORTED* ]]; then
        why=$status
    elif ((rc != 0)); then
        why="$status, but the process then failed"
        ((rc == 3)) && why="$status, then zmq_close/zmq_ctx_term hung for 10 s"
    fi
    if [[ -n $why ]]; then
        {
            echo "$lib $kind $pattern $transport $size run $run: $why (exit $rc)"
            echo "  repro: timeout $TIMEOUT $BIN_DIR/zlink_bench_$lib ${args[*]}"
            sed 's/^/  stderr: /' "$RESULTS/last_stderr.txt" | head -n5
        } >>"$FAILURES"
    fi
    printf '  %-7s %-3s %-18s %-6s %6s  run %d: %s %s\n' "$lib" "$kind" \
        "$pattern" "$transport" "$size" "$run" "$status" \
        "$([[ $kind == *thr ]] && echo "${msg_s:-} msg/s" || echo "${p50:-} us p50")"
}

# Counts that keep a cell around 0.2–1 s (full) or well under (quick).
count_for() {
    local size=$1 quick=$2
    local c
    if ((size <= 64)); then c=2000000
    elif ((size <= 256)); then c=1000000
    elif ((size <= 1024)); then c=500000
    elif ((size <= 8192)); then c=100000
    elif ((size <= 65536)); then c=20000
    else c=5000; fi
    ((quick)) && c=$((c / 5))
    echo "$c"
}

# ---- median tables -------------------------------------------------------

# Medians and ranges, for every table that takes them.
AWK_STATS='
# Sorts the numbers in list into a[1..n] and returns n.
function sorted(list, a,    n, i, j, v) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) {
        v = a[i] + 0; j = i - 1
        while (j >= 1 && a[j] + 0 > v) { a[j + 1] = a[j]; j-- }
        a[j + 1] = v
    }
    return n
}
function median(list,    n, a) {
    n = sorted(list, a)
    if (n == 0) return ""
    if (n % 2) return a[(n + 1) / 2] + 0
    return (a[n / 2] + a[n / 2 + 1]) / 2
}
# "min..max" of the runs, to show the spread behind a median.
function spread(list,    n, a) {
    n = sorted(list, a)
    if (n == 0) return ""
    return sprintf("%.0f..%.0f", a[1], a[n])
}
'
# Reads raw rows, writes the median CSV ($1) and Markdown ($2), and prints
# the table.
AGGREGATE_AWK="$AWK_STATS"'
# One latency table: title and Markdown rows to md, the same rows as text
# (lines) under label to the terminal.
function latency_table(title, rows, label, lines) {
    print title "\n" > md
    print "| pattern | transport | size (B) | zlink p50 | libzmq p50 | p50 ratio | zlink p99 | libzmq p99 |" > md
    print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |" > md
    printf "%s\n", rows > md
    printf "\n%-18s %-6s %7s %10s %10s %7s %9s %9s\n", label, "trans", "size", \
        "zlink p50", "libzmq p50", "ratio", "zlink p99", "libzmq p99"
    printf "%s", lines
}
function human(x) {
    if (x == "") return "-"
    if (x >= 1e6) return sprintf("%.2fM", x / 1e6)
    if (x >= 1e3) return sprintf("%.1fk", x / 1e3)
    return sprintf("%.0f", x)
}
function cellstatus(k, lib,    ok, bad, uns) {
    ok = okn[k, lib] + 0; bad = badn[k, lib] + 0; uns = unsn[k, lib] + 0
    if (uns > 0 && ok == 0 && bad == 0) return "n/a"
    if (bad > 0) return sprintf("FAILED %d/%d", bad, ok + bad + uns)
    if (ok == 0) return "-"
    return "OK"
}
BEGIN { FS = "," }
{
    lib = $1; k = $2 "," $3 "," $4 "," $5
    if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
    runs[k]++
    if ($7 == "OK") {
        okn[k, lib]++
        thr[k, lib] = thr[k, lib] " " $9
        p50[k, lib] = p50[k, lib] " " $11
        p99[k, lib] = p99[k, lib] " " $12
    } else if ($7 ~ /^UNSUPPORTED/) {
        unsn[k, lib]++
    } else {
        badn[k, lib]++
    }
}
END {
    print "kind,pattern,transport,size,runs_per_lib,zlink_status,libzmq_status,zlink_msg_s,libzmq_msg_s,zlink_mb_s,libzmq_mb_s,ratio,zlink_p50_us,libzmq_p50_us,zlink_p99_us,libzmq_p99_us,zlink_msg_s_range,libzmq_msg_s_range" > csv
    thr_rows = ""; lat_rows = ""
    for (i = 1; i <= nk; i++) {
        k = order[i]; split(k, f, ","); size = f[4]
        sz = cellstatus(k, "zlink"); sl = cellstatus(k, "libzmq")
        if (f[1] == "thr") {
            mz = (sz == "OK") ? median(thr[k, "zlink"]) : ""
            ml = (sl == "OK") ? median(thr[k, "libzmq"]) : ""
            ratio = (mz != "" && ml != "" && ml > 0) ? sprintf("%.2f", mz / ml) : ""
            bz = (mz != "") ? sprintf("%.1f", mz * size / 1e6) : ""
            bl = (ml != "") ? sprintf("%.1f", ml * size / 1e6) : ""
            printf "%s,%d,%s,%s,%s,%s,%s,%s,%s,,,,,%s,%s\n", k, runs[k] / 2, sz, sl, \
                (mz == "" ? "" : sprintf("%.0f", mz)), \
                (ml == "" ? "" : sprintf("%.0f", ml)), bz, bl, ratio, \
                spread(thr[k, "zlink"]), spread(thr[k, "libzmq"]) > csv
            thr_rows = thr_rows sprintf("| %s | %s | %s | %s | %s | **%s** | %s | %s |\n", \
                f[2], f[3], size, (sz == "OK" ? human(mz) : sz), \
                (sl == "OK" ? human(ml) : sl), (ratio == "" ? "-" : ratio "x"), \
                (bz == "" ? "-" : bz), (bl == "" ? "-" : bl))
            tthr = tthr sprintf("%-18s %-6s %7s %10s %10s %7s %9s %9s\n", f[2], f[3], \
                size, (sz == "OK" ? human(mz) : sz), (sl == "OK" ? human(ml) : sl), \
                (ratio == "" ? "-" : ratio "x"), (bz == "" ? "-" : bz), (bl == "" ? "-" : bl))
        } else {
            az = (sz == "OK") ? sprintf("%.2f", median(p50[k, "zlink"])) : ""
            al = (sl == "OK") ? sprintf("%.2f", median(p50[k, "libzmq"])) : ""
            qz = (sz == "OK") ? sprintf("%.2f", median(p99[k, "zlink"])) : ""
            ql = (sl == "OK") ? sprintf("%.2f", median(p99[k, "libzmq"])) : ""
            ratio = (az != "" && al != "" && al > 0) ? sprintf("%.2f", az / al) : ""
            printf "%s,%d,%s,%s,,,,,%s,%s,%s,%s,%s,,\n", k, runs[k] / 2, sz, sl, \
                ratio, az, al, qz, ql > csv
            row = sprintf("| %s | %s | %s | %s | %s | **%s** | %s | %s |\n", \
                f[2], f[3], size, (sz == "OK" ? az : sz), (sl == "OK" ? al : sl), \
                (ratio == "" ? "-" : ratio "x"), (qz == "" ? "-" : qz), (ql == "" ? "-" : ql))
            if (f[1] == "burst") burst_rows = burst_rows row; else lat_rows = lat_rows row
            line = sprintf("%-18s %-6s %7s %10s %10s %7s %9s %9s\n", f[2], f[3], \
                size, (sz == "OK" ? az : sz), (sl == "OK" ? al : sl), \
                (ratio == "" ? "-" : ratio "x"), (qz == "" ? "-" : qz), (ql == "" ? "-" : ql))
            if (f[1] == "burst") tburst = tburst line; else tlat = tlat line
        }
    }
    if (thr_rows != "") {
        print "Throughput, median of the runs; ratio = zlink / libzmq (higher is better for zlink). MB/s counts payload bytes (1 MB = 10^6 B).\n" > md
        print "| pattern | transport | size (B) | zlink msg/s | libzmq msg/s | ratio | zlink MB/s | libzmq MB/s |" > md
        print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |" > md
        printf "%s\n", thr_rows > md
        printf "%-18s %-6s %7s %10s %10s %7s %9s %9s\n", "pattern", "trans", "size", \
            "zlink", "libzmq", "ratio", "zlink MB/s", "libzmq MB/s"
        printf "%s", tthr
    }
    if (lat_rows != "")
        latency_table("One-way latency (round trip / 2) in microseconds, median of the runs; ratio = zlink / libzmq p50 (lower is better for zlink).", \
            lat_rows, "latency (us)", tlat)
    if (burst_rows != "")
        latency_table("One-way latency of a message sent " pause_us " us after a burst of " burst " (`zlink_bench --burst " burst "`; the next burst starts once it has arrived), in microseconds, median of the runs. It is what a receiver that takes a stream in batches pays when the stream pauses.", \
            burst_rows, "after a burst (us)", tburst)
}'

aggregate() {
    local raw=$1 csv=$2 md=$3
    : >"$md"
    awk -v csv="$csv" -v md="$md" -v burst="$BURST" -v pause_us=5 \
        "$AGGREGATE_AWK" "$raw"
}

# ---- throughput and latency matrix --------------------------------------

# The socket options both libraries ran with, as Markdown.
append_options() {
    {
        echo
        echo "Socket options, the same for both libraries:"
        echo
        "$1" --pattern PAIR --transport inproc \
            --size 64 --count 2 --csv | awk -F, '{print "- PAIR, DEALER, ROUTER: `" $NF "`"}'
        echo "- a receiving ROUTER adds \`receiver_routing_id=R\`; a sending ROUTER (ROUTER_ROUTER) adds \`sender_router_mandatory=1;sender_routing_id=S\` (a ROUTER blocks at HWM, instead of dropping, only with ROUTER_MANDATORY)"
        echo "- DEALER_ROUTER latency adds \`receiver_router_mandatory=1\` on the echoing ROUTER"
        echo "- PUBSUB: \`sndhwm=rcvhwm=10000000\` on both sides (above every count sent, so nothing drops), \`subscribe=all\`"
        echo "- ROUTER_ROUTER_POLL: \`zmq_poll\` on the receiving socket before each message"
    }
}

# For a couple of seconds after a build this VM ran every process at about
# half speed (PAIR tcp 64 B: zlink 2.7-4.7M msg/s, then 6.3-8.4M once
# settled), and the first cell of a pass took the loss. Discarded runs of
# both libraries, alternating, until SETTLE_SECONDS have passed.
SETTLE_SECONDS=3
settle() {
    local until=$((SECONDS + SETTLE_SECONDS)) lib
    echo "== settling for ${SETTLE_SECONDS}s (discarded runs)"
    while ((SECONDS < until)); do
        for lib in "${LIBS[@]}"; do
            timeout "$TIMEOUT" "$BIN_DIR/zlink_bench_$lib" --pattern PAIR \
                --transport tcp --size 64 --count 200000 --csv \
                >/dev/null 2>&1 || true
        done
    done
}

run_matrix() {
    local quick=0 patterns transports sizes lat_patterns lat_count burst_count
    if [[ $MATRIX == quick ]]; then
        quick=1
        patterns="PAIR DEALER_ROUTER"
        transports="tcp inproc"
        sizes="64 1024 65536"
        lat_count=2000
        burst_count=500
    else
        patterns="PAIR PUBSUB DEALER_DEALER DEALER_ROUTER ROUTER_ROUTER ROUTER_ROUTER_POLL"
        transports="tcp ipc inproc"
        sizes="64 256 1024 8192 65536 262144"
        lat_count=10000
        burst_count=2000
    fi
    lat_patterns="PAIR DEALER_ROUTER"
    [[ -n $PATTERNS_OVERRIDE ]] && patterns=$PATTERNS_OVERRIDE
    [[ -n $TRANSPORTS_OVERRIDE ]] && transports=$TRANSPORTS_OVERRIDE
    [[ -n $SIZES_OVERRIDE ]] && sizes=$SIZES_OVERRIDE

    RAW=$RESULTS/raw.csv
    : >"$RAW"
    settle
    echo "== throughput ($MATRIX: $RUNS runs per library per cell, A B A B)"
    local p t s r lib
    for p in $patterns; do
        for t in $transports; do
            for s in $sizes; do
                for ((r = 1; r <= RUNS; r++)); do
                    for lib in "${LIBS[@]}"; do
                        run_one "$lib" thr "$p" "$t" "$s" \
                            "$(count_for "$s" "$quick")" "$r"
                    done
                done
            done
        done
    done
    echo "== latency (64 B, $lat_count round trips per run)"
    for p in $lat_patterns; do
        [[ " $patterns " == *" $p "* ]] || continue
        for t in $transports; do
            for ((r = 1; r <= RUNS; r++)); do
                for lib in "${LIBS[@]}"; do
                    run_one "$lib" lat "$p" "$t" 64 "$lat_count" "$r"
                done
            done
        done
    done
    echo "== latency after a burst (64 B, PAIR, bursts of $BURST, $burst_count per run)"
    if [[ " $patterns " == *" PAIR "* ]]; then
        for t in $transports; do
            for ((r = 1; r <= RUNS; r++)); do
                for lib in "${LIBS[@]}"; do
                    run_one "$lib" burst PAIR "$t" 64 "$burst_count" "$r"
                done
            done
        done
    fi
    rm -f /tmp/zlink_bench_*.ipc

    echo
    echo "== medians ($(nproc) CPUs, $(uname -r))"
    aggregate "$RAW" "$RESULTS/latest.csv" "$RESULTS/latest.md"
    append_options "$BIN_DIR/zlink_bench_libzmq" >>"$RESULTS/latest.md"
    echo "   ($RESULTS/latest.csv, $RESULTS/latest.md, raw runs in $RAW)"
}

# ---- syscalls -------------------------------------------------------------

# Median of the numbers on stdin.
median_stdin() {
    sort -g | awk '{a[NR] = $1} END {
        if (NR == 0) { print ""; exit }
        if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# Total syscalls (and futex calls) of one run, from perf; "" without perf.
perf_counts() {
    local lib=$1 p=$2 t=$3 count=$4 out=$RESULTS/perf.tmp
    perf stat -x, -e raw_syscalls:sys_enter -e syscalls:sys_enter_futex \
        -o "$out" timeout "$TIMEOUT" "$BIN_DIR/zlink_bench_$lib" --pattern "$p" \
        --transport "$t" --size 64 --count "$count" --warmup 1000 --csv \
        >/dev/null 2>&1 || { echo ","; return; }
    awk -F, '/raw_syscalls:sys_enter/ {s = $1} /sys_enter_futex/ {f = $1}
        END {print s "," f}' "$out"
}

run_syscalls() {
    local out_csv=$RESULTS/syscalls.csv out_md=$RESULTS/syscalls.md
    local count=500000 small=100000 have_perf=0
    if perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1; then
        have_perf=1
    fi
    echo "== syscalls per message, 64 B (LD_PRELOAD syscount.so; perf for totals)"
    echo "lib,pattern,transport,recv,recv_eagain,eagain_pct,send,epoll_wait,poll,wake_write,wake_read,wrapped_total,all_syscalls,futex" >"$out_csv"
    local p t lib r
    for p in ROUTER_ROUTER PAIR; do
        for t in tcp ipc; do
            local tmp=$RESULTS/sys.tmp
            : >"$tmp"
            for ((r = 1; r <= RUNS; r++)); do
                for lib in "${LIBS[@]}"; do
                    LD_PRELOAD=$BIN_DIR/syscount.so timeout "$TIMEOUT" \
                        "$BIN_DIR/zlink_bench_$lib" --pattern "$p" --transport "$t" \
                        --size 64 --count "$count" --csv 2>/dev/null |
                        grep "^$lib,sys," >>"$tmp" || {
                        echo "$lib syscalls $p $t run $r: no result" >>"$FAILURES"
                        echo "  repro: LD_PRELOAD=$BIN_DIR/syscount.so $BIN_DIR/zlink_bench_$lib --pattern $p --transport $t --size 64 --count $count --csv" >>"$FAILURES"
                    }
                done
            done
            for lib in "${LIBS[@]}"; do
                local row="" name v
                for name in recv recv_eagain send epoll_wait poll wake_write wake_read total; do
                    v=$(grep "^$lib," "$tmp" | tr ',' '\n' | grep "^$name=" |
                        cut -d= -f2 | median_stdin)
                    row+=",$v"
                done
                # The EAGAIN share of recv calls.
                local pct
                pct=$(awk -F, '{ if ($2 > 0) printf "%.3f", 100 * $3 / $2; else print "" }' <<<"$row")
                local all="" fut=""
                if ((have_perf)); then
                    local big_s=() big_f=() small_s=() small_f=() pc
                    for ((r = 1; r <= RUNS; r++)); do
                        pc=$(perf_counts "$lib" "$p" "$t" "$count")
                        big_s+=("${pc%,*}") big_f+=("${pc#*,}")
                        pc=$(perf_counts "$lib" "$p" "$t" "$small")
                        small_s+=("${pc%,*}") small_f+=("${pc#*,}")
                    done
                    local bs bf ss sf
                    bs=$(printf '%s\n' "${big_s[@]}" | median_stdin)
                    bf=$(printf '%s\n' "${big_f[@]}" | median_stdin)
                    ss=$(printf '%s\n' "${small_s[@]}" | median_stdin)
                    sf=$(printf '%s\n' "${small_f[@]}" | median_stdin)
                    all=$(awk -v a="$bs" -v b="$ss" -v n=$((count - small)) \
                        'BEGIN { if (a != "" && b != "") printf "%.4f", (a - b) / n }')
                    fut=$(awk -v a="$bf" -v b="$sf" -v n=$((count - small)) \
                        'BEGIN { if (a != "" && b != "") printf "%.4f", (a - b) / n }')
                fi
                # row: ,recv,eagain,send,epoll,poll,ww,wr,total
                awk -F, -v lib="$lib" -v p="$p" -v t="$t" -v pct="$pct" \
                    -v all="$all" -v fut="$fut" \
                    '{ print lib "," p "," t "," $2 "," $3 "," pct "," $4 "," $5 "," $6 "," $7 "," $8 "," $9 "," all "," fut }' \
                    <<<"$row" >>"$out_csv"
            done
        done
    done
    rm -f "$RESULTS/sys.tmp" "$RESULTS/perf.tmp" /tmp/zlink_bench_*.ipc
    awk -F, 'NR == 1 { next }
        { key = $2 " " $3; if (!(key in rows)) order[++nk] = key; rows[key] = rows[key] sprintf("| %s | %s | %s | %s | %s | %s%% | %s | %s | %s | %s | %s | %s |\n", \
            $2, $3, $1, $4, $5, $6, $7, $8, $9, $10, $12, ($13 == "" ? "-" : $13))
          tot[key, $1] = ($13 == "" ? $12 : $13) }
        END {
          print "Syscalls per message (64 B, timed window only, median of the runs). recv/send count the recv-family and send-family calls plus read/readv/write/writev on sockets; wake_write = writes to eventfds/pipes (wakeups); wrapped = every call syscount.so wraps; all = every syscall of the process, from `perf stat -e raw_syscalls:sys_enter` at two counts (the difference strips start-up), futex included.\n"
          print "| pattern | transport | lib | recv | recv EAGAIN | EAGAIN share | send | epoll_wait | poll | wake_write | wrapped | all syscalls |"
          print "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
          for (i = 1; i <= nk; i++) printf "%s", rows[order[i]]
          print ""
          print "| pattern | transport | total syscalls/msg, zlink / libzmq |"
          print "| --- | --- | ---: |"
          for (i = 1; i <= nk; i++) { k = order[i]; split(k, f, " ")
            if (tot[k, "libzmq"] > 0) printf "| %s | %s | %.2fx |\n", f[1], f[2], tot[k, "zlink"] / tot[k, "libzmq"] }
        }' "$out_csv" >"$out_md"
    cat "$out_md"
    echo
}

# ---- callgrind ------------------------------------------------------------

run_callgrind() {
    local out_csv=$RESULTS/callgrind.csv out_md=$RESULTS/callgrind.md
    local small=100000 big=300000
    if ! command -v valgrind >/dev/null; then
        echo "== callgrind: valgrind is not installed (apt-get install valgrind); skipped"
        echo "valgrind missing" >"$out_md"
        return
    fi
    echo "== instructions per message: callgrind, inproc PAIR 64 B, ($big - $small) messages"
    echo "lib,ir_small,ir_big,messages,ir_per_msg" >"$out_csv"
    local lib n
    for lib in "${LIBS[@]}"; do
        local ir=()
        for n in $small $big; do
            local f=$RESULTS/callgrind.$lib.$n.out
            timeout 600 valgrind --tool=callgrind --callgrind-out-file="$f" \
                "$BIN_DIR/zlink_bench_$lib" --pattern PAIR --transport inproc \
                --size 64 --count "$n" --warmup 1000 --stall-ms 120000 --csv \
                >/dev/null 2>"$RESULTS/last_stderr.txt" || {
                echo "$lib callgrind $n: failed" >>"$FAILURES"
                echo "  repro: valgrind --tool=callgrind $BIN_DIR/zlink_bench_$lib --pattern PAIR --transport inproc --size 64 --count $n --warmup 1000 --stall-ms 120000" >>"$FAILURES"
            }
            ir+=("$(awk '/^totals:/ {print $2}' "$f" 2>/dev/null)")
        done
        awk -v l="$lib" -v a="${ir[0]}" -v b="${ir[1]}" -v n=$((big - small)) \
            'BEGIN { printf "%s,%s,%s,%d,%s\n", l, a, b, n, (a != "" && b != "" ? sprintf("%.0f", (b - a) / n) : "") }' >>"$out_csv"
        if command -v callgrind_annotate >/dev/null && [[ -f $RESULTS/callgrind.$lib.$big.out ]]; then
            callgrind_annotate "$RESULTS/callgrind.$lib.$big.out" 2>/dev/null |
                grep -E '^ *[0-9,]+ +\(' | head -n 15 >"$RESULTS/callgrind_${lib}_top.txt" || true
        fi
    done
    {
        echo "Instructions (Ir) per message, callgrind, inproc PAIR 64 B: (Ir at $big messages - Ir at $small) / $((big - small)). Includes the benchmark's own work (message init, marker, clock), the same in both builds."
        echo
        echo "| lib | Ir at $small | Ir at $big | Ir per message |"
        echo "| --- | ---: | ---: | ---: |"
        awk -F, 'NR > 1 { printf "| %s | %s | %s | %s |\n", $1, $2, $3, $5; v[$1] = $5 }
            END { if (v["libzmq"] > 0 && v["zlink"] != "") printf "\nzlink / libzmq: **%.2fx**\n", v["zlink"] / v["libzmq"] }' "$out_csv"
        for lib in "${LIBS[@]}"; do
            if [[ -s $RESULTS/callgrind_${lib}_top.txt ]]; then
                echo
                echo "Top functions by own Ir, $lib, $big messages:"
                echo
                echo '```'
                cut -c1-150 "$RESULTS/callgrind_${lib}_top.txt"
                echo '```'
            fi
        done
    } >"$out_md"
    cat "$out_md"
    echo
}

# ---- idle memory -----------------------------------------------------------

run_idle() {
    local out_csv=$RESULTS/idle_memory.csv out_md=$RESULTS/idle_memory.md
    echo "== idle memory: $CONNS DEALERs -> 1 ROUTER over tcp"
    : >"$out_csv"
    local lib header_done=0
    for lib in "${LIBS[@]}"; do
        local out rc=0
        out=$(timeout 600 "$BIN_DIR/zlink_bench_$lib" --idle-memory \
            --conns "$CONNS" --csv 2>"$RESULTS/last_stderr.txt") || rc=$?
        if ((!header_done)); then
            grep '^lib,' <<<"$out" >>"$out_csv" && header_done=1
        fi
        grep "^$lib,idle," <<<"$out" >>"$out_csv" || {
            echo "$lib idle-memory: no result (exit $rc)" >>"$FAILURES"
            echo "  repro: $BIN_DIR/zlink_bench_$lib --idle-memory --conns $CONNS" >>"$FAILURES"
        }
        if [[ -s $RESULTS/last_stderr.txt ]]; then
            sed "s/^/  $lib: /" "$RESULTS/last_stderr.txt"
        fi
    done
    awk -F, 'NR == 1 { next }
        { printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $3, $4, $5, $6, $7, $8; s[$1] = $5; c[$1] = $6 }
        BEGIN {
          print "Idle memory per connection: N DEALERs in client process(es) connected over tcp to one ROUTER in another process; VmRSS before the sockets and after each connection carried one message each way, divided by N.\n"
          print "| lib | connections | status | server KiB/conn | client KiB/conn | server fds/conn | client fds/conn |"
          print "| --- | ---: | --- | ---: | ---: | ---: | ---: |" }
        END { if (s["libzmq"] > 0 && c["libzmq"] > 0)
            printf "\nzlink / libzmq: server %.2fx, client %.2fx\n", s["zlink"] / s["libzmq"], c["zlink"] / c["libzmq"] }' \
        "$out_csv" >"$out_md"
    cat "$out_md"
    echo
}

# ---- subscription match rate -------------------------------------------------

run_trie() {
    # zlink only: libzmq keeps its mtrie private.
    echo "== subscription match rate (zl_mtrie, 10,000 subscriptions)"
    "$BIN_DIR/zlink_trie_bench" 10000 2000000 | tee "$RESULTS/trie.csv"
    {
        echo "\`bench/run.sh --trie\` (bench/trie_bench.c): the publisher's mtrie with"
        echo "10,000 subscriptions (\`game/<n>/state/<id>\`), 2,000,000 lookups of"
        echo "\`game/<n>/state/<id>/payload\` topics, about half of which match. zlink only;"
        echo "libzmq does not expose its mtrie."
        echo
        echo "| subscriptions | lookups | hit ratio | matches/s | ns per match (incl. formatting the topic) |"
        echo "| ---: | ---: | ---: | ---: | ---: |"
        awk -F, 'NR > 1 { printf "| %s | %s | %s | %.2fM | %s |\n", $1, $2, $3, $4 / 1e6, $5 }' \
            "$RESULTS/trie.csv"
    } >"$RESULTS/trie.md"
}

# ---- encryption: zlink tls, zlink and libzmq CURVE ------------------------

# Medians of $RUNS alternating runs per cell (zlink tcp, zlink tls, zlink
# curve, libzmq curve), then connections per second; certificates from
# tests/tls/make_certs.sh. Writes tls.csv and tls.md.
run_tls() {
    local certs=$RESULTS/tls-certs raw=$RESULTS/tls_runs.csv md=$RESULTS/tls.md
    sh "$ROOT/tests/tls/make_certs.sh" "$certs" >/dev/null
    export ZLINK_BENCH_TLS_CERTS=$certs
    local cpu_aes=no mbed_aesni=no
    grep -qw aes /proc/cpuinfo 2>/dev/null && cpu_aes=yes
    grep -qs '^#define MBEDTLS_AESNI_C' /usr/include/mbedtls/config.h \
        /usr/include/mbedtls/mbedtls_config.h && mbed_aesni=yes
    echo "== tls: zlink tls / zlink tcp / zlink and libzmq curve ($RUNS runs each;" \
        "CPU AES: $cpu_aes, mbedTLS AESNI_C: $mbed_aesni)"
    echo "pattern,size,cell,run,msg_s" >"$raw"
    local pattern size run cell lib transport line
    for pattern in PAIR DEALER_ROUTER; do
        for size in 64 1024 65536; do
            for ((run = 1; run <= RUNS; run++)); do
                for cell in zlink:tcp zlink:tls zlink:curve libzmq:curve; do
                    lib=${cell%%:*} transport=${cell#*:}
                    line=$(timeout "$TIMEOUT" "$BIN_DIR/zlink_bench_$lib" \
                        --pattern "$pattern" --transport "$transport" \
                        --size "$size" --count "$(count_for "$size" 1)" --csv |
                        grep "^$lib,thr," || true)
                    IFS=, read -r _ _ _ _ _ _ _ status _ msg_s _ <<<"$line"
                    [[ ${status:-} == OK ]] || msg_s=""
                    echo "$pattern,$size,$cell,$run,$msg_s" >>"$raw"
                    printf '  %-13s %-13s %6s run %d: %s msg/s\n' "$pattern" \
                        "$cell" "$size" "$run" "${msg_s:-FAILED}"
                done
            done
        done
    done
    local hs=$RESULTS/tls_handshakes.csv kind
    : >"$hs"
    # handshakes: a new DEALER each time; reconnects: one DEALER that
    # disconnects and connects again (where TLS resumes its session).
    for kind in handshakes reconnects; do
        for ((run = 1; run <= RUNS; run++)); do
            for cell in zlink:tcp zlink:tls zlink:curve libzmq:curve; do
                lib=${cell%%:*} transport=${cell#*:}
                line=$(timeout "$TIMEOUT" "$BIN_DIR/zlink_bench_$lib" \
                    --handshakes "$HANDSHAKES" --transport "$transport" \
                    $([[ $kind == reconnects ]] && echo --reconnect) --csv |
                    grep "^$lib,$kind," || true)
                IFS=, read -r _ _ _ _ _ _ _ status _ msg_s _ <<<"$line"
                [[ ${status:-} == OK ]] || msg_s=""
                echo "$kind,$cell,$run,$msg_s" >>"$hs"
                printf '  %-13s %-13s run %d: %s /s\n' "$kind" "$cell" \
                    "$run" "${msg_s:-FAILED}"
            done
        done
    done
    {
        echo "\`$COMMAND\` at $COMMIT, $STARTED: medians of $RUNS runs, msg/s."
        echo "CPU AES instructions: $cpu_aes; mbedTLS built with AESNI_C: $mbed_aesni."
        echo
        echo "| pattern | size | zlink tcp | zlink tls | zlink curve | libzmq curve | tls / libzmq curve | zlink curve / libzmq curve | tls / tcp |"
        echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        awk -F, 'NR > 1 && $5 != "" { v[$1 "," $2 "," $3] = v[$1 "," $2 "," $3] " " $5; keys[$1 "," $2] = 1 }
            function median(list,   a, n, i, j, t) {
                n = split(list, a, " ")
                for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                    if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
                return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : 0
            }
            END {
                split("PAIR DEALER_ROUTER", pats, " "); split("64 1024 65536", sizes, " ")
                for (p = 1; p <= 2; p++) for (z = 1; z <= 3; z++) {
                    k = pats[p] "," sizes[z]
                    if (!(k in keys)) continue
                    tcp = median(v[k ",zlink:tcp"]); tls = median(v[k ",zlink:tls"])
                    cur = median(v[k ",libzmq:curve"]); zcur = median(v[k ",zlink:curve"])
                    printf "| %s | %s | %.0f | %.0f | %.0f | %.0f | %s | %s | %s |\n", pats[p], sizes[z], tcp, tls, zcur, cur,
                        (cur > 0 ? sprintf("%.2fx", tls / cur) : "-"), (cur > 0 ? sprintf("%.2fx", zcur / cur) : "-"),
                        (tcp > 0 ? sprintf("%.0f%%", 100 * tls / tcp) : "-")
                }
            }' "$raw"
        echo
        echo "Connections per second: handshakes = $HANDSHAKES DEALERs in turn (connect, handshake, one message, close);"
        echo "reconnects = one DEALER connecting, sending one message and disconnecting $HANDSHAKES times."
        echo
        echo "| cell | zlink tcp | zlink tls | zlink curve | libzmq curve |"
        echo "| --- | ---: | ---: | ---: | ---: |"
        awk -F, '$4 != "" { v[$1 "," $2] = v[$1 "," $2] " " $4; kinds[$1] = 1 }
            function median(list,   a, n, i, j, t) {
                n = split(list, a, " ")
                for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                    if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
                return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : 0
            }
            END {
                split("handshakes reconnects", ks, " ")
                for (k = 1; k <= 2; k++) if (ks[k] in kinds)
                    printf "| %s | %.0f | %.0f | %.0f | %.0f |\n", ks[k], median(v[ks[k] ",zlink:tcp"]),
                        median(v[ks[k] ",zlink:tls"]), median(v[ks[k] ",zlink:curve"]),
                        median(v[ks[k] ",libzmq:curve"])
            }' "$hs"
    } >"$md"
    cat "$md"
}

# ---- plain loopback --------------------------------------------------------

# The large-message cells beside plain write/read loops with no library:
# the medians of loopback_raw per transport, size, queue depth and thread
# structure and send path, and this run's PAIR, ROUTER_ROUTER_POLL and
# PUBSUB medians (when the matrix ran) for the same transport and size.
# zlink over ws beside zlink over tcp, runs alternating tcp, ws, tcp, ...;
# the median msg/s of each and ws / tcp, into ws_vs_tcp.{csv,md}.
run_ws_vs_tcp() {
    local raw=$RESULTS/ws_vs_tcp_raw.csv csv=$RESULTS/ws_vs_tcp.csv
    local md=$RESULTS/ws_vs_tcp.md patterns=${PATTERNS_OVERRIDE:-"PAIR PUBSUB"}
    local sizes=${SIZES_OVERRIDE:-"64 1024 65536"}
    echo "== ws beside tcp (zlink), $RUNS runs each"
    echo "pattern,size,transport,run,msg_s" >"$raw"
    local p size t run count out rate
    for p in $patterns; do
        for size in $sizes; do
            count=$(( size >= 65536 ? 20000 : size >= 1024 ? 500000 : 2000000 ))
            for ((run = 1; run <= RUNS; run++)); do
                for t in tcp ws; do
                    out=$(timeout "$TIMEOUT" "$BIN_DIR/zlink_bench_zlink" \
                        --pattern "$p" --transport "$t" --size "$size" \
                        --count "$count" --csv 2>/dev/null | tail -n 1) || out=""
                    rate=$(awk -F, 'NR == 1 && $8 == "OK" { print $10 }' <<<"$out")
                    if [[ -z $rate ]]; then
                        echo "  $p $t $size run $run: FAILED" | tee -a "$FAILURES"
                        continue
                    fi
                    echo "$p,$size,$t,$run,$rate" >>"$raw"
                done
            done
        done
    done
    awk -F, 'NR > 1 { key = $1 "," $2; v[key "," $3] = v[key "," $3] " " $5; keys[key] = 1 }
        function median(list,   a, n, i, j, t) {
            n = split(list, a, " ")
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
            return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : 0
        }
        END {
            print "pattern,size,tcp_msg_s,ws_msg_s,ws_over_tcp" > "'"$csv"'"
            print "| pattern | size (B) | zlink tcp msg/s | zlink ws msg/s | ws / tcp |" > "'"$md"'"
            print "|---|---:|---:|---:|---:|" > "'"$md"'"
            for (k in keys) {
                tcp = median(v[k ",tcp"]); ws = median(v[k ",ws"])
                r = tcp > 0 ? ws / tcp : 0
                print k "," tcp "," ws "," sprintf("%.2f", r) > "'"$csv"'"
                split(k, kk, ",")
                printf "| %s | %s | %.0f | %.0f | %.2f |\n", kk[1], kk[2], tcp, ws, r > "'"$md"'"
            }
        }' "$raw"
    cat "$md"
}

run_loopback() {
    local csv=$RESULTS/loopback.csv raw=$RESULTS/loopback_runs.csv
    echo "== plain loopback (bench/loopback_raw.c, no library, $RUNS runs each)"
    echo "transport,size,depth,threads,count,seconds,msg_s,send,fill" >"$raw"
    local t s d th send fill r count
    for t in tcp ipc none; do
        for s in 65536 262144; do
            count=$((s > 65536 ? 10000 : 40000))
            # Depths: one cached body; the queue pacing holds (8 MiB of
            # bodies: 128 of 64 KiB, 32 of 256 KiB); the HWM's 1000.
            for d in 1 $((8388608 / s)) 1000; do
                for th in 1 2; do
                    [[ $t == none && $th == 2 ]] && continue # no connection
                    for send in write splice; do
                        # splice only pays on ipc (tcp ran 4-5x slower with
                        # it), and is measured as one I/O thread runs.
                        [[ $send == splice && ($t != ipc || $th != 1) ]] && continue
                        for fill in before thread; do
                            # A filler thread feeds one I/O thread's writes
                            # from a queue, as zlink_bench's sender does.
                            [[ $fill == thread && ($t == none || $th != 1 || $send != write || $d == 1) ]] && continue
                            local args=(--transport "$t" --size "$s" --count "$count"
                                --depth "$d" --threads "$th")
                            [[ $send == splice ]] && args+=(--splice)
                            [[ $fill == thread ]] && args+=(--filler)
                            for ((r = 1; r <= RUNS; r++)); do
                                timeout "$TIMEOUT" "$BIN_DIR/loopback_raw" "${args[@]}" >>"$raw" ||
                                    echo "loopback_raw ${args[*]}: failed" >>"$FAILURES"
                            done
                        done
                    done
                done
            done
        done
    done
    awk -F, "$AWK_STATS"'
        NR == 1 { next }
        { k = $1 "," $2 "," $3 "," $4 "," $8 "," $9; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
          runs[k] = runs[k] " " $7 }
        END {
            print "transport,size,depth,threads,send,fill,runs,msg_s,msg_s_range"
            for (i = 1; i <= n; i++) {
                k = order[i]
                printf "%s,%d,%.0f,%s\n", k, split(runs[k], x, " "), median(runs[k]), spread(runs[k])
            }
        }' "$raw" >"$csv"
    column -s, -t <"$csv"
    write_loopback_md
}

# ---- report ------------------------------------------------------------------

# The report's writers read only bench/results/, so that --report-only can
# rewrite the report without new runs.
# shellcheck source=bench/report.sh
source "$ROOT/bench/report.sh"
# shellcheck source=bench/game.sh
source "$ROOT/bench/game.sh"

# ---- main ----------------------------------------------------------------------

SECONDS=0
META=$RESULTS/meta.env
if ((REPORT_ONLY)); then
    [[ -f $META ]] || { echo "run.sh: no $META; run with --report first" >&2; exit 1; }
    # shellcheck disable=SC1090
    source "$META"
    # The options table asks the run's own build; a report from before
    # RUN_BUILD_DIR was recorded needs --build-dir.
    if ((!BUILD_DIR_GIVEN)) && [[ -n ${RUN_BUILD_DIR:-} ]]; then
        BIN_DIR=$RUN_BUILD_DIR/bench
    fi
    if [[ -f $RESULTS/raw.csv ]]; then
        [[ -x $BIN_DIR/zlink_bench_libzmq ]] || {
            echo "run.sh: --report-only needs the run's build, and $BIN_DIR/zlink_bench_libzmq is not there; give it with --build-dir DIR" >&2
            exit 1
        }
        aggregate "$RESULTS/raw.csv" "$RESULTS/latest.csv" "$RESULTS/latest.md" >/dev/null
        append_options "$BIN_DIR/zlink_bench_libzmq" >>"$RESULTS/latest.md"
    fi
    [[ -f $RESULTS/loopback.csv ]] && write_loopback_md
    write_report
    exit 0
fi
# A report reflects this run only.
if ((DO_REPORT)); then
    rm -f "$RESULTS"/{latest,syscalls,callgrind,idle_memory,trie,loopback}.{csv,md}
    rm -f "$RESULTS"/{xproc,many_clients,req_rate,idle_cpu,goals}.{csv,md}
    printf 'COMMAND=%q\nSTARTED=%q\nRUNS=%q\nCOMMIT=%q\nRUN_BUILD_DIR=%q\n' \
        "$COMMAND" "$STARTED" "$RUNS" "$COMMIT" "$BUILD_DIR" >"$META"
fi
[[ -n $MATRIX ]] && run_matrix
((DO_SYSCALLS)) && run_syscalls
((DO_CALLGRIND)) && run_callgrind
((DO_IDLE)) && run_idle
((DO_TRIE)) && run_trie
((DO_LOOPBACK)) && run_loopback
((DO_WS)) && run_ws_vs_tcp
((DO_WS)) && bash "$ROOT/bench/ws_cells.sh" --runs "$RUNS" --bin-dir "$BIN_DIR" \
    --results "$RESULTS" --timeout "$TIMEOUT"
((DO_TLS)) && run_tls
((DO_XPROC)) && run_cross_process 0
((DO_MANY)) && run_many_clients
((DO_RATE)) && run_req_rate
((DO_IDLE_CPU)) && run_idle_cpu
# The goal table's ping-pong cell, when the cross-process cells did not run.
((DO_GOALS && !DO_XPROC)) && run_cross_process 1
((DO_GOALS)) && write_goals
((DO_REPORT)) && write_report
rm -f "$RESULTS/last_stderr.txt"
if [[ -s $FAILURES ]]; then
    echo "== failures (also in $FAILURES):"
    cat "$FAILURES"
fi
echo "== done in ${SECONDS}s"
