#!/usr/bin/env bash
# kqueue-cross.sh — compiles zlink with the kqueue backend, tls, ws and wss
# for macOS, FreeBSD and NetBSD with zig (zig has no OpenBSD libc), and
# links the library and every test binary against the libuv, Check,
# mbedTLS 3.6 and wslay that ci/kqueue-cross-deps.sh cross-built (and
# caches) for each target. Nothing runs (no such machine here): this proves
# that the sources compile against each system's headers and mbedTLS 3.6's,
# and that every function they call exists in its C library, as zig's stubs
# of it describe it, or in mbedTLS and wslay. The logic runs in ci/test.sh's
# kqueue stage, on an emulation.
#
#   ci/kqueue-cross.sh                 aarch64-macos x86_64-macos
#                                      x86_64-freebsd x86_64-netbsd
#   ci/kqueue-cross.sh x86_64-freebsd  only these zig targets
#
#   ZLINK_CROSS_CACHE   see ci/kqueue-cross-deps.sh
#   ZLINK_BUILD_ROOT    where the build dirs go (default: build; each
#                       target in cross-<target>)
#
# Fails loudly when zig or a dependency cannot be had: a stage that skips
# in silence proves nothing.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_ROOT=${ZLINK_BUILD_ROOT:-build}
[[ $BUILD_ROOT == /* ]] || BUILD_ROOT=$ROOT/$BUILD_ROOT
TOOLCHAIN=$ROOT/cmake/zig-cross.cmake
TARGETS=${*:-aarch64-macos x86_64-macos x86_64-freebsd x86_64-netbsd}
JOBS=$(nproc 2>/dev/null || echo 2)

log() { printf '[kqueue-cross] %s\n' "$*" >&2; }
die() {
    log "FAILED: $*"
    exit 1
}

cmake_quiet() { # <log> cmake args...
    local logfile=$1
    shift
    cmake "$@" >>"$logfile" 2>&1 || { tail -40 "$logfile" >&2; return 1; }
}

# The library (shared, as shipped) and every test binary for one target.
build_zlink() { # <target>
    local target=$1 dir=$BUILD_ROOT/cross-$1
    export ZLINK_ZIG_TARGET=$target ZLINK_ZIG_BIN=$DEPS_ROOT/bin-$target
    export ZLINK_DEPS_DIR=$DEPS_ROOT/$target
    log "$target: zlink (kqueue) and its tests"
    rm -rf "$dir"
    mkdir -p "$dir"
    local extra=()
    if [[ $target == *netbsd* ]]; then
        kvm_stub "$dir/kvm-stub"
        extra=(-DCMAKE_C_STANDARD_LIBRARIES="-L$dir/kvm-stub -lkvm")
    fi
    # tls, ws and wss on: mbedTLS 3.6 and wslay 1.1.1 come from the cross
    # deps, as Homebrew's mbedtls@3 and wslay do on a Mac.
    cmake_quiet "$dir.log" -G Ninja -S "$ROOT" -B "$dir" \
        -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DCMAKE_BUILD_TYPE=Release \
        -DZLINK_BACKEND=kqueue -DZLINK_BUILD_TESTS=ON \
        -DZLINK_WITH_TLS=ON -DZLINK_WITH_WS=ON "${extra[@]}"
    cmake --build "$dir" -j "$JOBS" || die "$target: build"
    report "$target" "$dir"
}

# A static libuv on NetBSD needs libkvm (uv_resident_set_memory, which
# zlink never calls, shares an object with calls it makes), and zig ships
# no libkvm for NetBSD: the test binaries link against this stand-in,
# which declares the three functions libuv takes from it. So on NetBSD
# the link proves everything except those three.
kvm_stub() { # <dir>
    local dir=$1
    mkdir -p "$dir"
    cat >"$dir/kvm.c" <<'STUB'
/* Stand-in for NetBSD's libkvm, for linking only (ci/kqueue-cross.sh). */
void *kvm_open(void) { return 0; }
void *kvm_getproc2(void) { return 0; }
int kvm_close(void) { return 0; }
STUB
    "$ZLINK_ZIG_BIN/zig-cc" -shared -o "$dir/libkvm.so" "$dir/kvm.c" ||
        die "kvm stand-in"
}

# What the link step proved: the binaries exist for the target's format.
report() { # <target> <dir>
    local target=$1 dir=$2 lib tests
    lib=$(find "$dir" -maxdepth 1 -type f \
        \( -name 'libzlink.so.*' -o -name 'libzlink.*.dylib' \) | head -1)
    [ -n "$lib" ] || die "$target: no shared library"
    tests=$(find "$dir/tests" -maxdepth 1 -type f -name 'test_*' \
        -perm -u+x | wc -l)
    # Every suite, those of tls, ws and wss included.
    local expected
    expected=$(ls "$ROOT"/tests/test_*.c | wc -l)
    [ "$tests" -eq "$expected" ] ||
        die "$target: $tests of $expected test binaries linked"
    # tls and ws are really in, on the cross-built mbedTLS 3.6 (a find that
    # fell back to some other mbedTLS would fail the link or this). For
    # macOS it sits where Homebrew keeps the keg-only mbedtls@3, which
    # cmake/FindMbedTLS.cmake must find unaided.
    local keg=$ZLINK_DEPS_DIR
    case $target in
    aarch64-macos) keg=$keg/opt/homebrew/opt/mbedtls@3 ;;
    x86_64-macos) keg=$keg/usr/local/opt/mbedtls@3 ;;
    esac
    grep -qx "MbedTLS_DIR:PATH=$keg/lib/cmake/MbedTLS" "$dir/CMakeCache.txt" ||
        die "$target: mbedTLS not taken from $keg"
    local mbedtls_version
    mbedtls_version=$(sed -n 's/^#define MBEDTLS_VERSION_STRING  *"\(.*\)"$/\1/p' \
        "$keg/include/mbedtls/build_info.h")
    log "$target: tls and ws on mbedTLS $mbedtls_version and wslay" \
        "$(sed -n 's/^#define WSLAY_VERSION "\(.*\)"$/\1/p' \
            "$ZLINK_DEPS_DIR/include/wslay/wslayver.h")"
    log "$target: linked $(basename "$lib") ($(file -b "$lib" | cut -d, -f1))"
    log "$target: linked $tests test binaries ($(file -b "$dir/tests/test_backend" | cut -d, -f1))"
    # The system calls the backend's OS details rest on, as the library
    # imports them from the target's C library.
    local nm
    nm=$(command -v llvm-nm || command -v llvm-nm-14 || true)
    if [ -n "$nm" ]; then
        local imports
        # NetBSD renames versioned calls (kevent is __kevent50).
        imports=$("$nm" -u "$lib" |
            sed 's/^ *U *//; s/@.*//; s/^_*//; s/^kevent[0-9]*$/kevent/' |
            grep -xE 'kqueue|kevent|accept4?|sendmsg|recvmsg|pipe2?|sched_getcpu|eventfd|epoll_[a-z_]+' |
            sort -u | tr '\n' ' ')
        log "$target: imports ${imports% }"
        local defined
        defined=$("$nm" -g --defined-only "$lib" | sed 's/.* _*//' |
            grep -cxE 'mbedtls_ssl_handshake|wslay_frame_recv')
        [ "$defined" -eq 2 ] || die "$target: no mbedTLS or wslay in the library"
        case " $imports " in
        *" epoll_"* | *" eventfd "*) die "$target: Linux calls in a kqueue build" ;;
        *" kevent "*) ;;
        *) die "$target: no kevent import" ;;
        esac
    fi
}

main() {
    command -v file >/dev/null ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq file >/dev/null
    # shellcheck disable=SC2086
    DEPS_ROOT=$("$ROOT/ci/kqueue-cross-deps.sh" $TARGETS) ||
        die "ci/kqueue-cross-deps.sh"
    for target in $TARGETS; do
        build_zlink "$target"
    done
    log "passed: $TARGETS"
}

main "$@"
