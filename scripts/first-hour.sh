#!/usr/bin/env bash
# The first hour, as printed: `npm start` without --once keeps its stack up and prints the next commands; this runs
# each of them exactly as printed (filling in only the <run id> and <call id> the earlier commands answered), and
# fails when one does not work; then it reads every history those commands left and fails when one holds an
# identity token in clear text (scripts/check-history-tokens.ts), beside the control: the same start with no codec
# key anywhere is refused, and with --allow-token-in-clear its token is found. CI runs it; it stops the demo at
# the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .data
log=.data/first-hour-demo.log
work="$(mktemp -d)"
node -r tsx/cjs cli/main.ts demo > .data/first-hour-demo.out 2> "$log" &
demo=$!
stop() { kill -INT "$demo" 2>/dev/null || true; wait "$demo" 2>/dev/null || true; rm -rf "$work"; }
trap stop EXIT
for _ in $(seq 1 150); do
  grep -q 'Ctrl-C stops the stack' "$log" && break
  kill -0 "$demo" 2>/dev/null || { cat "$log" >&2; echo "first-hour: the demo exited" >&2; exit 1; }
  sleep 2
done
grep -q 'Ctrl-C stops the stack' "$log" || { cat "$log" >&2; echo "first-hour: the demo did not stay up" >&2; exit 1; }
mapfile -t cmds < <(grep -E '^  ([A-Z_]+=[^ ]+ )*npx ledgerloop ' "$log" | sed 's/^  //')
(( ${#cmds[@]} >= 6 )) || { echo "first-hour: expected at least 6 printed commands, got ${#cmds[@]}" >&2; exit 1; }
run_id=''
call_id=''
since="$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"
for c in "${cmds[@]}"; do
  c="${c//<run id>/$run_id}"
  c="${c//<call id>/$call_id}"
  echo "first-hour: \$ $c"
  out="$(timeout 120 bash -c "$c" 2>&1)" || { echo "$out" >&2; echo "first-hour: failed: $c" >&2; exit 1; }
  # Visibility is eventually consistent: a run just started may take a moment to be listed.
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    [[ "$c" == *'list --pending-approvals'* && "$out" != *"$run_id"* ]] || break
    sleep 1
    out="$(timeout 60 bash -c "$c" 2>&1)" || true
  done
  echo "$out" | tail -3
  case "$c" in
    *'start '*'amount.minor=60000'*) run_id="$(echo "$out" | grep -oE 'acme:run-[a-z0-9-]+' | head -1)" ;;
    *'list --pending-approvals'*)
      echo "$out" | grep -q "$run_id" || { echo "first-hour: $run_id is not listed as pending" >&2; exit 1; }
      call_id="$(timeout 60 npx ledgerloop show "$run_id" 2>/dev/null | grep -A3 'pending approvals' | grep -oE 'lc_[0-9]+_[0-9a-f]+' | head -1)" ;;
    *'approve '*) echo "$out" | grep -q "approved $call_id" || { echo "first-hour: the approval was not recorded" >&2; exit 1; } ;;
    *'--wait'*) echo "$out" | grep -q 'SUCCEEDED' || { echo "first-hour: the run did not charge" >&2; exit 1; } ;;
    *' replay '*) echo "$out" | grep -q '1 replayed, 0 failed' || { echo "first-hour: the exported history did not replay" >&2; exit 1; } ;;
  esac
done
rm -f opening-failure-*.json
echo "first-hour: ${#cmds[@]} printed commands worked as printed"
address="$(grep -oE 'Temporal at [0-9.:]+' "$log" | head -1 | cut -d' ' -f3)"
# Every run the printed commands started (two starts, one approved) holds no token in clear.
TEMPORAL_ADDRESS="$address" node -r tsx/cjs scripts/check-history-tokens.ts --since "$since" --min-runs 2 ||
  { echo "first-hour: a printed command left a token in clear in a history" >&2; exit 1; }
# The control, with no codec key to be found (an empty data folder, no LEDGERLOOP_CODEC_KEYS): the first printed
# start is refused; with --allow-token-in-clear it is sent, on a queue nobody polls, and the check finds its token.
first_start="$(printf '%s\n' "${cmds[@]}" | grep -m1 ' start ' | sed 's/ --wait//')"
control="LEDGERLOOP_DATA_DIR=$work LEDGERLOOP_CODEC_KEYS= LEDGERLOOP_CODEC_KEYS_FILE= $first_start --task-queue first-hour-control"
if out="$(timeout 60 bash -c "$control" 2>&1)"; then
  echo "$out" >&2; echo "first-hour: a token with no codec key was sent without --allow-token-in-clear" >&2; exit 1
fi
echo "$out" | grep -q -- '--allow-token-in-clear sends it anyway' || { echo "$out" >&2; echo "first-hour: the refusal does not name the flag" >&2; exit 1; }
clear_id="$(timeout 60 bash -c "$control --allow-token-in-clear" 2>/dev/null | tail -1)"
TEMPORAL_ADDRESS="$address" node -r tsx/cjs scripts/check-history-tokens.ts --expect-clear "$clear_id" ||
  { echo "first-hour: the history check did not see a token sent in clear" >&2; exit 1; }
echo "first-hour: no printed command left a token in clear; the control's token in clear was found"
