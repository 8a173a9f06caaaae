#!/usr/bin/env bash
# kqueue-cross.sh — compiles zlink with the kqueue backend for macOS,
# FreeBSD and NetBSD with zig (zig has no OpenBSD libc), and links the
# library and every test binary against the libuv and Check that
# ci/kqueue-cross-deps.sh cross-built (and caches) for each target.
# Nothing runs (no such machine here): this proves that the sources compile
# against each system's headers and that every function they call exists
# in its C library, as zig's stubs of it describe it. The logic runs in
# ci/test.sh's kqueue stage, on an emulation.
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
    # tls and ws are the same OS-neutral filters on every backend; the
    # cross deps hold no mbedTLS or wslay for these targets, so they are
    # left out of what this stage proves (the kqueue backend).
    cmake_quiet "$dir.log" -G Ninja -S "$ROOT" -B "$dir" \
        -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DCMAKE_BUILD_TYPE=Release \
        -DZLINK_BACKEND=kqueue -DZLINK_BUILD_TESTS=ON \
        -DZLINK_WITH_TLS=OFF -DZLINK_WITH_WS=OFF "${extra[@]}"
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
    # Every suite but those of the transports left out here (tls, ws, wss).
    local expected
    expected=$(ls "$ROOT"/tests/test_*.c | grep -cvE '/test_(tls|tls_resume|wss|ws[a-z_]*)\.c$')
    [ "$tests" -eq "$expected" ] ||
        die "$target: $tests of $expected test binaries linked"
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
