# shellcheck shell=bash
# bench/report.sh — writes the report from what bench/run.sh left in its
# results directory: bench/RESULTS.md, its chart bench/ratios.svg, and
# results/loopback.md (the plain loops beside this run's matrix). Sourced
# by run.sh, whose globals it reads (ROOT, RESULTS, RUNS, COMMAND, STARTED,
# COMMIT, FAILURES); --report-only runs only this part, on the last run's
# results.

# An SVG bar chart of the zlink/libzmq throughput ratio of every cell.
write_svg() {
    local csv=$1 svg=$2
    awk -F, '
    NR == 1 || $1 != "thr" { next }
    {
        n++; label[n] = $2 " " $3 " " $4; tr[n] = $3
        ratio[n] = ($12 == "" ? -1 : $12 + 0)
        note[n] = ($12 == "" ? ($6 != "OK" ? "zlink " $6 : "libzmq " $7) : "")
        if (ratio[n] > maxr) maxr = ratio[n]
    }
    END {
        if (maxr < 3) maxr = 3
        maxr = int(maxr + 0.999)
        left = 250; width = 600; row = 16; top = 60
        h = top + n * row + 50
        printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n", left + width + 60, h
        printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
        printf "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">zlink / libzmq throughput ratio per cell (median of runs; &gt; 1 means zlink is faster)</text>\n"
        printf "<text x=\"10\" y=\"38\" fill=\"#555\">colour: tcp = blue, ipc = green, inproc = orange; grey text = no ratio</text>\n"
        for (v = 0; v <= maxr; v += 0.5) {
            x = left + v / maxr * width
            printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%s\"/>\n", x, top - 5, x, top + n * row, (v == 1 ? "#d00" : "#ddd"), (v == 1 ? 1.5 : 1)
            if (v == int(v) || maxr <= 4)
                printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.1fx</text>\n", x, top + n * row + 15, v
        }
        colour["tcp"] = "#3a6fd8"; colour["ipc"] = "#3aa55a"; colour["inproc"] = "#e08a1e"
        for (i = 1; i <= n; i++) {
            y = top + (i - 1) * row
            printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 6, y + 11, label[i]
            if (ratio[i] < 0) {
                printf "<text x=\"%d\" y=\"%d\" fill=\"#888\">%s</text>\n", left + 4, y + 11, note[i]
                continue
            }
            w = ratio[i] / maxr * width
            printf "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", left, y + 2, w, row - 4, colour[tr[i]]
            printf "<text x=\"%.1f\" y=\"%d\">%.2f</text>\n", left + w + 4, y + 11, ratio[i]
        }
        printf "</svg>\n"
    }' "$csv" >"$svg"
}

# Loads this run's throughput medians (latest.csv, given as -v latest=FILE)
# into z (zlink) and l (libzmq), keyed "pattern,transport,size".
AWK_LATEST='
BEGIN {
    while ((getline line < latest) > 0) {
        split(line, f, ",")
        if (f[1] == "thr") { z[f[2] "," f[3] "," f[4]] = f[8]; l[f[2] "," f[3] "," f[4]] = f[9] }
    }
}
'

