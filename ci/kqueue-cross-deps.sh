#!/usr/bin/env bash
# kqueue-cross-deps.sh — what ci/kqueue-cross.sh builds with, into a cache
# outside git: zig from PyPI (in a venv of its own), and for each zig
# target a static libuv and Check cross-built from Debian's own source
# packages (`apt-get source`, as ci/windows-deps.sh does for mingw), a
# static mbedTLS 3.6 from Debian 13's source package (what Homebrew's
# mbedtls@3 and vcpkg ship; fetched as ci/mbedtls3.sh does) and a static
# wslay from the wslay-sys crate's copy of its C source (wslay 1.1.1, as
# Homebrew's wslay). For macOS, mbedTLS goes where Homebrew's keg-only
# mbedtls@3 lives, not beside the others.
#
#   ci/kqueue-cross-deps.sh <zig targets...>   prints the cache directory
#
#   ZLINK_CROSS_CACHE   the cache (default: $HOME/.cache/zlink-kqueue-cross);
#                       the dependencies are keyed on this script and
#                       cmake/zig-cross.cmake, so editing either rebuilds
#
# Fails loudly when pip or zig cannot be had. Needs root for apt-get.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${ZLINK_CROSS_CACHE:-$HOME/.cache/zlink-kqueue-cross}
TOOLCHAIN=$ROOT/cmake/zig-cross.cmake
# 0.15.x ships the macOS, FreeBSD and NetBSD libc headers and stubs (not
# OpenBSD's).
ZIG_SPEC='ziglang>=0.15,<0.16'
# Given by ci/kqueue-cross.sh, so that its list is not part of the key.
TARGETS=$*
JOBS=$(nproc 2>/dev/null || echo 2)

log() { printf '[kqueue-cross-deps] %s\n' "$*" >&2; }
die() {
    log "FAILED: $*"
    exit 1
}

# shellcheck source=lib/deb-source.sh
. "$ROOT/ci/lib/deb-source.sh"

stamp_key() {
    cat "$0" "$TOOLCHAIN" "$DEB_SOURCE_LIB" | sha256sum | cut -d' ' -f1
}
KEY=$(stamp_key)
DEPS_ROOT=$CACHE/deps-${KEY:0:16}

