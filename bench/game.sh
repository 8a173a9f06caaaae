# shellcheck shell=bash
# bench/game.sh — the two-process runs of bench/run.sh: the headline cells
# with sender and receiver in two processes (zlink_bench --cross-process),
# and the game-server loads of bench/game_bench.c (many clients, CPU per
# request at fixed rates, idle connections), then issue 31's goal table.
# Sourced by run.sh, whose globals and run_one/aggregate it uses (ROOT,
# RESULTS, RUNS, BIN_DIR, TIMEOUT, FAILURES, LIBS, COMMAND, COMMIT, STARTED).

# Medians of the numeric columns of game_bench rows, one row per key and
# library. Args: the raw file, the number of leading key columns after
# lib,kind (cells), and the first value column; the run number is last.
game_medians() {
    local raw=$1 keys=$2 first=$3
    awk -F, -v keys="$keys" -v first="$first" "$AWK_STATS"'
        {
            k = $1; for (i = 3; i < 3 + keys; i++) k = k "," $i
            if (!(k in seen)) { seen[k] = 1; order[++n] = k }
            status_col = 3 + keys
            if ($status_col != "OK") { failed[k]++; next }
            for (i = first; i < NF; i++) v[k, i] = v[k, i] " " $i
            last = NF - 1
        }
        END {
            for (j = 1; j <= n; j++) {
                k = order[j]; line = k
                for (i = first; i <= last; i++) line = line "," median(v[k, i])
                print line "," (failed[k] + 0)
            }
        }' "$raw"
}

# Runs one game_bench cell once per library, alternating, RUNS times;
# appends every row (with its run number) to raw.
game_cell() {
    local raw=$1 label=$2
    shift 2
    local r lib out
    for ((r = 1; r <= RUNS; r++)); do
        for lib in "${LIBS[@]}"; do
            out=$(timeout "$TIMEOUT" "$BIN_DIR/game_bench_$lib" "$@" 2>"$RESULTS/last_stderr.txt" |
                grep "^$lib," || true)
            if [[ -z $out || $out != *,OK,* ]]; then
                {
                    echo "$lib $label run $r: ${out:-no result}"
                    echo "  repro: $BIN_DIR/game_bench_$lib $*"
                    sed 's/^/  stderr: /' "$RESULTS/last_stderr.txt" | head -n5
                } >>"$FAILURES"
                [[ -z $out ]] && continue
            fi
            echo "$out,$r" >>"$raw"
            printf '  %-7s %-24s run %d: %s\n' "$lib" "$label" "$r" "$(cut -d, -f6- <<<"$out" | cut -c1-90)"
        done
    done
}

# zlink / libzmq of two numbers, or "-".
ratio_of() {
    awk -v z="$1" -v l="$2" 'BEGIN { if (z != "" && l != "" && l + 0 > 0) printf "%.2fx", z / l; else print "-" }'
}

# Many clients: one ROUTER echo process, N DEALERs x K requests in flight
# in another; cells N x K at 64 B and 1 KiB.
run_many_clients() {
    local raw=$RESULTS/many_clients_raw.csv csv=$RESULTS/many_clients.csv
    local md=$RESULTS/many_clients.md cells=${GAME_CELLS:-"10x100 100x30 1000x4"}
    local sizes=${GAME_SIZES:-"64 1024"} seconds=${GAME_SECONDS:-2}
    echo "== many clients: ROUTER echo process, DEALERs in a client process ($RUNS runs each, ${seconds}s windows)"
    : >"$raw"
    local cell size
    for size in $sizes; do
        for cell in $cells; do
            game_cell "$raw" "${cell} ${size} B" --clients "${cell%x*}" \
                --inflight "${cell#*x}" --size "$size" --seconds "$seconds"
        done
    done
    # lib,clients,inflight,size, msg_s p50 p99 ccpu scpu ckib skib connect drops, failed
    game_medians "$raw" 3 7 >"$csv"
    awk -F, '
        { k = $2 "x" $3 "," $4; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
          for (i = 5; i <= NF; i++) v[$1, k, i] = $i }
        function r(a, b) { return (a != "" && b + 0 > 0) ? sprintf("%.2fx", a / b) : "-" }
        function p(i, k, fmt) { return sprintf(fmt " / " fmt, v["zlink", k, i], v["libzmq", k, i]) }
        END {
            print "| clients x in flight | size | zlink msg/s | libzmq msg/s | ratio | RTT p50 ms, zlink / libzmq | RTT p99 ms | client CPU us/msg | server CPU us/msg | client KiB/conn | server KiB/conn | connect s | listen drops |"
            print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
            for (j = 1; j <= n; j++) {
                k = order[j]; split(k, f, ",")
                printf "| %s | %s | %.0f | %.0f | **%s** | %.2f / %.2f | %.2f / %.2f | %s | %s | %s | %s | %s | %s |\n", \
                    f[1], f[2], v["zlink", k, 5], v["libzmq", k, 5], r(v["zlink", k, 5], v["libzmq", k, 5]), \
                    v["zlink", k, 6] / 1000, v["libzmq", k, 6] / 1000, v["zlink", k, 7] / 1000, v["libzmq", k, 7] / 1000, \
                    p(8, k, "%.2f"), p(9, k, "%.2f"), p(10, k, "%.1f"), p(11, k, "%.1f"), p(12, k, "%.2f"), p(13, k, "%.0f")
            }
        }' "$csv" >"$md"
    {
        echo
        echo "msg/s: requests echoed per second (one request and its reply); RTT from each request's send to its reply; CPU: getrusage of each whole process over the window, divided by the messages; KiB/conn: VmRSS at the window's end minus before the sockets, divided by N; connect s: from the first connect until every DEALER has had one reply; listen drops: the system's TcpExt ListenDrops over the connect phase. Medians of $RUNS alternating runs."
    } >>"$md"
    cat "$md"
}

