#!/usr/bin/env bash
# ws_pair.sh — one ws:// interop run between two zmq_ws_peer builds: the
# server program binds (ROUTER echo, then PUB), the client program connects
# (DEALER, then SUB) and checks what comes back.
#
#   ws_pair.sh SERVER_PEER CLIENT_PEER
#
# Either peer may be the libzmq build (ci/libzmq-ws.sh) or the zlink build
# of tests/interop/zmq_ws_peer.c. Every step is bounded by `timeout`.
set -euo pipefail

server=${1:?usage: ws_pair.sh SERVER_PEER CLIENT_PEER}
client=${2:?usage: ws_pair.sh SERVER_PEER CLIENT_PEER}
work=$(mktemp -d "${TMPDIR:-/tmp}/ws_pair.XXXXXX")
server_pid=""
cleanup() {
    [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# Starts the server in the background and sets $endpoint from the line it
# prints once bound.
start_server() { # <name> <args...>
    local name=$1
    shift
    # The file exists before the server starts, so the first read below
    # cannot race the background job's redirection (and stop the script).
    : >"$work/$name.out"
    # --foreground: our TERM reaches the server once, not also via its group.
    timeout --foreground 60 "$server" "$@" >"$work/$name.out" 2>&1 &
    server_pid=$!
    endpoint=""
    for _ in $(seq 1 100); do
        endpoint=$(sed -n 's/^endpoint \(ws:[^ ]*\)$/\1/p' "$work/$name.out")
        [ -n "$endpoint" ] && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "FAIL $name: the server printed no endpoint"
    cat "$work/$name.out"
    exit 1
}

# Waits for the server; a server that serves until told to stop is told.
finish_server() { # <name> [stop]
    local name=$1 rc=0
    [ "${2:-}" != stop ] || kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" || rc=$?
    server_pid=""
    sed 's/^/  server: /' "$work/$name.out"
    return $rc
}

run() { # <name> <server args> -- <client args>
    local name=$1 stop=$2
    shift 2
    local server_args=()
    while [ "$1" != -- ]; do
        server_args+=("$1")
        shift
    done
    shift
    start_server "$name" "${server_args[@]}"
    local rc=0 src=0
    timeout 60 "$client" "${1}" connect "$endpoint" "${@:2}" || rc=$?
    finish_server "$name" "$stop" || src=$?
    if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
        echo "FAIL $name: client exit $rc, server exit $src ($endpoint)"
        return 1
    fi
    echo "PASS $name ($endpoint)"
}

count=30
run router-dealer "" ROUTER bind 'ws://127.0.0.1:*/echo' echo $count \
    -- DEALER send $count
run pub-sub stop PUB bind 'ws://127.0.0.1:*' publish -- SUB subscribe 50
