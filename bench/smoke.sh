#!/bin/sh
# bench/smoke.sh — runs every two-process mode of the bench once, with tiny
# counts, against both builds, and fails unless each reports OK. A check
# that the modes work (ctest bench_smoke), not a measurement. Arg: the
# directory holding the bench executables.
set -eu
dir=$1
fail=0
check() {
    out=$("$@" 2>&1) || true
    case $out in
    *,OK,*) ;;
    *)
        echo "FAILED: $*"
        echo "$out" | head -n 5
        fail=1
        ;;
    esac
}
for lib in zlink libzmq; do
    g=$dir/game_bench_$lib
    b=$dir/zlink_bench_$lib
    check "$g" --clients 20 --inflight 2 --seconds 0.2 --warmup-s 0.1
    check "$g" --rate 2000 --seconds 0.2 --warmup-s 0.1
    check "$g" --idle 20 --seconds 0.2
    check "$b" --pattern PAIR --transport tcp --size 64 --count 20000 \
        --cross-process --csv
    check "$b" --pattern PUBSUB --transport ipc --size 1024 --count 5000 \
        --cross-process --csv
    check "$b" --pattern DEALER_ROUTER --transport tcp --size 64 --latency \
        --count 200 --cross-process --csv
    check "$b" --pattern PAIR --transport ipc --size 64 --burst 10 \
        --count 50 --cross-process --csv
done
rm -f /tmp/zlink_bench_*.ipc
exit $fail
