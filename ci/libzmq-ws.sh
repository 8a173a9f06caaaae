#!/usr/bin/env bash
# libzmq-ws.sh — builds libzmq with draft APIs and its ws:// transport from
# Debian's own zeromq3 source package, into a cache outside git: a second
# ZWS 2.0 stack for zlink's ws interop tests (Debian's libzmq5 has no ws).
#
#   ci/libzmq-ws.sh               build unless cached; print the prefix
#   ci/libzmq-ws.sh --peer FILE   also compile tests/interop/zmq_ws_peer.c
#                                 against it into FILE
#   ZLINK_LIBZMQ_WS_CACHE=/path   cache root
#                                 (default: $HOME/.cache/zlink-libzmq-ws)
#
# The prefix is <cache root>/<hash of this script>, so editing the script
# builds afresh beside the old one. Only the prefix goes to stdout; progress
# goes to stderr. Its libzmq.so has Debian's soname (libzmq.so.5): link with
# an rpath to <prefix>/lib, never install it system-wide. Needs root for
# apt-get (CI runs as root on a clean Debian 12).
set -euo pipefail

# shellcheck source=lib/deb-source.sh
. "$(dirname "$0")/lib/deb-source.sh"

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE_ROOT=${ZLINK_LIBZMQ_WS_CACHE:-$HOME/.cache/zlink-libzmq-ws}
# Two jobs, no tests, no docs, shared library only: the build is a fixture
# and should cost a CI run as little as it can.
JOBS=2

log() { printf '[libzmq-ws] %s\n' "$*" >&2; }

# The helper library is part of the recipe: the key covers it too.
stamp_key() { cat "$0" "$DEB_SOURCE_LIB" | sha256sum | cut -c1-16; }

PREFIX=$CACHE_ROOT/$(stamp_key)

cache_complete() {
    [ -f "$PREFIX/.complete" ] && [ -f "$PREFIX/include/zmq.h" ]
}

# CMake rather than autotools: the release tarball's CMakeLists knows
# ENABLE_WS, and needs no autoreconf. ws uses libzmq's bundled SHA-1; WSS
# (GnuTLS), CURVE, libsodium and libbsd are off, as nothing here uses them.
build_libzmq() {
    local work=$1
    log "fetching Debian's zeromq3 source"
    deb_source "$work" zeromq3
    local src
    src=$(ls -d "$work"/zeromq3-*/ | head -1)
    local build=$work/build
    log "configuring $(basename "$src") with drafts and ws"
    cmake -S "$src" -B "$build" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_INSTALL_LIBDIR=lib \
        -DENABLE_DRAFTS=ON -DENABLE_WS=ON -DWITH_TLS=OFF -DWITH_NSS=OFF \
        -DENABLE_CURVE=OFF -DWITH_LIBSODIUM=OFF -DWITH_LIBBSD=OFF \
        -DWITH_DOCS=OFF -DBUILD_TESTS=OFF -DBUILD_STATIC=OFF \
        -DWITH_PERF_TOOL=OFF -DENABLE_CPACK=OFF \
        >"$work/configure.log" 2>&1 ||
        { cat "$work/configure.log" >&2; exit 1; }
    grep -q 'Enable WebSocket transport' "$work/configure.log" ||
        { log "libzmq's configure did not enable ws"; exit 1; }
    log "building (-j$JOBS)"
    cmake --build "$build" -j "$JOBS" >"$work/build.log" 2>&1 ||
        { tail -40 "$work/build.log" >&2; exit 1; }
    cmake --install "$build" >>"$work/build.log" 2>&1 ||
        { tail -20 "$work/build.log" >&2; exit 1; }
    grep -q '#define ZMQ_HAVE_WS' "$build/platform.hpp" ||
        { log "the built libzmq lacks ZMQ_HAVE_WS"; exit 1; }
}

ensure_libzmq() {
    if cache_complete; then
        log "cached: $PREFIX"
        return 0
    fi
    apt_install build-essential cmake ninja-build dpkg-dev
    local work
    work=$(mktemp -d "${TMPDIR:-/tmp}/zlink-libzmq-ws.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" EXIT
    rm -rf "$PREFIX"
    mkdir -p "$PREFIX"
    local start=$SECONDS
    build_libzmq "$work"
    touch "$PREFIX/.complete"
    log "built in $((SECONDS - start)) s: $PREFIX"
}

# The peer carries an rpath to this libzmq, so it never picks up Debian's
# libzmq5 (same soname, no ws) from the system.
build_peer() {
    local out=$1
    mkdir -p "$(dirname "$out")"
    gcc -O1 -g -std=c11 -D_POSIX_C_SOURCE=200809L -DZMQ_BUILD_DRAFT_API \
        -o "$out" "$ROOT/tests/interop/zmq_ws_peer.c" \
        -I"$PREFIX/include" -L"$PREFIX/lib" -Wl,-rpath,"$PREFIX/lib" -lzmq
    log "peer: $out"
}

main() {
    local peer=""
    while [ $# -gt 0 ]; do
        case $1 in
        --peer) peer=${2:?--peer needs a file name}; shift 2 ;;
        *) log "unknown argument: $1"; exit 2 ;;
        esac
    done
    ensure_libzmq
    [ -z "$peer" ] || build_peer "$peer"
    echo "$PREFIX"
}

main "$@"