# bench/results/loopback.md from loopback.csv and this run's matrix
# (latest.csv): the loops' table, then zlink beside the loop built as zlink
# runs the large cells. --report-only rewrites it too.
write_loopback_md() {
    local csv=$RESULTS/loopback.csv
    {
        echo "\`bench/run.sh --loopback\` (bench/loopback_raw.c): bodies pushed through one loopback"
        echo "connection with no messaging library, unframed, by non-blocking write and read"
        echo "that retry at once; ipc with zlink's 512 KiB send buffer, tcp with the congestion"
        echo "control zlink gives loopback (cubic). Fill before: the source bodies are filled"
        echo "once, before the clock. Fill thread: a second thread fills each body just before"
        echo "it is sent, as the bench's sender fills each message on its own core, up to depth"
        echo "bodies ahead of the writer, and then waits for it to catch up by half, as a paced"
        echo "zlink sender is woken at half its budget; this is the loop built as zlink runs"
        echo "these cells, and the one to read the throughput columns beside. Depth 1"
        echo "sends one body again and again, always in cache; depth 128 (64 KiB) or 32"
        echo "(256 KiB) cycles through the 8 MiB of bodies that pacing lets a PAIR, DEALER or"
        echo "ROUTER queue; depth 1000 through as many bodies as a queue holds at the default"
        echo "high-water mark, as a PUB's does, so each is sent from memory the caches have"
        echo "dropped. One thread makes both kernel copies, as an I/O thread that serves both"
        echo "ends of the connection does; two threads make one copy each, on two cores. Send"
        echo "splice hands the body's pages to the socket (vmsplice, then splice) instead of"
        echo "writing them, so only the reader copies. That is the writer's copy of a body the"
        echo "writing core has cached; inside zlink, where the sender fills each body on"
        echo "another core, the same send gained nothing (see README)."
        echo "Transport none makes no connection: one thread only fills each body in turn, as"
        echo "the bench's sender fills each message before it sends it; the inproc cells make"
        echo "no kernel copy, so this fill bounds them (their columns show inproc). Median"
        echo "msg/s of $RUNS runs, with the range; the last columns are this run's medians of"
        echo "the matrix for the same transport and size."
        echo
        echo "| transport | size | depth | threads | send | fill | msg/s | range | PAIR zlink | PAIR libzmq | ROUTER_ROUTER_POLL zlink | ROUTER_ROUTER_POLL libzmq | PUBSUB zlink | PUBSUB libzmq |"
        echo "| --- | ---: | ---: | ---: | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
        awk -F, -v latest="$RESULTS/latest.csv" "$AWK_LATEST"'
            function cells(pattern, k) {
                k = pattern "," k
                return " | " ((k in z) ? z[k] : "") " | " ((k in l) ? l[k] : "")
            }
            NR > 1 {
                k = ($1 == "none" ? "inproc" : $1) "," $2
                printf "| %s | %d KiB | %s | %s | %s | %s | %s | %s%s%s%s |\n", $1, $2 / 1024, $3, $4, $5, $6, $8, $9,
                    cells("PAIR", k), cells("ROUTER_ROUTER_POLL", k), cells("PUBSUB", k)
            }' "$csv"
        echo
        echo "zlink beside the loop built as zlink runs these cells (one thread, fill thread):"
        echo "a pattern that waits at the HWM is paced, so its loop runs 8 MiB of bodies ahead;"
        echo "a PUB never waits, so its loop runs 1000 ahead. zlink / loop is the share of the"
        echo "bare loop's rate that zlink reaches, in this run. The last two columns are the"
        echo "ratio to libzmq that a library as fast as the bare loop would score, with the"
        echo "fill thread and with every body filled before the clock (no fill cost at all):"
        echo "where they fall under a cell's floor, no library that makes the same two kernel"
        echo "copies in one thread reaches that floor in this run."
        echo
        echo "| transport | size | pattern | loop depth | loop msg/s | zlink msg/s | zlink / loop | libzmq msg/s | zlink / libzmq | loop / libzmq | loop, fill before / libzmq |"
        echo "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        awk -F, -v latest="$RESULTS/latest.csv" "$AWK_LATEST"'
            NR > 1 && $4 == 1 && $5 == "write" && $6 == "thread" { loop[$1 "," $2 "," $3] = $8 }
            NR > 1 && $4 == 1 && $5 == "write" && $6 == "before" { before[$1 "," $2 "," $3] = $8 }
            END {
                np = split("PAIR DEALER_DEALER DEALER_ROUTER ROUTER_ROUTER ROUTER_ROUTER_POLL PUBSUB", pats, " ")
                split("tcp ipc", ts, " "); split("65536 262144", ss, " ")
                for (i = 1; i <= 2; i++) for (j = 1; j <= 2; j++) for (k = 1; k <= np; k++) {
                    t = ts[i]; sz = ss[j]; p = pats[k]
                    d = p == "PUBSUB" ? 1000 : 8388608 / sz
                    c = p "," t "," sz
                    if (!((t "," sz "," d) in loop) || !(c in z) || z[c] == 0 || l[c] == 0) continue
                    lp = loop[t "," sz "," d]
                    lb = ((t "," sz "," d) in before) ? sprintf("%.2fx", before[t "," sz "," d] / l[c]) : ""
                    printf "| %s | %d KiB | %s | %d | %s | %s | %.0f%% | %s | %.2fx | %.2fx | %s |\n", t, sz / 1024, p, d, lp, z[c], 100 * z[c] / lp, l[c], z[c] / l[c], lp / l[c], lb
                }
            }' "$csv"
    } >"$RESULTS/loopback.md"
}

# One section of the report: a heading and the table a mode wrote, when
# that mode ran.
report_section() {
    local title=$1 table=$2
    [[ -f $table ]] || return 0
    echo "## $title"
    echo
    cat "$table"
    echo
}

write_report() {
    local report=$ROOT/bench/RESULTS.md svg=$ROOT/bench/ratios.svg
    local model
    model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
    [[ -f $RESULTS/latest.csv ]] && write_svg "$RESULTS/latest.csv" "$svg"
    {
        echo "# zlink vs libzmq: benchmark results"
        echo
        echo "Generated by \`$COMMAND\` (bench/run.sh), which rebuilds this file and"
        echo "[ratios.svg](ratios.svg). One program, bench/zlink_bench.c, built against"
        echo "zlink and against libzmq $(pkg-config --modversion libzmq 2>/dev/null || echo '?'), run in alternation (A B A B), $RUNS runs each per cell."
        echo
        echo "- Date: $STARTED"
        echo "- Machine: $(nproc) CPUs, ${model:-unknown CPU}, Linux $(uname -r)"
        echo "- zlink commit: $COMMIT"
        echo "- Method: sender in a second thread of the same process, one context, one I/O thread; throughput timed from the first timed message received to the last, after discarded warm-up messages; every timed message carries a sequence number the receiver checks (a short or reordered count is FAILED, never a number); the sender writes every byte of every body, as an application would (an untouched fresh allocation maps the kernel's shared zero page, and tcp/ipc then copy one cached page instead of the body)."
        echo
        if [[ -f $RESULTS/latest.md ]]; then
            echo "## Throughput and latency"
            echo
            echo "![zlink/libzmq ratios](ratios.svg)"
            echo
            cat "$RESULTS/latest.md"
            echo
        fi
        report_section "Syscalls per message" "$RESULTS/syscalls.md"
        report_section "Instructions per message" "$RESULTS/callgrind.md"
        report_section "Idle memory per connection" "$RESULTS/idle_memory.md"
        report_section "Subscription match rate" "$RESULTS/trie.md"
        report_section "Plain loopback (no library)" "$RESULTS/loopback.md"
        report_section "Across two processes" "$RESULTS/xproc.md"
        report_section "Many clients (two processes)" "$RESULTS/many_clients.md"
        report_section "CPU per request at fixed rates (two processes)" "$RESULTS/req_rate.md"
        report_section "Idle connections (two processes)" "$RESULTS/idle_cpu.md"
        report_section "Issue 31's goals" "$RESULTS/goals.md"
        if [[ -s $FAILURES ]]; then
            echo "## Failures"
            echo
            echo '```'
            cat "$FAILURES"
            echo '```'
        fi
    } >"$report"
    echo "== wrote $report and $svg"
}
