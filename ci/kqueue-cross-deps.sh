#!/usr/bin/env bash
# kqueue-cross-deps.sh — what ci/kqueue-cross.sh builds with, into a cache
# outside git: zig from PyPI (in a venv of its own), and for each zig
# target a static libuv and Check cross-built from Debian's own source
# packages (`apt-get source`, as ci/windows-deps.sh does for mingw).
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

stamp_key() {
    cat "$0" "$TOOLCHAIN" | sha256sum | cut -d' ' -f1
}
KEY=$(stamp_key)
DEPS_ROOT=$CACHE/deps-${KEY:0:16}

apt_install() {
    command -v dpkg-query >/dev/null || return 0
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

# `apt-get source` needs deb-src entries (ci/windows-deps.sh adds them the
# same way).
fetch_sources() { # <dir>
    local dir=$1
    if [ -d "$dir/done" ]; then
        return 0
    fi
    apt_install dpkg-dev cmake ninja-build
    if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list \
        /etc/apt/sources.list.d/; then
        log "adding deb-src entries derived from the configured deb entries"
        if [ -f /etc/apt/sources.list.d/debian.sources ]; then
            sed 's/^Types: deb$/Types: deb-src/' \
                /etc/apt/sources.list.d/debian.sources \
                >/etc/apt/sources.list.d/zlink-deb-src.sources
        elif [ -f /etc/apt/sources.list ]; then
            sed -n 's/^deb /deb-src /p' /etc/apt/sources.list \
                >/etc/apt/sources.list.d/zlink-deb-src.list
        else
            die "no apt sources to derive deb-src entries from"
        fi
        apt-get update -qq
        export ZLINK_APT_UPDATED=1
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    log "fetching sources: libuv1 check"
    (cd "$dir" && apt-get source -qq libuv1 check >apt-source.log 2>&1) ||
        { cat "$dir/apt-source.log" >&2; die "apt-get source"; }
    mkdir "$dir/done"
}

cmake_quiet() { # <log> cmake args...
    local logfile=$1
    shift
    cmake "$@" >>"$logfile" 2>&1 || { tail -40 "$logfile" >&2; return 1; }
}

# Static libuv and Check for one target, installed into its prefix.
build_deps() { # <target>
    local target=$1 prefix=$DEPS_ROOT/$1
    if [ -f "$prefix/.complete" ]; then
        return 0
    fi
    local src=$CACHE/src work=$DEPS_ROOT/work-$target
    fetch_sources "$src"
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
