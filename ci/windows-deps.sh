#!/usr/bin/env bash
# windows-deps.sh — cross-builds zlink's Windows dependencies (libuv, Check,
# mbedTLS)
# with mingw-w64 from Debian's own source packages, into a cache outside git.
#
#   ci/windows-deps.sh            build unless the cache is already complete
#   ZLINK_DEPS_DIR=/path ...      cache location
#                                 (default: $HOME/.cache/zlink-win-deps)
#
# Nothing here is patched or committed: `apt-get source` fetches the exact
# sources Debian ships, and the cache is keyed on this script and the
# toolchain file, so editing either rebuilds. Needs root for apt-get (CI runs
# as root on a clean Debian 12).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEPS=${ZLINK_DEPS_DIR:-$HOME/.cache/zlink-win-deps}
TOOLCHAIN=$ROOT/cmake/mingw-w64-x86_64.cmake
SOURCE_PACKAGES="libuv1 check mbedtls"
JOBS=$(nproc 2>/dev/null || echo 2)

log() { printf '[windows-deps] %s\n' "$*" >&2; }

stamp_key() {
    cat "$0" "$TOOLCHAIN" | sha256sum | cut -d' ' -f1
}

cache_complete() {
    [ "$(cat "$DEPS/.stamp" 2>/dev/null)" = "$(stamp_key)" ] &&
        [ -f "$DEPS/include/uv.h" ] && [ -f "$DEPS/include/check.h" ] &&
        [ -f "$DEPS/include/mbedtls/ssl.h" ]
}

apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
            grep -q 'install ok installed' || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing ${missing[*]}"
    [ -n "${ZLINK_APT_UPDATED:-}" ] || apt-get update -qq
    export ZLINK_APT_UPDATED=1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null
}

# `apt-get source` needs deb-src entries; derive them from the machine's own
# deb entries so the sources match the mirror and snapshot it already uses.
enable_deb_src() {
    if grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list \
        /etc/apt/sources.list.d/; then
        return 0
    fi
    log "adding deb-src entries derived from the configured deb entries"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: deb$/Types: deb-src/' \
            /etc/apt/sources.list.d/debian.sources \
            >/etc/apt/sources.list.d/zlink-deb-src.sources
    elif [ -f /etc/apt/sources.list ]; then
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list \
            >/etc/apt/sources.list.d/zlink-deb-src.list
    else
        log "no apt sources found to derive deb-src entries from"
        exit 1
    fi
    apt-get update -qq
    export ZLINK_APT_UPDATED=1
}

configure() { # <source dir> <build dir> [cmake options...]
    local src=$1 build=$2
    shift 2
    cmake -S "$src" -B "$build" -G Ninja \
        -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$DEPS" \
        -DBUILD_TESTING=OFF "$@" >"$build.log" 2>&1 ||
        { cat "$build.log" >&2; exit 1; }
}

build() { # <build dir> [--target name]
    local build=$1
    shift
    cmake --build "$build" -j "$JOBS" "$@" >>"$build.log" 2>&1 ||
        { tail -40 "$build.log" >&2; exit 1; }
}

# Only the DLL: zlink links libuv's import library, and building the static
# archive as well would double the slowest step of the Windows stage.
build_libuv() {
    local src=$1 build=$2
    configure "$src" "$build" -DLIBUV_BUILD_TESTS=OFF -DLIBUV_BUILD_BENCH=OFF
    build "$build" --target uv
    mkdir -p "$DEPS/include" "$DEPS/lib" "$DEPS/bin"
    cp -r "$src/include/." "$DEPS/include/"
    cp "$build/libuv.dll.a" "$DEPS/lib/"
    cp "$build/libuv.dll" "$DEPS/bin/"
}

build_check() {
    local src=$1 build=$2
    configure "$src" "$build"
    build "$build"
    cmake --install "$build" >>"$build.log" 2>&1
}

# Static libraries with mbedTLS's own default configuration (Debian's build
# adds pthread locking, which zlink does not need: its random generator
# has its own lock).
build_mbedtls() {
    local src=$1 build=$2
    configure "$src" "$build" -DENABLE_PROGRAMS=OFF -DENABLE_TESTING=OFF \
        -DUSE_STATIC_MBEDTLS_LIBRARY=ON -DUSE_SHARED_MBEDTLS_LIBRARY=OFF \
        -DMBEDTLS_FATAL_WARNINGS=OFF
    build "$build"
    cmake --install "$build" >>"$build.log" 2>&1
}

main() {
    if cache_complete; then
        log "cache up to date: $DEPS"
        return 0
    fi
    apt_install mingw-w64 cmake ninja-build dpkg-dev
    enable_deb_src

    WORK=$(mktemp -d "${TMPDIR:-/tmp}/zlink-win-deps.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
    rm -rf "$DEPS"
    mkdir -p "$DEPS"

    log "fetching sources: $SOURCE_PACKAGES"
    # apt-get source as root warns that it cannot sandbox the download.
    (cd "$WORK" && apt-get source -qq $SOURCE_PACKAGES >"$WORK/apt-source.log" 2>&1) ||
        { cat "$WORK/apt-source.log" >&2; exit 1; }

    log "building libuv"
    build_libuv "$(ls -d "$WORK"/libuv1-*/ | head -1)" "$WORK/build-uv"
    log "building Check"
    build_check "$(ls -d "$WORK"/check-*/ | head -1)" "$WORK/build-check"
    log "building mbedTLS"
    build_mbedtls "$(ls -d "$WORK"/mbedtls-*/ | head -1)" "$WORK/build-mbedtls"

    stamp_key >"$DEPS/.stamp"
    log "done: $DEPS"
}

main "$@"
