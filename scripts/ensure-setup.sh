#!/usr/bin/env bash
# First step of `npm start` / `npm test` on a fresh clone: installs the npm dependencies when they are missing
# or older than package-lock.json, then the Temporal binaries. A fast no-op when everything is in place.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if [[ ! -d node_modules || ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo 'ensure-setup: installing npm dependencies (npm ci)' >&2
  if ! npm ci --no-audit --no-fund; then
    echo 'ensure-setup: npm ci failed; falling back to npm install' >&2
    npm install --no-audit --no-fund
  fi
  # npm leaves .package-lock.json older than package-lock.json when nothing changed; mark the tree current.
  [[ -f node_modules/.package-lock.json ]] && touch node_modules/.package-lock.json
fi

bash "$ROOT/scripts/install-temporal.sh"
