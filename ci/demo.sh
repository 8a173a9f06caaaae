#!/usr/bin/env bash
# ci/demo.sh — installs the build dependencies if missing (Debian 12), builds
# zlink Release into build/demo and runs four examples: router_dealers,
# pubsub_fanout, broker and http_hello.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${ZLINK_BUILD_ROOT:-build}/demo

DEPS=(build-essential cmake ninja-build pkg-config libuv1-dev libzmq3-dev
      libmbedtls-dev libwslay-dev)

installed() {
    dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'
}

install_missing() {
    if ! command -v dpkg >/dev/null; then
        echo "demo: no dpkg here; assuming the dependencies are installed"
        return
    fi
    local missing=() pkg
    for pkg in "$@"; do
        installed "$pkg" || missing+=("$pkg")
    done
    if ((${#missing[@]} == 0)); then
        return
    fi
    echo "demo: installing ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        sudo=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update
    "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
}

install_missing "${DEPS[@]}"

echo "== building zlink (Release) in $BUILD_DIR"
cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DZLINK_BUILD_TESTS=OFF
cmake --build "$BUILD_DIR" --target router_dealers pubsub_fanout broker http_hello

echo
echo "== examples/router_dealers: one ROUTER, three DEALERs over tcp"
"$BUILD_DIR/examples/router_dealers"

echo
echo "== examples/pubsub_fanout: one publisher, three subscribers over tcp"
"$BUILD_DIR/examples/pubsub_fanout"

echo
echo "== examples/broker: clients -> ROUTER -> zlink_proxy -> DEALER -> workers"
"$BUILD_DIR/examples/broker"

echo
echo "== examples/http_hello: HTTP/1.0 between two STREAM sockets (raw tcp, no ZMTP)"
"$BUILD_DIR/examples/http_hello"

if [ -x bench/run.sh ]; then bench/run.sh --quick; fi