# zig from PyPI, in a venv of its own (Debian's pip refuses system
# installs).
ensure_zig() {
    local venv=$CACHE/venv
    if [ ! -x "$venv/bin/python" ] ||
        ! "$venv/bin/python" -m ziglang version >/dev/null 2>&1; then
        apt_install python3 python3-venv python3-pip
        rm -rf "$venv"
        python3 -m venv "$venv" || die "python3 -m venv"
        "$venv/bin/pip" install -q "$ZIG_SPEC" ||
            die "pip install $ZIG_SPEC (no network or no PyPI?)"
    fi
    ZIG=$("$venv/bin/python" -c \
        'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
    [ -x "$ZIG" ] || die "no zig binary in the ziglang package"
    local version
    version=$("$ZIG" version) || die "zig does not run"
    [[ $version == 0.15.* ]] || die "zig $version, want 0.15.x"
    log "zig $version"
}

# One executable per tool, as CMake wants them, with the target baked in.
write_wrappers() { # <target> <dir>
    local target=$1 dir=$2
    mkdir -p "$dir"
    printf '#!/bin/sh\nexec "%s" cc -target %s "$@"\n' "$ZIG" "$target" \
        >"$dir/zig-cc"
    printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$ZIG" >"$dir/zig-ar"
    printf '#!/bin/sh\nexec "%s" ranlib "$@"\n' "$ZIG" >"$dir/zig-ranlib"
    chmod +x "$dir/zig-cc" "$dir/zig-ar" "$dir/zig-ranlib"
}

# libuv and Check from the machine's own suite (ci/lib/deb-source.sh).
fetch_sources() { # <dir>
    local dir=$1
    if [ -d "$dir/done" ]; then
        return 0
    fi
    apt_install dpkg-dev cmake ninja-build
    rm -rf "$dir"
    log "fetching sources: libuv1 check"
    deb_source "$dir" libuv1 check
    mkdir "$dir/done"
}

# mbedTLS 3.6's source from Debian 13 (trixie), with apt lists of its own
# (deb_source_from): the machine's sources and lists stay untouched, and
# apt checks the archive's signature.
MBEDTLS_SUITE=trixie

fetch_mbedtls() { # <dir>
    local dir=$1
    [ -d "$dir/done" ] && return 0
    apt_install dpkg-dev debian-archive-keyring
    rm -rf "$dir"
    mkdir -p "$dir/src"
    log "fetching sources: mbedtls ($MBEDTLS_SUITE)"
    deb_source_from "$MBEDTLS_SUITE" "$dir/src" mbedtls
    grep -qs '#define MBEDTLS_VERSION_MAJOR  *3$' \
        "$dir"/src/mbedtls-*/include/mbedtls/build_info.h ||
        die "$MBEDTLS_SUITE's mbedtls is not 3.x"
    rm -rf "$dir/src/apt"
    mkdir "$dir/done"
}

# wslay's C source as the wslay-sys crate ships it (vendor/), straight from
# crates.io's download URL, checked against the registry index's sha256
# (ci/windows-deps.sh takes the same crate through cargo).
WSLAY_CRATE_VERSION=0.1.2
WSLAY_CRATE_SHA256=f0fb5ec32c9651af69f97458e65b553a4822d74eb89f7c774f3ac3f41478696a

fetch_wslay() { # <dir>
    local dir=$1 crate=$1/wslay-sys.crate
    [ -d "$dir/done" ] && return 0
    apt_install curl ca-certificates
    rm -rf "$dir"
    mkdir -p "$dir"
    log "fetching sources: wslay-sys $WSLAY_CRATE_VERSION crate"
    curl -sSfL --retry 3 -o "$crate" \
        "https://static.crates.io/crates/wslay-sys/$WSLAY_CRATE_VERSION/download" ||
        die "wslay-sys download"
    echo "$WSLAY_CRATE_SHA256  $crate" | sha256sum -c --quiet ||
        die "wslay-sys crate checksum"
    tar -xzf "$crate" -C "$dir" || die "wslay-sys unpack"
    [ -f "$dir/wslay-sys-$WSLAY_CRATE_VERSION/vendor/includes/wslay/wslay.h" ] ||
        die "wslay-sys $WSLAY_CRATE_VERSION ships no wslay source"
    mkdir "$dir/done"
}

cmake_quiet() { # <log> cmake args...
    local logfile=$1
    shift
    cmake "$@" >>"$logfile" 2>&1 || { tail -40 "$logfile" >&2; return 1; }
}

# Where mbedTLS goes in a target's prefix. For macOS, where Homebrew keeps
# mbedtls@3 (keg-only: its opt prefix, nothing in the common include and
# lib), so that the cross build finds it the way a Mac's build must.
mbedtls_prefix() { # <target> <prefix>
    case $1 in
    aarch64-macos) echo "$2/opt/homebrew/opt/mbedtls@3" ;;
    x86_64-macos) echo "$2/usr/local/opt/mbedtls@3" ;;
    *) echo "$2" ;;
    esac
}

# Static, position-independent mbedTLS with threads on, as Homebrew
# configures it (scripts/config.py, on a copy of the cached source).
build_mbedtls() { # <target> <work> <prefix> <common cmake args...>
    local target=$1 work=$2 prefix
    prefix=$(mbedtls_prefix "$1" "$3")
    shift 3
    local src=$work/mbedtls-src
    cp -r "$(ls -d "$CACHE"/src-mbedtls/src/mbedtls-*/ | head -1)" "$src"
    local option
    for option in MBEDTLS_THREADING_C MBEDTLS_THREADING_PTHREAD; do
        python3 "$src/scripts/config.py" -f "$src/include/mbedtls/mbedtls_config.h" \
            set "$option" || die "config.py set $option"
    done
    # platform_util.c asks for _POSIX_C_SOURCE, under which FreeBSD's
    # headers hide the explicit_bzero it then calls for FreeBSD.
    local cflags=""
    [[ $target == *freebsd* ]] && cflags=-D__BSD_VISIBLE=1
    log "$target: building mbedTLS"
    cmake_quiet "$work/mbedtls.log" -S "$src" -B "$work/mbedtls" "$@" \
        -DCMAKE_C_FLAGS="$cflags" -DCMAKE_INSTALL_PREFIX="$prefix" \
        -DCMAKE_INSTALL_LIBDIR=lib -DENABLE_PROGRAMS=OFF -DENABLE_TESTING=OFF \
        -DUSE_STATIC_MBEDTLS_LIBRARY=ON -DUSE_SHARED_MBEDTLS_LIBRARY=OFF \
        -DMBEDTLS_FATAL_WARNINGS=OFF
    cmake_quiet "$work/mbedtls.log" --build "$work/mbedtls" -j "$JOBS"
    cmake_quiet "$work/mbedtls.log" --install "$work/mbedtls"
}

