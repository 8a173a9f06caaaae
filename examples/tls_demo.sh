#!/usr/bin/env bash
# tls_demo.sh — makes a CA and a server certificate for "localhost" with the
# openssl CLI in a temporary directory (nothing is kept), then runs
# tls_server and tls_client against each other over tls://127.0.0.1.
#
#   examples/tls_demo.sh [DIR]    DIR holds tls_server and tls_client
#                                 (default: build/examples)
set -euo pipefail

BIN=$(cd "${1:-build/examples}" && pwd)
WORK=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

# A CA, and a server certificate it signs, for the names localhost and
# 127.0.0.1 (P-256 keys; valid for a day, which is all a demo needs).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout ca.key -out ca.pem -subj "/CN=zlink demo CA" -days 1 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
    -days 1 -extfile server.ext -out server.pem 2>/dev/null

: >server.out # exists before the server runs: the first read cannot race it
"$BIN/tls_server" server.pem server.key tls://127.0.0.1:* 3 >server.out &
server_pid=$!
# The server prints its endpoint once it listens; wait for it (at most 10 s).
endpoint=
for _ in $(seq 100); do
    endpoint=$(sed -n 's/^listening on //p' server.out)
    [ -n "$endpoint" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$endpoint" ]; then
    echo "tls_demo: the server did not start" >&2
    cat server.out >&2
    exit 1
fi

"$BIN/tls_client" ca.pem "$endpoint" localhost 3
wait "$server_pid"
server_pid=
cat server.out
echo "tls_demo: OK"
