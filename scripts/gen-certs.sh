#!/usr/bin/env bash
# Certificates for the compose deployment's mTLS (openssl only).
#
#   bash scripts/gen-certs.sh [OUT_DIR]        # default .data/compose/certs (git-ignored)
#
# Two CAs, so that a client certificate can never pass for one of the server's own services:
#   ca.pem (ca.key)                    signs what talks to the frontend: frontend.pem (the frontend's server
#                                      certificate, SAN DNS:temporal, DNS:localhost, IP:127.0.0.1) and one client
#                                      certificate per caller: worker, ui (CN temporal-ui: the frontend maps it to a
#                                      viewer), admin (temporal-setup). A client certificate only authenticates the
#                                      connection: what a caller may do comes from its token (docs/operations.md).
#   internode-ca.pem (internode-ca.key) signs internode.pem, which the server's own services (history, matching,
#                                      the internal frontend) present to each other; no container but `temporal`
#                                      holds a certificate it trusts.
# Every key is mode 0600. Run as root, the keys the containers read are given to LEDGERLOOP_CONTAINER_UID:GID
# (default 1000:1000, the user the Ledgerloop, Temporal and Web UI images run as); run as that user, they are yours
# already. CA keys stay with whoever ran this. Existing files are kept; FORCE=1 reissues all.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/.data/compose/certs}"
DAYS="${CERT_DAYS:-365}"
OWNER="${LEDGERLOOP_CONTAINER_UID:-1000}:${LEDGERLOOP_CONTAINER_GID:-1000}"
command -v openssl >/dev/null || { echo 'gen-certs: openssl is required' >&2; exit 1; }
mkdir -p "$OUT"
chmod 700 "$OUT"
cd "$OUT"
umask 077

if [[ "${FORCE:-0}" == 1 ]]; then rm -f ./*.pem ./*.key ./*.csr ./*.srl ./*.ext; fi

ca() { # name cn
  local name="$1" cn="$2"
  [[ -f "$name.pem" && -f "$name.key" ]] && return 0
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$DAYS" \
    -subj "/CN=$cn" -keyout "$name.key" -out "$name.pem" 2>/dev/null
  echo "gen-certs: CA $name.pem (CN=$cn)"
}

issue() { # ca name cn extendedKeyUsage [subjectAltName]
  local ca="$1" name="$2" cn="$3" eku="$4" san="${5:-}"
  [[ -f "$name.pem" && -f "$name.key" ]] && return 0
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$cn" \
    -keyout "$name.key" -out "$name.csr" 2>/dev/null
  {
    echo 'basicConstraints=critical,CA:FALSE'
    echo 'keyUsage=critical,digitalSignature,keyEncipherment'
    echo "extendedKeyUsage=$eku"
    [[ -n "$san" ]] && echo "subjectAltName=$san"
  } >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA "$ca.pem" -CAkey "$ca.key" -CAcreateserial -days "$DAYS" \
    -extfile "$name.ext" -out "$name.pem" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
  echo "gen-certs: $name.pem (CN=$cn, signed by $ca)"
}

ca ca ledgerloop-compose-ca
ca internode-ca ledgerloop-compose-internode-ca
issue ca frontend temporal serverAuth 'DNS:temporal,DNS:localhost,IP:127.0.0.1'
issue ca worker ledgerloop-worker clientAuth
issue ca ui temporal-ui clientAuth
issue ca admin temporal-admin clientAuth
# The server's services call each other: the internode certificate is both server and client.
issue internode-ca internode temporal 'serverAuth,clientAuth' 'DNS:temporal,DNS:localhost,IP:127.0.0.1'

# Certificates are public; keys are not.
chmod 644 ./*.pem
chmod 600 ./*.key
if [[ "$(id -u)" == 0 ]]; then
  chown "$OWNER" frontend.key internode.key worker.key ui.key admin.key
fi
openssl verify -CAfile ca.pem frontend.pem worker.pem ui.pem admin.pem >/dev/null
openssl verify -CAfile internode-ca.pem internode.pem >/dev/null
# The client CA must not vouch for the internode certificate, nor the internode CA for a client.
if openssl verify -CAfile ca.pem internode.pem >/dev/null 2>&1 || openssl verify -CAfile internode-ca.pem worker.pem >/dev/null 2>&1; then
  echo 'gen-certs: the two CAs are not separate' >&2
  exit 1
fi
echo "gen-certs: ok ($OUT)"