# Static wslay: four C files, compiled directly (the crate ships no build
# system of wslay's own), with the macros its build.rs sets for a Unix
# target (arpa/inet.h and netinet/in.h declare htons & co).
build_wslay() { # <target> <work> <prefix>
    local target=$1 work=$2 prefix=$3
    local src=$CACHE/src-wslay/wslay-sys-$WSLAY_CRATE_VERSION/vendor
    log "$target: building wslay"
    mkdir -p "$work/wslay" "$prefix/include/wslay"
    local objects=() f
    for f in wslay_event wslay_frame wslay_net wslay_queue; do
        "$ZLINK_ZIG_BIN/zig-cc" -O2 -fPIC -DHAVE_ARPA_INET_H -DHAVE_NETINET_IN_H \
            -I"$src" -I"$src/includes" -c "$src/$f.c" -o "$work/wslay/$f.o" \
            2>>"$work/wslay.log" || { cat "$work/wslay.log" >&2; die "$target: wslay"; }
        objects+=("$work/wslay/$f.o")
    done
    "$ZLINK_ZIG_BIN/zig-ar" rcs "$prefix/lib/libwslay.a" "${objects[@]}"
    "$ZLINK_ZIG_BIN/zig-ranlib" "$prefix/lib/libwslay.a"
    cp "$src/includes/wslay/wslay.h" "$src/includes/wslay/wslayver.h" \
        "$src/COPYING" "$prefix/include/wslay/"
}

# Static libuv, Check, mbedTLS and wslay for one target, installed into its
# prefix.
build_deps() { # <target>
    local target=$1 prefix=$DEPS_ROOT/$1
    if [ -f "$prefix/.complete" ]; then
        return 0
    fi
    local src=$CACHE/src work=$DEPS_ROOT/work-$target
    fetch_sources "$src"
    fetch_mbedtls "$CACHE/src-mbedtls"
    fetch_wslay "$CACHE/src-wslay"
    rm -rf "$prefix" "$work"
    mkdir -p "$prefix/include" "$prefix/lib" "$work"
    local uv check
    uv=$(ls -d "$src"/libuv1-*/ | head -1)
    check=$(ls -d "$src"/check-*/ | head -1)
    export ZLINK_ZIG_TARGET=$target ZLINK_ZIG_BIN=$DEPS_ROOT/bin-$target
    export ZLINK_DEPS_DIR=$prefix
    # Position-independent: the shared libzlink links this libuv in.
    local common=(-G Ninja -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN"
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix"
        -DBUILD_TESTING=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
    log "$target: building libuv"
    cmake_quiet "$work/uv.log" -S "$uv" -B "$work/uv" "${common[@]}" \
        -DLIBUV_BUILD_TESTS=OFF -DLIBUV_BUILD_BENCH=OFF
    cmake_quiet "$work/uv.log" --build "$work/uv" -j "$JOBS" --target uv_a
    cp -r "$uv/include/." "$prefix/include/"
    cp "$work/uv/libuv_a.a" "$prefix/lib/libuv_a.a"
    # Check's compat clock_gettime for Apple includes CoreServices, which
    # only an SDK has, and uses nothing of it: an empty header stands in.
    mkdir -p "$work/stub/CoreServices"
    : >"$work/stub/CoreServices/CoreServices.h"
    log "$target: building Check"
    cmake_quiet "$work/check.log" -S "$check" -B "$work/check" \
        "${common[@]}" -DCMAKE_C_FLAGS="-I$work/stub"
    cmake_quiet "$work/check.log" --build "$work/check" -j "$JOBS" \
        --target check
    cp "$work/check/src/check.h" "$work/check/check_stdint.h" \
        "$prefix/include/"
    cp "$work/check/src/libcheck.a" "$prefix/lib/"
    build_mbedtls "$target" "$work" "$prefix" "${common[@]}"
    build_wslay "$target" "$work" "$prefix"
    rm -rf "$work"
    touch "$prefix/.complete"
}

main() {
    # Only the cache directory goes to stdout; everything else to stderr.
    exec 3>&1 1>&2
    [ -n "$TARGETS" ] || die "no targets given"
    command -v python3 >/dev/null || apt_install python3
    apt_install cmake ninja-build
    mkdir -p "$CACHE"
    ensure_zig
    for target in $TARGETS; do
        write_wrappers "$target" "$DEPS_ROOT/bin-$target"
        build_deps "$target"
    done
    # Older keys' dependencies are dead weight.
    find "$CACHE" -maxdepth 1 -name 'deps-*' ! -name "deps-${KEY:0:16}" \
        -exec rm -rf {} +
    echo "$DEPS_ROOT" >&3
}

main "$@"
