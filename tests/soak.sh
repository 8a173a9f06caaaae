#!/usr/bin/env bash
# tests/soak.sh — the long soak: builds tests/soak (in build/soak, or the
# build dir given) and runs it for a while, by default 10 minutes with 128
# peers at a time. ctest runs the same program for 20 s.
#
#   tests/soak.sh [--build-dir DIR] [--asan] [soak options...]
#
# --asan builds with AddressSanitizer and UBSan (build/soak-asan), so that
# LeakSanitizer checks the end too. Soak options: --seconds N, --peers N,
# --seed N, --growth (the traffic only a bounded zlink survives), --kind
# NAME (one kind of peer only), --verbose.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=
asan=0
args=()
while (($#)); do
    case $1 in
    --build-dir)
        build_dir=$2
        shift 2
        ;;
    --asan)
        asan=1
        shift
        ;;
    *)
        args+=("$1")
        shift
        ;;
    esac
done

if [ -z "$build_dir" ]; then
    build_dir=build/soak
    [ "$asan" = 1 ] && build_dir=build/soak-asan
fi
if [ "$asan" = 1 ]; then
    flags="-fsanitize=address,undefined -fno-omit-frame-pointer \
-fno-sanitize-recover=undefined"
    cmake -G Ninja -S . -B "$build_dir" -DZLINK_BUILD_TESTS=ON \
        -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
        -DCMAKE_C_FLAGS="$flags -O1" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
        -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
else
    cmake -G Ninja -S . -B "$build_dir" -DZLINK_BUILD_TESTS=ON \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build_dir" --target soak

# Defaults first: a later --seconds or --peers in args wins.
exec "$build_dir/tests/soak" --seconds 600 --peers 128 --verbose \
    ${args[@]+"${args[@]}"}
