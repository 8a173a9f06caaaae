#!/usr/bin/env bash
# ci/vcpkg-stage.sh — what ports/zlink does, without vcpkg: configure and
# install zlink with the port's options (default features: curve, tls and
# ws),
# static and shared, into staging prefixes; then build ci/consumer against
# each prefix with find_package(zlink CONFIG) and with pkg-config (--static
# for the static one), and from source with add_subdirectory; run each.
#
#   ci/vcpkg-stage.sh
#
#   ZLINK_BUILD_ROOT   build dirs (default: build); this uses <root>/vcpkg
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_ROOT=${ZLINK_BUILD_ROOT:-build}
[[ $BUILD_ROOT == /* ]] || BUILD_ROOT=$ROOT/$BUILD_ROOT
WORK=$BUILD_ROOT/vcpkg
CONSUMER=$ROOT/ci/consumer

# The options ports/zlink/portfile.cmake passes, vcpkg_check_features'
# output for the default features included.
ZLINK_PORT_OPTIONS=(-DZLINK_WITH_CURVE=ON -DZLINK_WITH_TLS=ON -DZLINK_WITH_WS=ON
    -DZLINK_BUILD_TESTS=OFF -DZLINK_BUILD_EXAMPLES=OFF
    -DZLINK_BUILD_BENCH=OFF -DZLINK_BUILD_FUZZ=OFF)

log() { printf '[vcpkg-stage] %s\n' "$*"; }

# Installs zlink into $WORK/<linkage>/prefix, as vcpkg_cmake_install would
# (Release; vcpkg's debug half differs only by its build type).
stage_install() {
    local linkage=$1 shared=$2
    local build=$WORK/$linkage/build prefix=$WORK/$linkage/prefix
    rm -rf "$prefix"
    log "$linkage: configure and install into $prefix"
    cmake -G Ninja -S "$ROOT" -B "$build" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS="$shared" \
        "${ZLINK_PORT_OPTIONS[@]}" >"$WORK/$linkage/configure.log" ||
        { cat "$WORK/$linkage/configure.log"; exit 1; }
    cmake --build "$build"
    cmake --install "$build" >/dev/null
    # The license travels with the package (vcpkg_install_copyright).
    test -f "$prefix/share/doc/zlink/LICENSE"
    grep -q '^License: MIT$' "$prefix/lib/pkgconfig/zlink.pc"
}

consumer_cmake() {
    local linkage=$1 prefix=$WORK/$1/prefix
    local build=$WORK/$linkage/consumer-cmake
    log "$linkage: consumer with find_package(zlink CONFIG)"
    cmake -G Ninja -S "$CONSUMER" -B "$build" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$prefix" >"$build.log" ||
        { cat "$build.log"; exit 1; }
    grep 'zlink 0.2.0' "$build.log"
    cmake --build "$build"
    LD_LIBRARY_PATH=$prefix/lib "$build/consumer"
}

consumer_pkgconfig() {
    local linkage=$1 static=$2 prefix=$WORK/$1/prefix
    local exe=$WORK/$linkage/consumer-pc
    log "$linkage: consumer with pkg-config $static"
    local flags
    flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config $static \
        --cflags --libs zlink)
    echo "cc ... $flags"
    # Unquoted: pkg-config's output is a word list.
    # shellcheck disable=SC2086
    cc -std=c11 -o "$exe" "$CONSUMER/consumer.c" $flags
    if [ "$linkage" = static ]; then
        # A static consumer carries zlink inside: no libzlink.so needed.
        if ldd "$exe" | grep -q libzlink; then
            echo "static consumer links libzlink.so" >&2
            exit 1
        fi
    fi
    LD_LIBRARY_PATH=$prefix/lib "$exe"
}

# zlink from source in a project that has no Check: ZLINK_BUILD_TESTS is
# OFF for a subproject, and the consumer fails if Check was looked up.
consumer_subdirectory() {
    local build=$WORK/subdirectory
    log "consumer with add_subdirectory(zlink)"
    cmake -G Ninja -S "$CONSUMER" -B "$build" -DCMAKE_BUILD_TYPE=Release \
        -DZLINK_SOURCE_DIR="$ROOT" >"$build.log" ||
        { cat "$build.log"; exit 1; }
    cmake --build "$build"
    "$build/consumer"
}

main() {
    mkdir -p "$WORK/static" "$WORK/shared"
    stage_install static OFF
    consumer_cmake static
    consumer_pkgconfig static --static
    stage_install shared ON
    consumer_cmake shared
    consumer_pkgconfig shared ""
    consumer_subdirectory
    log "all consumers built and ran"
}

main "$@"
