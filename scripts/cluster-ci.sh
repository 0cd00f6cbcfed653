#!/usr/bin/env bash
# The cluster step of CI: Temporal on PostgreSQL, built from its Go module (lab/cluster/), without containers.
#  0. `go test` of the frontend's authorizer and claim mapper (lab/cluster/server/): the decision table, role by API.
#  1. `npm run cluster -- --once`: the opening failure per strategy with a worker host and the Temporal server
#     process SIGKILLed mid-run; exits 1 unless blind_retry / check_receipt / same_key_replay charge 2 / 1 / 1.
#  2. The workshop protocol against a cluster brought up with `ledgerloop cluster up` (its server-restart case
#     runs on a dev server of its own: the fault lab restarts only a server it started).
#     Before it: `cluster status` (the Web UI lists runs through the frontend; its codec server accepts the UI's
#     origin and refuses another) and the start command `up` printed, run exactly as printed.
#     Then scripts/cluster-authz.ts: the frontend refuses an unauthorized terminate and accepts an admin's, refuses
#     a starter another tenant's run and accepts its own, refuses a starter every start that would terminate or
#     change another starter's running run or make more runs than one (and accepts the same start with safe
#     options, and an admin's), gives a worker token its queue and refuses another, and lets the Web UI's gateway
#     read and not terminate; each refusal printed beside its control.
#     Then a rolling upgrade (lab/versioning/): a run waiting for an approval finishes on Worker Deployment version
#     1.0.0 while a new run starts on 1.0.1, each pinned, each charging once.
#  3. The transcript case on that cluster: an OpenAI-planned run whose three turns are planned by three worker
#     hosts (two SIGKILLed while waiting on the model) through the PostgreSQL transcript store.
# The steps that run against the cluster `up` started act as its admin (the token file it keeps fresh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .data
offset="${LEDGERLOOP_CLUSTER_PORT_OFFSET:-10000}"
frontend="$(node -e "console.log(require('./deploy/deployment.json').ports.frontend)")"
address="127.0.0.1:$((frontend + offset))"
# Absolute: the steps below start worker processes in directories of their own.
admin_token="$PWD/.data/cluster/credentials/admin.jwt"

go="$(command -v go || echo /usr/local/go/bin/go)"
(cd lab/cluster/server && GOFLAGS='-mod=readonly -buildvcs=false' timeout --kill-after=30s 20m "$go" test -count=1 .)

timeout --kill-after=30s 20m node -r tsx/cjs cli/main.ts cluster --once

node -r tsx/cjs cli/main.ts cluster up --workers 3 > .data/cluster-up.log 2>&1 &
up_pid=$!
down() { node -r tsx/cjs cli/main.ts cluster down || kill "$up_pid" 2>/dev/null || true; }
trap down EXIT
for _ in $(seq 1 120); do
  if node -r tsx/cjs cli/main.ts cluster status > /dev/null 2>&1 && grep -q 'cluster up:' .data/cluster-up.log; then break; fi
  if ! kill -0 "$up_pid" 2>/dev/null; then cat .data/cluster-up.log >&2; exit 1; fi
  sleep 2
done
grep -q 'cluster up:' .data/cluster-up.log || { echo "cluster-ci: the cluster did not come up" >&2; cat .data/cluster-up.log >&2; exit 1; }
# The Web UI answers, lists runs through the frontend, and its codec server takes the UI's origin only.
node -r tsx/cjs cli/main.ts cluster status > .data/cluster-status.json || { cat .data/cluster-status.json >&2; exit 1; }
# The start command `up` printed, exactly as printed: a debit through the cluster's worker hosts.
start_cmd="$(grep -m1 'npx ledgerloop start' .data/cluster-up.log | sed 's/^ *//')"
[[ -n "$start_cmd" ]] || { echo "cluster-ci: up printed no start command" >&2; exit 1; }
timeout --kill-after=10s 3m env $start_cmd | tee .data/cluster-start.log
grep -q 'SUCCEEDED' .data/cluster-start.log || { echo "cluster-ci: the printed start command did not charge" >&2; exit 1; }
# Who may call what at the frontend: each refusal beside its control.
timeout --kill-after=10s 3m node -r tsx/cjs scripts/cluster-authz.ts
TEMPORAL_ADDRESS="$address" LEDGERLOOP_TEMPORAL_TOKEN_FILE="$admin_token" \
  timeout --kill-after=30s 15m npx ledgerloop faults protocols/workshop.json --report .data/cluster-workshop-report.json
TEMPORAL_ADDRESS="$address" LEDGERLOOP_TEMPORAL_TOKEN_FILE="$admin_token" \
  timeout --kill-after=30s 10m node -r tsx/cjs lab/versioning/main.ts
TEMPORAL_ADDRESS="$address" LEDGERLOOP_TEMPORAL_TOKEN_FILE="$admin_token" \
  timeout --kill-after=30s 10m node -r tsx/cjs scripts/test.ts test/integration/transcripts-shared.test.ts
