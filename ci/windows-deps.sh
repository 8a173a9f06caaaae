#!/usr/bin/env bash
# windows-deps.sh — cross-builds zlink's Windows dependencies (libuv, Check,
# mbedTLS, wslay) with mingw-w64 into a cache outside git: libuv, Check and
# mbedTLS from Debian's own source packages, wslay from the wslay-sys crate
# (see below).
#
#   ci/windows-deps.sh            build unless the cache is already complete
#   ZLINK_DEPS_DIR=/path ...      cache location
#                                 (default: $HOME/.cache/zlink-win-deps)
#
# Nothing here is patched or committed: `apt-get source` and cargo fetch the
# exact sources their registries ship, and the cache is keyed on this script,
# ci/lib/deb-source.sh and the toolchain file, so editing any rebuilds. Needs root for apt-get (CI runs
# as root on a clean Debian 12).
set -euo pipefail

# shellcheck source=lib/deb-source.sh
. "$(dirname "$0")/lib/deb-source.sh"

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEPS=${ZLINK_DEPS_DIR:-$HOME/.cache/zlink-win-deps}
TOOLCHAIN=$ROOT/cmake/mingw-w64-x86_64.cmake
SOURCE_PACKAGES="libuv1 check mbedtls"
JOBS=$(nproc 2>/dev/null || echo 2)

log() { printf '[windows-deps] %s\n' "$*" >&2; }

stamp_key() {
    cat "$0" "$DEB_SOURCE_LIB" "$TOOLCHAIN" | sha256sum | cut -d' ' -f1
}

cache_complete() {
    [ "$(cat "$DEPS/.stamp" 2>/dev/null)" = "$(stamp_key)" ] &&
        [ -f "$DEPS/include/uv.h" ] && [ -f "$DEPS/include/check.h" ] &&
        [ -f "$DEPS/include/mbedtls/ssl.h" ] &&
        [ -f "$DEPS/include/wslay/wslay.h" ] && [ -f "$DEPS/lib/libwslay.a" ]
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

# wslay's source: Debian's wslay source package is not served here, but the
# Rust crate wslay-sys ships wslay's C source unchanged (vendor/). cargo
# fetches it from crates.io's sparse index into a throwaway CARGO_HOME;
# cargo compiles nothing. Debian 12's cargo (0.66) has the sparse protocol
# only behind an unstable flag, which RUSTC_BOOTSTRAP unlocks; cargo 1.68
# and later speak it by default. The git index (github.com) is not reachable.
WSLAY_CRATE_VERSION=0.1.2

fetch_wslay() { # <work dir>; prints the directory holding wslay's C source
    local work=$1
    local project=$work/wslay-fetch
    mkdir -p "$project"
    printf '%s\n' '[package]' 'name = "zlink-wslay-fetch"' \
        'version = "0.0.0"' 'edition = "2018"' '[lib]' 'path = "lib.rs"' \
        '[dependencies]' "wslay-sys = \"=$WSLAY_CRATE_VERSION\"" \
        >"$project/Cargo.toml"
    : >"$project/lib.rs"
    local cargo_args=(fetch) env_args=(CARGO_HOME="$work/cargo-home")
    case $(cargo --version | awk '{print $2}') in
    0.* | 1.[0-5][0-9].* | 1.6[0-7].*)
        env_args+=(RUSTC_BOOTSTRAP=1)
        cargo_args=(-Z sparse-registry fetch)
        ;;
    esac
    (cd "$project" && env "${env_args[@]}" \
        CARGO_REGISTRIES_CRATES_IO_PROTOCOL=sparse \
        timeout 600 cargo "${cargo_args[@]}" >"$work/cargo.log" 2>&1) ||
        { cat "$work/cargo.log" >&2; exit 1; }
    local src
    src=$(ls -d "$work"/cargo-home/registry/src/*/wslay-sys-"$WSLAY_CRATE_VERSION" |
        head -1)
    [ -f "$src/vendor/includes/wslay/wslay.h" ] ||
        { log "wslay-sys $WSLAY_CRATE_VERSION ships no wslay source"; exit 1; }
    echo "$src/vendor"
}

# A static libwslay.a. Four C files: the cross compiler is called directly,
# as wslay-sys ships no build system of wslay's own. The macros are the ones
# its build.rs sets for a Windows target (winsock2.h declares htons & co).
build_wslay() {
    local src=$1 build=$2
    local cc=x86_64-w64-mingw32-gcc ar=x86_64-w64-mingw32-ar
    mkdir -p "$build" "$DEPS/include/wslay" "$DEPS/lib"
    local objects=() f
    for f in wslay_event wslay_frame wslay_net wslay_queue; do
        "$cc" -O2 -DHAVE_WINSOCK2_H -I"$src" -I"$src/includes" \
            -c "$src/$f.c" -o "$build/$f.o" 2>>"$build.log" ||
            { cat "$build.log" >&2; exit 1; }
        objects+=("$build/$f.o")
    done
    "$ar" rcs "$DEPS/lib/libwslay.a" "${objects[@]}"
    cp "$src/includes/wslay/wslay.h" "$src/includes/wslay/wslayver.h" \
        "$src/COPYING" "$DEPS/include/wslay/"
}

main() {
    if cache_complete; then
        log "cache up to date: $DEPS"
        return 0
    fi
    apt_install mingw-w64 cmake ninja-build dpkg-dev
    command -v cargo >/dev/null || apt_install cargo

    WORK=$(mktemp -d "${TMPDIR:-/tmp}/zlink-win-deps.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
    rm -rf "$DEPS"
    mkdir -p "$DEPS"

    log "fetching sources: $SOURCE_PACKAGES"
    # shellcheck disable=SC2086
    deb_source "$WORK" $SOURCE_PACKAGES

    log "building libuv"
    build_libuv "$(ls -d "$WORK"/libuv1-*/ | head -1)" "$WORK/build-uv"
    log "building Check"
    build_check "$(ls -d "$WORK"/check-*/ | head -1)" "$WORK/build-check"
    log "building mbedTLS"
    build_mbedtls "$(ls -d "$WORK"/mbedtls-*/ | head -1)" "$WORK/build-mbedtls"
    log "building wslay from the wslay-sys $WSLAY_CRATE_VERSION crate"
    build_wslay "$(fetch_wslay "$WORK")" "$WORK/build-wslay"

    stamp_key >"$DEPS/.stamp"
    log "done: $DEPS"
}

main "$@"