# CPU per request: one DEALER sends at a fixed rate, one request at a
# time, and waits for each reply.
run_req_rate() {
    local raw=$RESULTS/req_rate_raw.csv csv=$RESULTS/req_rate.csv md=$RESULTS/req_rate.md
    local rates=${GAME_RATES:-"1000 10000 50000"} seconds=${GAME_SECONDS:-2} rate
    echo "== CPU per request at fixed rates, 64 B ($RUNS runs each, ${seconds}s windows)"
    : >"$raw"
    for rate in $rates; do
        game_cell "$raw" "${rate} req/s" --rate "$rate" --size 64 --seconds "$seconds"
    done
    # A client that waits in a poll or a poller before each receive, as one
    # that also watches a timeout or other sockets does.
    local wait
    for wait in poll poller; do
        game_cell "$raw" "10000 req/s, $wait" --rate 10000 --size 64 --seconds "$seconds" --wait "$wait"
    done
    # lib,rate,size, achieved p50 p99 ccpu scpu requests window, failed
    game_medians "$raw" 2 6 >"$csv"
    awk -F, '
        { k = $2; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
          for (i = 4; i <= NF; i++) v[$1, k, i] = $i }
        function r(a, b) { return (a != "" && b + 0 > 0) ? sprintf("%.2fx", a / b) : "-" }
        END {
            print "| rate (req/s) | achieved, zlink / libzmq | client CPU us/req, zlink / libzmq | ratio | server CPU us/req | ratio | RTT p50 us | RTT p99 us |"
            print "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
            for (j = 1; j <= n; j++) {
                k = order[j]
                printf "| %s | %.0f / %.0f | %.1f / %.1f | **%s** | %.1f / %.1f | %s | %.1f / %.1f | %.1f / %.1f |\n", k, \
                    v["zlink", k, 4], v["libzmq", k, 4], v["zlink", k, 7], v["libzmq", k, 7], r(v["zlink", k, 7], v["libzmq", k, 7]), \
                    v["zlink", k, 8], v["libzmq", k, 8], r(v["zlink", k, 8], v["libzmq", k, 8]), \
                    v["zlink", k, 5], v["libzmq", k, 5], v["zlink", k, 6], v["libzmq", k, 6]
            }
        }' "$csv" >"$md"
    echo >>"$md"
    echo "One DEALER in a client process, one ROUTER echo in a server process, tcp loopback; the client sends one request, waits for its reply (blocking receive; the rows marked poll and poller first wait in zmq_poll or in a zmq_poller of that one socket, then receive without waiting; libzmq, whose packages leave the poller out, waits in zmq_poll for both), then sleeps until the next send time. CPU: getrusage of each whole process over the window, divided by the requests. Medians of $RUNS alternating runs." >>"$md"
    cat "$md"
}

