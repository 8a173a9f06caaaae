#!/usr/bin/env bash
# interop.sh BIN_DIR CERT_DIR — tls:// against real TLS peers: stunnel in
# front of a real libzmq in both directions (multipart messages and a 1 MiB
# body, tests/interop/zmq_peer's pattern), and openssl s_client/s_server
# for the TLS layer itself (TLS 1.2, 1.3 where mbedTLS has it, a chain with
# an intermediate CA, client certificates, rejected self-signed peers).
# Exits 77 (ctest: skipped) only when stunnel, openssl or libzmq's peer is
# missing; ci/test.sh installs them, so in CI it always runs.
set -u

bin=$1
certs=$2
peer=$bin/interop/zmq_peer
zpeer=$bin/zlink_peer
probe=$bin/tls_probe
for tool in openssl stunnel; do
    if ! command -v $tool >/dev/null; then
        echo "interop.sh: $tool is missing: skipped"
        exit 77
    fi
done
if [ ! -x "$peer" ]; then
    echo "interop.sh: $peer (libzmq) is missing: skipped"
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/zlink-tls-interop.XXXXXX")
pids=()
cleanup() {
    # start_stunnel runs in a command substitution's subshell, so its pids
    # come back through a file, not the array.
    if [ -f "$work/stunnel.pids" ]; then
        mapfile -t -O "${#pids[@]}" pids <"$work/stunnel.pids"
    fi
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null
    done
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

failures=0
pass() { echo "PASS $1"; }
fail() {
    echo "FAIL $1"
    failures=$((failures + 1))
}

# Waits up to 10 s for a line matching regex in file; prints the match.
wait_for() {
    local file=$1 regex=$2 match
    for _ in $(seq 1 100); do
        match=$(grep -a -m1 -oE "$regex" "$file" 2>/dev/null)
        if [ -n "$match" ]; then
            echo "$match"
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# A port nobody listens on (the tools below take no wildcard port): tried
# by the tool itself, which fails to bind when it is taken.
random_port() { echo $((20000 + RANDOM % 40000)); }

# start_stunnel NAME SERVICE-LINES...: runs stunnel on a free port, which
# it prints.
start_stunnel() {
    local name=$1
    shift
    local port conf=$work/$name.conf log=$work/$name.log
    for _ in 1 2 3 4 5; do
        port=$(random_port)
        {
            echo "foreground = yes"
            echo "pid = $work/$name.pid"
            echo "output = $log"
            echo "debug = info"
            echo "[zmq]"
            echo "accept = 127.0.0.1:$port"
            printf '%s\n' "$@"
        } >"$conf"
        : >"$log"
        stunnel "$conf" >/dev/null 2>&1 &
        echo $! >>"$work/stunnel.pids"
        if wait_for "$log" "bound to 127.0.0.1:$port|Error binding" |
            grep -q "bound to"; then
            echo "$port"
            return 0
        fi
    done
    cat "$log" >&2
    return 1
}

# The peers' per-call timeout also covers stunnel's start and a TLS
# handshake between them, which a loaded machine running ASan builds can
# take seconds over.
export ZLINK_PEER_TIMEOUT_MS=30000

# Each stunnel case runs with one TLS 1.2 suite: AES-GCM's records zlink
# seals and opens itself (128 and 256 bits: the SHA-256 and SHA-384 key
# expansions), ChaCha20-Poly1305's mbedTLS does.
suites=(ECDHE-ECDSA-AES128-GCM-SHA256 ECDHE-ECDSA-AES256-GCM-SHA384
    ECDHE-ECDSA-CHACHA20-POLY1305)

# ---- stunnel: a libzmq DEALER behind stunnel (client mode) -> zlink tls
# ROUTER ----
stunnel_to_zlink() {
    local suite=$1 out=$work/a-router.out
    ZLINK_PEER_TLS_CERT=$certs/server-chain.pem \
        ZLINK_PEER_TLS_KEY=$certs/server.key \
        timeout 60 "$zpeer" ROUTER bind 'tls://127.0.0.1:*' echo 10 >"$out" 2>&1 &
    local router=$!
    local ep
    ep=$(wait_for "$out" 'tls://127\.0\.0\.1:[0-9]+') ||
        { fail "stunnel client -> zlink ROUTER (no endpoint)"; cat "$out"; return; }
    local port
    port=$(start_stunnel client "client = yes" "connect = 127.0.0.1:${ep##*:}" \
        "CAfile = $certs/root.pem" "verifyChain = yes" "checkHost = localhost" \
        "sslVersionMax = TLSv1.2" "ciphers = $suite") ||
        { fail "stunnel client -> zlink ROUTER (stunnel)"; return; }
    local crc=0 rrc=0
    timeout 60 "$peer" DEALER connect "tcp://127.0.0.1:$port" send 10 zmq-dealer || crc=$?
    wait $router || rrc=$?
    if [ $crc -eq 0 ] && [ $rrc -eq 0 ]; then
        pass "libzmq DEALER -> stunnel client -> zlink tls ROUTER, $suite (multipart, 1 MiB)"
    else
        fail "libzmq DEALER -> stunnel client -> zlink tls ROUTER, $suite (dealer $crc, router $rrc)"
        cat "$out" "$work/client.log"
    fi
}

# ---- stunnel: a zlink tls DEALER -> stunnel (server mode) -> libzmq
# ROUTER ----
zlink_to_stunnel() {
    local suite=$1 out=$work/b-router.out
    timeout 60 "$peer" ROUTER bind 'tcp://127.0.0.1:*' echo 10 >"$out" 2>&1 &
    local router=$!
    local ep
    ep=$(wait_for "$out" 'tcp://127\.0\.0\.1:[0-9]+') ||
        { fail "zlink DEALER -> stunnel server (no endpoint)"; cat "$out"; return; }
    local port
    port=$(start_stunnel server "connect = 127.0.0.1:${ep##*:}" \
        "cert = $certs/server-chain.pem" "key = $certs/server.key" \
        "sslVersionMax = TLSv1.2" "ciphers = $suite") ||
        { fail "zlink DEALER -> stunnel server (stunnel)"; return; }
    local crc=0 rrc=0
    ZLINK_PEER_TLS_CA=$certs/root.pem ZLINK_PEER_TLS_HOSTNAME=localhost \
        timeout 60 "$zpeer" DEALER connect "tls://127.0.0.1:$port" send 10 zlink-dealer || crc=$?
    wait $router || rrc=$?
    if [ $crc -eq 0 ] && [ $rrc -eq 0 ]; then
        pass "zlink tls DEALER -> stunnel server -> libzmq ROUTER, $suite (multipart, 1 MiB)"
    else
        fail "zlink tls DEALER -> stunnel server -> libzmq ROUTER, $suite (dealer $crc, router $rrc)"
        cat "$out" "$work/server.log"
    fi
}

# ---- openssl s_server: zlink connects ----

# s_server_case NAME EXPECT ZLINK-ENV... -- S_SERVER-ARGS...
# EXPECT: "data" (s_server decrypted zlink's ZMTP greeting) or
# "event 0xE 0xV" (zlink reported that failure).
s_server_case() {
    local name=$1 expect=$2
    shift 2
    local env=()
    while [ "$1" != "--" ]; do
        env+=("$1")
        shift
    done
    shift
    local out=$work/s_server.out port started=""
    for _ in 1 2 3 4 5; do
        port=$(random_port)
        : >"$out"
        # s_server ends at the end of its input: give it none for a while.
        sleep 15 | timeout 20 openssl s_server -accept "127.0.0.1:$port" \
            -naccept 1 "$@" >"$out" 2>&1 &
        pids+=($!)
        if wait_for "$out" "ACCEPT|error|Error" | grep -q ACCEPT; then
            started=1
            break
        fi
    done
    [ -n "$started" ] || { fail "$name (s_server did not start)"; cat "$out"; return; }
    local events=$work/probe.out
    env "${env[@]}" timeout 20 "$probe" connect "tls://127.0.0.1:$port" 3 >"$events" 2>&1
    if [ "$expect" = data ]; then
        # The greeting's first byte, 0xFF, appears only if TLS carried it.
        if LC_ALL=C grep -aq $'\xff' "$out"; then
            pass "$name"
        else
            fail "$name"
            cat "$out" "$events"
        fi
    elif grep -q "$expect" "$events" && ! LC_ALL=C grep -aq $'\xff' "$out"; then
        pass "$name"
    else
        fail "$name (want '$expect')"
        cat "$out" "$events"
    fi
}

# ---- openssl s_client: zlink listens ----

# s_client_case NAME EXPECT ZLINK-ENV... -- S_CLIENT-ARGS...
# EXPECT: "data" (s_client verified zlink and received its greeting) or
# "event 0xE 0xV" (zlink refused s_client, and said why).
s_client_case() {
    local name=$1 expect=$2
    shift 2
    local env=()
    while [ "$1" != "--" ]; do
        env+=("$1")
        shift
    done
    shift
    local events=$work/probe.out out=$work/s_client.out
    # Emptied first: wait_for could otherwise read the endpoint the last
    # case's probe printed, before this one's redirect truncates the file,
    # and s_client would knock on a closed port. The probe listens 8 s.
    : >"$events"
    env "${env[@]}" ZLINK_PROBE_TLS_CERT="$certs/server-chain.pem" \
        ZLINK_PROBE_TLS_KEY="$certs/server.key" \
        timeout 20 "$probe" bind 'tls://127.0.0.1:*' 8 >"$events" 2>&1 &
    local zpid=$!
    local ep
    ep=$(wait_for "$events" 'tls://127\.0\.0\.1:[0-9]+') ||
        { fail "$name (no endpoint)"; cat "$events"; return; }
    sleep 2 | timeout 10 openssl s_client -connect "127.0.0.1:${ep##*:}" \
        -ign_eof "$@" >"$out" 2>&1
    wait $zpid
    if [ "$expect" = data ]; then
        if grep -q "Verify return code: 0 (ok)" "$out" &&
            LC_ALL=C grep -aq $'\xff' "$out"; then
            pass "$name"
        else
            fail "$name"
            cat "$out" "$events"
        fi
    elif grep -q "$expect" "$events" && ! LC_ALL=C grep -aq $'\xff' "$out"; then
        pass "$name"
    else
        fail "$name (want '$expect')"
        cat "$out" "$events"
    fi
}

for suite in "${suites[@]}"; do
    stunnel_to_zlink "$suite"
    zlink_to_stunnel "$suite"
done

trust=(ZLINK_PROBE_TLS_CA="$certs/root.pem" ZLINK_PROBE_TLS_HOSTNAME=localhost)
chain=(-cert "$certs/server.pem" -cert_chain "$certs/inter.pem" -key "$certs/server.key")
s_server_case "zlink client, s_server TLS 1.2, chain with intermediate" data \
    "${trust[@]}" -- "${chain[@]}" -tls1_2
s_server_case "zlink client with certificate, s_server requiring one" data \
    "${trust[@]}" ZLINK_PROBE_TLS_CERT="$certs/client-chain.pem" \
    ZLINK_PROBE_TLS_KEY="$certs/client.key" -- "${chain[@]}" -tls1_2 \
    -Verify 2 -CAfile "$certs/root.pem" -verify_return_error
s_server_case "zlink client rejects a self-signed s_server" "event 0x4000 0x41000001" \
    "${trust[@]}" -- -cert "$certs/selfsigned.pem" -key "$certs/selfsigned.key"
if "$probe" features | grep -q "tls1.3 yes"; then
    s_server_case "zlink client, s_server TLS 1.3" data "${trust[@]}" -- \
        "${chain[@]}" -tls1_3
else
    # This mbedTLS has no TLS 1.3: the handshake fails, never downgrades.
    s_server_case "zlink client, s_server TLS 1.3 only: refused (no 1.3 here)" \
        "event 0x2000 0x40000007" "${trust[@]}" -- "${chain[@]}" -tls1_3
fi

verify=(-CAfile "$certs/root.pem" -verify_hostname localhost -verify_return_error)
s_client_case "s_client TLS 1.2 verifies zlink's chain with intermediate" data -- \
    "${verify[@]}" -tls1_2
s_client_case "s_client with certificate, zlink requiring one" data \
    ZLINK_PROBE_TLS_REQUIRE_CLIENT_CERT=1 ZLINK_PROBE_TLS_CA="$certs/root.pem" -- \
    "${verify[@]}" -cert "$certs/client.pem" -cert_chain "$certs/inter.pem" \
    -key "$certs/client.key"
s_client_case "s_client without certificate, zlink requiring one" \
    "event 0x4000 0x41000004" \
    ZLINK_PROBE_TLS_REQUIRE_CLIENT_CERT=1 ZLINK_PROBE_TLS_CA="$certs/root.pem" -- \
    "${verify[@]}"
s_client_case "s_client self-signed, zlink rejects it" "event 0x4000 0x41000001" \
    ZLINK_PROBE_TLS_REQUIRE_CLIENT_CERT=1 ZLINK_PROBE_TLS_CA="$certs/root.pem" -- \
    "${verify[@]}" -cert "$certs/selfsigned.pem" -key "$certs/selfsigned.key"
if "$probe" features | grep -q "tls1.3 yes"; then
    s_client_case "s_client TLS 1.3" data -- "${verify[@]}" -tls1_3
else
    s_client_case "s_client TLS 1.3 only: refused (no 1.3 here)" \
        "event 0x2000 0x40000006" -- "${verify[@]}" -tls1_3
fi

echo "interop.sh: $failures failed"
[ $failures -eq 0 ]
