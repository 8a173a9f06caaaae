#!/usr/bin/env bash
# test-browser.sh — the browser stage: headless Debian Chromium loads a page
# that uses jszmq (npm) over ws:// against a PUB server and a ROUTER echo
# server (tests/browser). Exit status 0 only when every check passed.
#
#   ci/test-browser.sh
#
#   ZLINK_BROWSER_SERVER  which stack serves the page: "libzmq" (libzmq with
#                         ws from ci/libzmq-ws.sh) or "zlink" (zlink_ws_peer,
#                         built here); default libzmq until zlink has ws
#   ZLINK_BROWSER_PEER    a zmq_ws_peer-compatible program to use instead
#   ZLINK_BUILD_ROOT      build dirs (default: build); this stage uses
#                         <root>/browser, where npm installs the node modules
#
# The node modules come from npm at test time, pinned by
# tests/browser/package-lock.json; nothing from them is committed. Needs
# root for apt-get (CI runs as root on a clean Debian 12).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_ROOT=${ZLINK_BUILD_ROOT:-build}
[[ $BUILD_ROOT == /* ]] || BUILD_ROOT=$ROOT/$BUILD_ROOT
WORK=$BUILD_ROOT/browser
SERVER=${ZLINK_BROWSER_SERVER:-zlink}

log() { printf '[test-browser] %s\n' "$*" >&2; }

# shellcheck source=lib/deb-source.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/deb-source.sh" # apt_install

# By command, not by package: a machine whose node comes from elsewhere
# (NodeSource's nodejs bundles npm and conflicts with Debian's) is left as
# it is.
install_tools() {
    local missing=()
    command -v node >/dev/null || missing+=(nodejs)
    command -v npm >/dev/null || missing+=(npm)
    [ -x /usr/bin/chromium ] || missing+=(chromium)
    apt_install "${missing[@]}"
}

# The page and driver are copied beside their node_modules, so the source
# tree gets none.
install_node_modules() {
    mkdir -p "$WORK"
    cp "$ROOT"/tests/browser/{package.json,package-lock.json,.npmrc} "$WORK/"
    cp "$ROOT"/tests/browser/{driver.js,page.js,wire.js,process-shim.js,index.html} \
        "$WORK/"
    if ! cmp -s "$WORK/package-lock.json" "$WORK/node_modules/.package-lock.json.ci" \
        2>/dev/null; then
        log "npm ci (tests/browser/package-lock.json)"
        (cd "$WORK" && timeout 600 npm ci --no-audit --no-fund >npm.log 2>&1) ||
            { cat "$WORK/npm.log" >&2; exit 1; }
        cp "$WORK/package-lock.json" "$WORK/node_modules/.package-lock.json.ci"
    fi
    # jszmq ships no browser build: bundle it with the page for the browser.
    (cd "$WORK" && timeout 120 ./node_modules/.bin/esbuild page.js --bundle \
        --format=iife --platform=browser --inject:process-shim.js \
        --outfile=jszmq.bundle.js --log-level=warning)
}

server_peer() {
    if [ -n "${ZLINK_BROWSER_PEER:-}" ]; then
        echo "$ZLINK_BROWSER_PEER"
        return
    fi
    case $SERVER in
    libzmq)
        "$ROOT/ci/libzmq-ws.sh" --peer "$WORK/zmq_ws_peer" >/dev/null
        echo "$WORK/zmq_ws_peer"
        ;;
    zlink)
        local build=$WORK/zlink
        cmake -G Ninja -S "$ROOT" -B "$build" -DZLINK_BUILD_TESTS=ON \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$WORK/zlink-configure.log" 2>&1 ||
            { cat "$WORK/zlink-configure.log" >&2; exit 1; }
        cmake --build "$build" --target zlink_ws_peer >&2
        echo "$build/tests/zlink_ws_peer"
        ;;
    *)
        log "ZLINK_BROWSER_SERVER must be libzmq or zlink, not $SERVER"
        exit 2
        ;;
    esac
}

# examples/browser's page against examples/ws_server, loaded by the same
# driver (the page reports as the test page does).
run_example() {
    local dir=$WORK/example build=$WORK/zlink
    mkdir -p "$dir"
    cp "$ROOT"/examples/browser/{index.html,app.js,process-shim.js} \
        "$ROOT/tests/browser/driver.js" "$dir/"
    (cd "$dir" && timeout 120 "$WORK/node_modules/.bin/esbuild" app.js \
        --bundle --format=iife --platform=browser --inject:process-shim.js \
        --outfile=jszmq.bundle.js --log-level=warning)
    # The build server_peer uses for the zlink server, configured alike.
    cmake -G Ninja -S "$ROOT" -B "$build" -DZLINK_BUILD_TESTS=ON \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$WORK/zlink-configure.log" 2>&1 ||
        { cat "$WORK/zlink-configure.log" >&2; exit 1; }
    cmake --build "$build" --target ws_server >&2
    log "example: examples/browser against examples/ws_server"
    timeout 300 node "$dir/driver.js" \
        --server-cmd "$build/examples/ws_server ws://127.0.0.1:* 120"
}

# The same page over wss://, against the zlink server with a certificate
# from tests/tls/make_certs.sh: the browser's TLS (BoringSSL) against
# zlink's, whose records zlink seals and opens itself on an AES-GCM suite.
run_wss() {
    local peer=$1 certs=$WORK/wss-certs
    sh "$ROOT/tests/tls/make_certs.sh" "$certs" >/dev/null
    local tls="env ZLINK_PEER_TLS_CERT=$certs/server-chain.pem"
    tls+=" ZLINK_PEER_TLS_KEY=$certs/server.key"
    log "wss: the same page over wss://"
    timeout 300 node "$WORK/driver.js" \
        --pub-cmd "$tls $peer PUB bind wss://127.0.0.1:*/pub publish" \
        --router-cmd "$tls $peer ROUTER bind wss://127.0.0.1:*/echo echo"
}

main() {
    install_tools
    install_node_modules
    local peer
    peer=$(server_peer)
    log "servers: $peer ($SERVER), browser: $(/usr/bin/chromium --version 2>/dev/null)"
    # The driver bounds every step; this is the backstop.
    timeout 300 node "$WORK/driver.js" \
        --pub-cmd "$peer PUB bind ws://127.0.0.1:*/pub publish" \
        --router-cmd "$peer ROUTER bind ws://127.0.0.1:*/echo echo"
    [ "$SERVER" = zlink ] && run_wss "$peer"
    run_example
}

main "$@"
