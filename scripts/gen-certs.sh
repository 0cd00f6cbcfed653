#!/usr/bin/env bash
# Certificates for the compose deployment's mTLS between the Ledgerloop processes and Temporal (openssl only).
#
#   bash scripts/gen-certs.sh [OUT_DIR]        # default .data/compose/certs (git-ignored)
#
# Writes a private CA (ca.pem; ca.key stays here, 0600), the Temporal server certificate (server.pem/.key, SAN
# DNS:temporal, DNS:localhost, IP:127.0.0.1; used for the frontend and internode) and one client certificate per
# caller (worker, ui, admin: <name>.pem/.key, clientAuth only). Existing files are kept; FORCE=1 reissues all.
# Keys never leave OUT_DIR and must never be committed (.gitignore covers .data/ and *.key).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/.data/compose/certs}"
DAYS="${CERT_DAYS:-365}"
command -v openssl >/dev/null || { echo 'gen-certs: openssl is required' >&2; exit 1; }
mkdir -p "$OUT"
chmod 700 "$OUT"
cd "$OUT"
umask 077

if [[ "${FORCE:-0}" == 1 ]]; then rm -f ./*.pem ./*.key ./*.csr ./*.srl ./*.ext; fi

if [[ ! -f ca.pem || ! -f ca.key ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$DAYS" \
    -subj '/CN=ledgerloop-compose-ca' -keyout ca.key -out ca.pem 2>/dev/null
  echo "gen-certs: CA written to $OUT/ca.pem"
fi

issue() { # name cn extendedKeyUsage [subjectAltName]
  local name="$1" cn="$2" eku="$3" san="${4:-}"
  [[ -f "$name.pem" && -f "$name.key" ]] && return 0
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$cn" \
    -keyout "$name.key" -out "$name.csr" 2>/dev/null
  {
    echo 'basicConstraints=critical,CA:FALSE'
    echo 'keyUsage=critical,digitalSignature,keyEncipherment'
    echo "extendedKeyUsage=$eku"
    [[ -n "$san" ]] && echo "subjectAltName=$san"
  } >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$DAYS" \
    -extfile "$name.ext" -out "$name.pem" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
  echo "gen-certs: $name.pem (CN=$cn)"
}

# The server certificate doubles as the internode client certificate (the server's services call each other).
issue server temporal 'serverAuth,clientAuth' 'DNS:temporal,DNS:localhost,IP:127.0.0.1'
issue worker ledgerloop-worker clientAuth
issue ui temporal-ui clientAuth
issue admin temporal-admin clientAuth

# The containers run as their own users: certificates and keys readable inside the bind mount; the folder itself
# stays private to this user on the host. The CA key is not needed by any container.
chmod 644 ./*.pem server.key worker.key ui.key admin.key
chmod 600 ca.key
openssl verify -CAfile ca.pem server.pem worker.pem ui.pem admin.pem >/dev/null
echo "gen-certs: ok ($OUT)"
