/**
 * Reads the histories of the runs a first hour left on a server and fails when one holds an identity token in clear
 * text (lab/demo/tokens-in-clear.ts): the runs started since `--since` (or the ids given), on TEMPORAL_ADDRESS
 * (default 127.0.0.1:7233), namespace TEMPORAL_NAMESPACE (default `default`). Histories are read as the server
 * keeps them, without any codec: what the Temporal UI shows without a codec server.
 *
 *   node -r tsx/cjs scripts/check-history-tokens.ts --since 2026-12-07T10:00:00Z [--min-runs 2]
 *   node -r tsx/cjs scripts/check-history-tokens.ts --expect-clear <workflowId>   # the control: must find one
 *
 * Prints one line per run (events, payloads by encoding, findings); exits 1 on a finding (with --expect-clear: on
 * a run without one), 2 on bad arguments.
 */
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { tokensInClear } from '../lab/demo/tokens-in-clear';

interface Args {
  since?: string;
  ids: string[];
  expectClear: boolean;
  minRuns: number;
}

function parseArgs(argv: readonly string[]): Args {
  const out: Args = { ids: [], expectClear: false, minRuns: 1 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--since') out.since = argv[++i];
    else if (a === '--expect-clear') out.expectClear = true;
    else if (a === '--min-runs') out.minRuns = Number(argv[++i]);
    else if (a.startsWith('--')) throw new Error(`unknown flag ${a}`);
    else out.ids.push(a);
  }
  if (out.since !== undefined && Number.isNaN(Date.parse(out.since)))
    throw new Error(`--since: not a time: ${out.since}`);
  if (out.since === undefined && out.ids.length === 0) throw new Error('give --since <time> or workflow ids');
  if (!Number.isInteger(out.minRuns) || out.minRuns < 0) throw new Error('--min-runs: a whole number');
  return out;
}

async function main(): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`check-history-tokens: ${(err as Error).message}`);
    return 2;
  }
  const address = process.env['TEMPORAL_ADDRESS']?.trim() || '127.0.0.1:7233';
  const namespace = process.env['TEMPORAL_NAMESPACE']?.trim() || 'default';
  const connection = await Connection.connect({ address, connectTimeout: '5s' });
  try {
    const client = new Client({ connection, namespace });
    const ids = [...args.ids];
    if (args.since !== undefined) {
      for await (const w of client.workflow.list({ query: `StartTime >= "${new Date(args.since).toISOString()}"` }))
        ids.push(w.workflowId);
    }
    if (ids.length < args.minRuns) {
      console.error(`check-history-tokens: ${ids.length} run(s) on ${address}, expected at least ${args.minRuns}`);
      return 1;
    }
    let bad = 0;
    for (const id of [...new Set(ids)]) {
      const history = await client.workflow.getHandle(id).fetchHistory();
      const report = tokensInClear(history, temporal.api.history.v1.History.encode(history).finish());
      const enc = Object.entries(report.payloads)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ');
      const found = report.findings.map((f) => `${f.where} ${f.encoding}`).join('; ');
      console.log(
        `${id}: ${report.events} events; payloads ${enc || 'none'}; ${found ? `TOKEN IN CLEAR: ${found}` : 'no token in clear'}`,
      );
      if (report.findings.length > 0 !== args.expectClear) bad += 1;
    }
    if (bad > 0) {
      console.error(
        args.expectClear
          ? `check-history-tokens: ${bad} run(s) hold no token in clear, though one was sent in clear: the check cannot see`
          : `check-history-tokens: ${bad} run(s) hold an identity token in clear text`,
      );
      return 1;
    }
    console.log(
      `check-history-tokens: ${new Set(ids).size} run(s) read, ${args.expectClear ? 'each with the token in clear, as sent' : 'no token in clear in any'}`,
    );
    return 0;
  } finally {
    await connection.close();
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`check-history-tokens: ${(err as Error).message}`);
    process.exitCode = 1;
  },
);