# Idle: N connections carry one round trip each, then stay silent.
run_idle_cpu() {
    local raw=$RESULTS/idle_cpu_raw.csv csv=$RESULTS/idle_cpu.csv md=$RESULTS/idle_cpu.md
    local conns=${GAME_IDLE_CONNS:-1000} seconds=${GAME_IDLE_SECONDS:-5}
    echo "== idle CPU: $conns silent connections for ${seconds}s ($RUNS runs each)"
    : >"$raw"
    game_cell "$raw" "idle $conns" --idle "$conns" --seconds "$seconds"
    # lib,conns,seconds, ccpu scpu csw ssw connect drops, failed
    game_medians "$raw" 2 6 >"$csv"
    awk -F, '
        { printf "| %s | %s | %s | %.0f | %.0f | %.0f | %.0f | %.2f | %.0f |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }
        BEGIN {
            print "| lib | connections | seconds | client CPU us | server CPU us | client wakeups | server wakeups | connect s | listen drops |"
            print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" }' "$csv" >"$md"
    echo >>"$md"
    echo "CPU (getrusage) and context switches of each whole process over the silent window. One wakeup and a few tens of us on each side are the measurement's own: the client's sleep ending, the server answering the control pipe. Medians of $RUNS alternating runs." >>"$md"
    cat "$md"
}

# The headline cells with sender and receiver in two processes (inproc
# cannot be); with --patterns/--transports/--sizes, their product instead.
run_cross_process() {
    local lat_only=${1:-0} cells=() p t s r lib
    RAW=$RESULTS/xproc_raw.csv
    : >"$RAW"
    local transports=${TRANSPORTS_OVERRIDE:-"tcp ipc"}
    if ((!lat_only)); then
        if [[ -n $PATTERNS_OVERRIDE || -n $SIZES_OVERRIDE ]]; then
            for p in ${PATTERNS_OVERRIDE:-PAIR}; do
                for s in ${SIZES_OVERRIDE:-64 1024 65536}; do cells+=("$p:$s"); done
            done
        else
            cells=(PAIR:64 PAIR:256 PAIR:1024 PAIR:8192 PAIR:65536 PAIR:262144
                PUBSUB:256 PUBSUB:1024 PUBSUB:262144 DEALER_ROUTER:262144
                ROUTER_ROUTER:262144 ROUTER_ROUTER_POLL:64 ROUTER_ROUTER_POLL:262144)
        fi
        echo "== cross-process throughput ($RUNS runs per library per cell, A B A B)"
        local cell
        for cell in "${cells[@]}"; do
            p=${cell%:*} s=${cell#*:}
            for t in $transports; do
                for ((r = 1; r <= RUNS; r++)); do
                    for lib in "${LIBS[@]}"; do
                        run_one "$lib" xthr "$p" "$t" "$s" "$(count_for "$s" 0)" "$r"
                    done
                done
            done
        done
    fi
    echo "== cross-process latency (64 B, ${XPROC_LAT_COUNT:-10000} round trips per run)"
    # REQ_REP is libzmq's own latency test (perf/local_lat, remote_lat);
    # REQ_REP_POLL the same with zmq_poll before each receive (zguide's
    # lazy pirate client, a server that watches a timeout).
    local lat_patterns="PAIR DEALER_ROUTER REQ_REP REQ_REP_POLL"
    ((lat_only)) && lat_patterns="PAIR REQ_REP REQ_REP_POLL"
    for p in $lat_patterns; do
        for t in $transports; do
            for ((r = 1; r <= RUNS; r++)); do
                for lib in "${LIBS[@]}"; do
                    run_one "$lib" xlat "$p" "$t" 64 "${XPROC_LAT_COUNT:-10000}" "$r"
                done
            done
        done
    done
    if ((!lat_only)); then
        echo "== cross-process latency after a burst (64 B, PAIR, bursts of $BURST)"
        for t in $transports; do
            for ((r = 1; r <= RUNS; r++)); do
                for lib in "${LIBS[@]}"; do
                    run_one "$lib" xburst PAIR "$t" 64 2000 "$r"
                done
            done
        done
    fi
    rm -f /tmp/zlink_bench_*.ipc
    echo
    echo "== cross-process medians ($(nproc) CPUs, $(uname -r))"
    {
        echo "Sender and receiver in two processes (\`zlink_bench --cross-process\`): the measuring side (the receiver; the client of a latency run) and the other side each have their own context and I/O thread."
        echo
    } >"$RESULTS/xproc_head.md"
    aggregate "$RAW" "$RESULTS/xproc.csv" "$RESULTS/xproc.md"
    cat "$RESULTS/xproc_head.md" "$RESULTS/xproc.md" >"$RESULTS/xproc.md.tmp"
    mv "$RESULTS/xproc.md.tmp" "$RESULTS/xproc.md"
    rm -f "$RESULTS/xproc_head.md"
}

# Issue 31's goal table from this pass's results.
write_goals() {
    local md=$RESULTS/goals.md mc=$RESULTS/many_clients.csv rr=$RESULTS/req_rate.csv
    local ic=$RESULTS/idle_cpu.csv xp=$RESULTS/xproc.csv
    val() { # file, key regex on the leading columns, column
        [[ -f $1 ]] && awk -F, -v k="$2" -v c="$3" '$0 ~ k { print $c; exit }' "$1"
    }
    local z_m l_m z_c10 z_c1000 z_sk l_sk z_ck l_ck z_r l_r z_x l_x z_ic z_is l_ic l_is
    z_m=$(val "$mc" '^zlink,1000,4,64,' 5) l_m=$(val "$mc" '^libzmq,1000,4,64,' 5)
    z_c10=$(val "$mc" '^zlink,10,100,64,' 8) z_c1000=$(val "$mc" '^zlink,1000,4,64,' 8)
    z_ck=$(val "$mc" '^zlink,1000,4,64,' 10) l_ck=$(val "$mc" '^libzmq,1000,4,64,' 10)
    z_sk=$(val "$mc" '^zlink,1000,4,64,' 11) l_sk=$(val "$mc" '^libzmq,1000,4,64,' 11)
    z_r=$(val "$rr" '^zlink,10000,' 7) l_r=$(val "$rr" '^libzmq,10000,' 7)
    local z_rp l_rp
    z_rp=$(val "$rr" '^zlink,10000 \(poller\),' 7) l_rp=$(val "$rr" '^libzmq,10000 \(poller\),' 7)
    z_x=$(val "$xp" '^lat,PAIR,tcp,64,' 13) l_x=$(val "$xp" '^lat,PAIR,tcp,64,' 14)
    local z_xr l_xr z_xrp l_xrp
    z_xr=$(val "$xp" '^lat,REQ_REP,tcp,64,' 13) l_xr=$(val "$xp" '^lat,REQ_REP,tcp,64,' 14)
    z_xrp=$(val "$xp" '^lat,REQ_REP_POLL,tcp,64,' 13) l_xrp=$(val "$xp" '^lat,REQ_REP_POLL,tcp,64,' 14)
    z_ic=$(val "$ic" '^zlink,' 4) z_is=$(val "$ic" '^zlink,' 5)
    l_ic=$(val "$ic" '^libzmq,' 4) l_is=$(val "$ic" '^libzmq,' 5)
    local z_iw l_iw
    z_iw=$(val "$ic" '^zlink,' 6)/$(val "$ic" '^zlink,' 7)
    l_iw=$(val "$ic" '^libzmq,' 6)/$(val "$ic" '^libzmq,' 7)
    {
        echo "\`$COMMAND\` at $COMMIT, $STARTED, medians of $RUNS alternating runs ($(nproc) CPUs)."
        echo
        echo "| measure | floor | aim | this pass | figures |"
        echo "|---|---|---|---:|---|"
        echo "| 1000x4 msg/s | 3x | 5x | $(ratio_of "$z_m" "$l_m") | ${z_m:-?} / ${l_m:-?} msg/s |"
        echo "| client CPU per message, 1000 / 10 clients (zlink) | <= 3x | <= 1.5x | $(ratio_of "$z_c1000" "$z_c10") | ${z_c1000:-?} / ${z_c10:-?} us |"
        echo "| busy connection memory at 1000x4, server | <= 1.0x | <= 0.5x | $(ratio_of "$z_sk" "$l_sk") | ${z_sk:-?} / ${l_sk:-?} KiB |"
        echo "| busy connection memory at 1000x4, client | <= 1.0x | <= 0.5x | $(ratio_of "$z_ck" "$l_ck") | ${z_ck:-?} / ${l_ck:-?} KiB |"
        echo "| client CPU per request at 10k req/s | <= 0.8x | <= 0.5x | $(ratio_of "$z_r" "$l_r") | ${z_r:-?} / ${l_r:-?} us |"
        echo "| the same, waiting in a zmq_poller first (libzmq: zmq_poll) | <= 0.8x | <= 0.5x | $(ratio_of "$z_rp" "$l_rp") | ${z_rp:-?} / ${l_rp:-?} us |"
        echo "| RTT p50 across processes, 64 B ping-pong (PAIR tcp) | <= 0.8x | <= 0.5x | $(ratio_of "$z_x" "$l_x") | ${z_x:-?} / ${l_x:-?} us one way |"
        echo "| the same, REQ/REP tcp (libzmq's local_lat/remote_lat) | <= 0.8x | <= 0.5x | $(ratio_of "$z_xr" "$l_xr") | ${z_xr:-?} / ${l_xr:-?} us one way |"
        echo "| the same, REQ/REP tcp, zmq_poll before each receive | <= 0.8x | <= 0.5x | $(ratio_of "$z_xrp" "$l_xrp") | ${z_xrp:-?} / ${l_xrp:-?} us one way |"
        echo "| idle CPU, 1000 silent connections (client / server) | 0 | 0 | ${z_ic:-?} / ${z_is:-?} us, ${z_iw} wakeups | libzmq ${l_ic:-?} / ${l_is:-?} us, ${l_iw} wakeups |"
    } >"$md"
    cat "$md"
}
