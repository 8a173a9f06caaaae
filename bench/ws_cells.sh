#!/usr/bin/env bash
# bench/ws_cells.sh — the ws and wss cells of issue 28: zlink wss beside
# zlink tls and zlink ws, and zlink ws beside libzmq ws (libzmq built with
# its draft ws transport by ci/libzmq-ws.sh, cached). Each cell runs its
# columns in alternation (A B C A B C ...), $RUNS times, and reports the
# medians and their ratios, into ws_cells.{csv,md} under the results dir.
#
#   bench/ws_cells.sh [--runs N] [--bin-dir DIR] [--results DIR]
#                     [--patterns "P ..."] [--sizes "N ..."] [--timeout S]
#
# DIR holds zlink_bench_zlink (bench/run.sh builds it: build/bench/bench);
# zlink_bench_libzmqws is compiled here from bench/zlink_bench.c against
# ci/libzmq-ws.sh's prefix. bench/run.sh --ws runs this after its own
# ws / tcp cells.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=3
BIN_DIR=${ZLINK_BUILD_ROOT:-$ROOT/build}/bench/bench
RESULTS=$ROOT/bench/results
PATTERNS="PAIR PUBSUB"
SIZES="64 1024 65536"
TIMEOUT=60
while (($#)); do
    case $1 in
    --runs) RUNS=$2; shift ;;
    --bin-dir) BIN_DIR=$2; shift ;;
    --results) RESULTS=$2; shift ;;
    --patterns) PATTERNS=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --timeout) TIMEOUT=$2; shift ;;
    *) echo "ws_cells.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$RESULTS"
[[ -x $BIN_DIR/zlink_bench_zlink ]] ||
    { echo "ws_cells.sh: no $BIN_DIR/zlink_bench_zlink (bench/run.sh builds it)" >&2; exit 1; }

# The libzmq side: the bench's own source, linked to the ws-enabled libzmq
# with an rpath, so that Debian's libzmq (no ws) never stands in for it.
LIBZMQ_WS=""
if prefix=$("$ROOT/ci/libzmq-ws.sh" 2>"$RESULTS/libzmq-ws.log"); then
    LIBZMQ_WS=$BIN_DIR/zlink_bench_libzmqws
    cc -O2 -std=c11 -D_GNU_SOURCE -o "$LIBZMQ_WS" "$ROOT/bench/zlink_bench.c" \
        -I"$prefix/include" -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" \
        -lzmq -lpthread
else
    echo "ws_cells.sh: ci/libzmq-ws.sh failed (see $RESULTS/libzmq-ws.log);" \
        "no libzmq ws column" >&2
fi

CERTS=$RESULTS/tls-certs
sh "$ROOT/tests/tls/make_certs.sh" "$CERTS" >/dev/null
export ZLINK_BENCH_TLS_CERTS=$CERTS

RAW=$RESULTS/ws_cells_raw.csv
echo "cell,pattern,size,column,run,msg_s" >"$RAW"

# One run of one column: "zlink:wss" is zlink_bench_zlink over wss.
run_column() { # <cell> <pattern> <size> <column> <run> <count>
    local lib=${4%%:*} transport=${4#*:} bin out rate
    bin=$BIN_DIR/zlink_bench_zlink
    [[ $lib == libzmq ]] && bin=$LIBZMQ_WS
    out=$(timeout "$TIMEOUT" "$bin" --pattern "$2" --transport "$transport" \
        --size "$3" --count "$6" --csv 2>/dev/null | tail -n 1) || out=""
    rate=$(awk -F, 'NR == 1 && $8 == "OK" { print $10 }' <<<"$out")
    if [[ -z $rate ]]; then
        echo "  $1 $2 $3 $4 run $5: FAILED" >&2
        return 0
    fi
    echo "$1,$2,$3,$4,$5,$rate" >>"$RAW"
    printf '  %-6s %-7s %6s %-11s run %d: %s msg/s\n' "$1" "$2" "$3" "$4" "$5" "$rate"
}

cells=("wss:zlink:wss zlink:tls zlink:ws")
[[ -n $LIBZMQ_WS ]] && cells+=("ws:zlink:ws libzmq:ws")
echo "== ws cells: medians of $RUNS alternating runs"
for spec in "${cells[@]}"; do
    cell=${spec%%:*}
    read -r -a columns <<<"${spec#*:}"
    for p in $PATTERNS; do
        for size in $SIZES; do
            # The encrypted 64 KiB runs are slow enough to need fewer
            # messages inside the per-run timeout.
            count=$((size >= 65536 ? 20000 : size >= 1024 ? 300000 : 1000000))
            [[ $cell == wss && $size -ge 65536 ]] && count=3000
            for ((run = 1; run <= RUNS; run++)); do
                for col in "${columns[@]}"; do
                    run_column "$cell" "$p" "$size" "$col" "$run" "$count"
                done
            done
        done
    done
done

awk -F, -v md="$RESULTS/ws_cells.md" -v csv="$RESULTS/ws_cells.csv" '
    function median(list,   a, n, i, j, t) {
        n = split(list, a, " ")
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
            if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : 0
    }
    function ratio(a, b) { return a > 0 && b > 0 ? sprintf("%.2f", a / b) : "-" }
    function rate(x) { return x > 0 ? sprintf("%.0f", x) : "-" }
    NR > 1 {
        k = $1 "," $2 "," $3
        if (!(k in seen)) { seen[k] = 1; order[++n] = k }
        v[k "," $4] = v[k "," $4] " " $6
    }
    END {
        print "cell,pattern,size,a,b,c,ratios" > csv
        for (i = 1; i <= n; i++) {
            split(order[i], f, ",")
            if (f[1] == "wss") {
                if (!wss_head++) {
                    print "| pattern | size (B) | zlink wss msg/s | zlink tls msg/s | zlink ws msg/s | wss / tls | wss / ws |" > md
                    print "|---|---:|---:|---:|---:|---:|---:|" > md
                }
                a = median(v[order[i] ",zlink:wss"]); b = median(v[order[i] ",zlink:tls"])
                c = median(v[order[i] ",zlink:ws"])
                printf "| %s | %s | %s | %s | %s | %s | %s |\n", f[2], f[3], rate(a), rate(b), rate(c), ratio(a, b), ratio(a, c) > md
                print order[i] "," a "," b "," c "," ratio(a, b) " " ratio(a, c) > csv
            }
        }
        for (i = 1; i <= n; i++) {
            split(order[i], f, ",")
            if (f[1] == "ws") {
                if (!ws_head++) {
                    print "" > md
                    print "| pattern | size (B) | zlink ws msg/s | libzmq ws msg/s | zlink / libzmq |" > md
                    print "|---|---:|---:|---:|---:|" > md
                }
                a = median(v[order[i] ",zlink:ws"]); b = median(v[order[i] ",libzmq:ws"])
                printf "| %s | %s | %s | %s | %s |\n", f[2], f[3], rate(a), rate(b), ratio(a, b) > md
                print order[i] "," a "," b ",," ratio(a, b) > csv
            }
        }
    }' "$RAW"
cat "$RESULTS/ws_cells.md"
