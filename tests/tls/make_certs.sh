#!/bin/sh
# make_certs.sh DIR — the certificates the tls tests use, made fresh with
# the openssl CLI (nothing is committed): a root CA and an intermediate,
# server and client certificates under the intermediate (with chain
# files), an expired server, a server named for another host, a
# self-signed server, an encrypted key, and a second, unrelated CA.
set -eu
dir=$1
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }

# A CA database for `openssl ca`, which alone can set past dates.
cat >ca.cnf <<'CNF'
[ca]
default_ca = zl
[zl]
database = index.txt
serial = serial
new_certs_dir = .
default_md = sha256
policy = any
copy_extensions = copy
unique_subject = no
[any]
commonName = supplied
[v3_ca]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[leaf]
basicConstraints = CA:false
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
CNF
: >index.txt
echo 1000 >serial

key root
openssl req -x509 -new -key root.key -subj "/CN=zlink test root" -days 3650 \
    -addext "basicConstraints=critical,CA:true" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" -out root.pem

# sign NAME ISSUER EXT [openssl ca date options...]
sign() {
    name=$1 issuer=$2 ext=$3 subj=$4
    shift 4
    openssl req -new -key "$name.key" -subj "$subj" -out "$name.csr" "$@" 2>/dev/null
    openssl ca -batch -config ca.cnf -cert "$issuer.pem" -keyfile "$issuer.key" \
        -extensions "$ext" -in "$name.csr" -out "$name.pem" -notext ${DATES:--days 3650} >/dev/null 2>&1
}

key inter
sign inter root v3_ca "/CN=zlink test intermediate"

key server
sign server inter leaf "/CN=localhost" -addext "subjectAltName=DNS:localhost"
cat server.pem inter.pem >server-chain.pem

key client
sign client inter leaf "/CN=zlink test client"
cat client.pem inter.pem >client-chain.pem

key wronghost
sign wronghost inter leaf "/CN=wrong.example" -addext "subjectAltName=DNS:wrong.example"
cat wronghost.pem inter.pem >wronghost-chain.pem

key expired
DATES="-startdate 20200101000000Z -enddate 20200201000000Z" \
    sign expired inter leaf "/CN=localhost" -addext "subjectAltName=DNS:localhost"
cat expired.pem inter.pem >expired-chain.pem

key selfsigned
openssl req -x509 -new -key selfsigned.key -subj "/CN=localhost" -days 3650 \
    -addext "subjectAltName=DNS:localhost" -out selfsigned.pem

# An unrelated CA: trusts none of the above.
key other
openssl req -x509 -new -key other.key -subj "/CN=zlink other root" -days 3650 \
    -addext "basicConstraints=critical,CA:true" -out other.pem

# The server key again, encrypted with a password (the traditional PEM
# form, which every mbedTLS reads; 2.28 lacks PKCS#8 with AES).
openssl ec -in server.key -aes256 -passout pass:secret -out server-enc.key 2>/dev/null

rm -f ./*.csr
echo ok >done
