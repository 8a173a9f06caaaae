#!/usr/bin/env bash
# mbedtls3.sh — builds mbedTLS 3.6 from Debian 13's (trixie's) own source
# package into a cache outside git, so that zlink's tls and ws code is
# compiled and tested against the 3.x API too (vcpkg and Homebrew ship 3.6;
# Debian 12's libmbedtls-dev, which the other stages use, is 2.28).
#
#   ci/mbedtls3.sh                build unless cached; print the prefix
#   ZLINK_MBEDTLS3_CACHE=/path    cache root
#                                 (default: $HOME/.cache/zlink-mbedtls3)
#
# The prefix is <cache root>/<hash of this script>, so editing the script
# builds afresh beside the old one. Only the prefix goes to stdout; progress
# goes to stderr. The prefix holds static, position-independent libraries
# and mbedTLS's CMake package: point CMAKE_PREFIX_PATH at it.
#
# The source comes through apt with an apt configuration of its own (a
# trixie deb-src entry, its own lists in a temporary directory; see
# deb_source_from in ci/lib/deb-source.sh): the machine's sources and lists
# are not touched, and apt checks the archive's signature as usual. Nothing
# is patched but mbedTLS's configuration, set with its own scripts/config.py
# as Debian's package does (threads on, so that the library is safe across
# zlink's I/O threads; deprecated calls warn, so that zlink's -Werror
# refuses them). Needs root for apt-get (CI
# runs as root on a clean Debian 12).
set -euo pipefail

# shellcheck source=lib/deb-source.sh
. "$(dirname "$0")/lib/deb-source.sh"

CACHE_ROOT=${ZLINK_MBEDTLS3_CACHE:-$HOME/.cache/zlink-mbedtls3}
SUITE=trixie
JOBS=$(nproc 2>/dev/null || echo 2)

log() { printf '[mbedtls3] %s\n' "$*" >&2; }

# The helper library is part of the recipe: the key covers it too.
stamp_key() { cat "$0" "$DEB_SOURCE_LIB" | sha256sum | cut -c1-16; }

PREFIX=$CACHE_ROOT/$(stamp_key)

cache_complete() {
    [ -f "$PREFIX/.complete" ] && [ -f "$PREFIX/include/mbedtls/ssl.h" ] &&
        [ -f "$PREFIX/lib/libmbedtls.a" ]
}

fetch_source() { # <work dir>; prints the unpacked source directory
    local work=$1
    log "fetching Debian $SUITE's mbedtls source"
    deb_source_from "$SUITE" "$work/src" mbedtls
    local src
    src=$(ls -d "$work"/src/mbedtls-*/ | head -1)
    [ -n "$src" ] && [ -f "$src/include/mbedtls/build_info.h" ] ||
        { log "no mbedTLS 3 source unpacked"; exit 1; }
    grep -q '#define MBEDTLS_VERSION_MAJOR  *3$' \
        "$src/include/mbedtls/build_info.h" ||
        { log "$SUITE's mbedtls is not 3.x"; exit 1; }
    echo "$src"
}

build_mbedtls() {
    local work=$1 src
    src=$(fetch_source "$work")
    (cd "$src" &&
        for option in MBEDTLS_THREADING_C MBEDTLS_THREADING_PTHREAD \
            MBEDTLS_DEPRECATED_WARNING; do
            python3 scripts/config.py set "$option"
        done) || { log "scripts/config.py failed"; exit 1; }
    local build=$work/build
    log "configuring $(basename "$src")"
    cmake -S "$src" -B "$build" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DCMAKE_INSTALL_LIBDIR=lib \
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
        -DUSE_SHARED_MBEDTLS_LIBRARY=OFF -DUSE_STATIC_MBEDTLS_LIBRARY=ON \
        -DENABLE_PROGRAMS=OFF -DENABLE_TESTING=OFF \
        -DMBEDTLS_FATAL_WARNINGS=OFF \
        >"$work/configure.log" 2>&1 ||
        { cat "$work/configure.log" >&2; exit 1; }
    log "building (-j$JOBS)"
    cmake --build "$build" -j "$JOBS" >"$work/build.log" 2>&1 ||
        { tail -40 "$work/build.log" >&2; exit 1; }
    cmake --install "$build" >>"$work/build.log" 2>&1 ||
        { tail -20 "$work/build.log" >&2; exit 1; }
}

main() {
    if cache_complete; then
        log "cached: $PREFIX"
        echo "$PREFIX"
        return 0
    fi
    apt_install build-essential cmake ninja-build dpkg-dev python3 \
        debian-archive-keyring
    local work
    work=$(mktemp -d "${TMPDIR:-/tmp}/zlink-mbedtls3.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" EXIT
    rm -rf "$PREFIX"
    mkdir -p "$PREFIX"
    local start=$SECONDS
    build_mbedtls "$work"
    touch "$PREFIX/.complete"
    log "built $(grep -o '"3\.[0-9.]*"' \
        "$PREFIX/include/mbedtls/build_info.h" | head -1) in" \
        "$((SECONDS - start)) s: $PREFIX"
    echo "$PREFIX"
}

main "$@"
