/**
 * How long a dev server takes to be usable, two ways on the same machine, interleaved round by round:
 *
 *   ours  `startDevServer` (host/server/dev-server.ts): spawn → the frontend answers and every project search
 *         attribute is listed (its `startupMs`);
 *   sdk   `TestWorkflowEnvironment.createLocal` with the same CLI as an `existing-path` executable and the same
 *         search attributes, flags and a SQLite file: create → the environment resolves, then → the search attributes are listed
 *         (the SDK only waits for a connection, up to its hard-coded 5 s).
 *
 *   node -r tsx/cjs lab/bench/dev-server-startup.ts [--rounds 5]
 *
 * Prints one line per start and the medians; a start the SDK gave up on is counted, with its error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { defineSearchAttributeKey } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../../host/server/dev-server';
import { dynamicConfigFlags } from '../../host/server/message-limits';
import { resolveTemporalCli } from '../../host/server/temporal-binaries';
import { SEARCH_ATTRIBUTE_SDK_TYPE, SEARCH_ATTRIBUTES } from '../../src/domain/search-attributes';
import { parseFlags, integerFlag } from '../../src/flags';

async function ours(): Promise<{ readyMs: number }> {
  const server = await startDevServer({ headless: true, ephemeral: true });
  try {
    return { readyMs: server.startupMs };
  } finally {
    await server.stop();
  }
}

async function sdk(): Promise<{ connectedMs: number; readyMs: number }> {
  // A SQLite file as ours has (it survives a restart): the file's schema set-up is about half a second here.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-sdk-dev-'));
  const t0 = performance.now();
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: resolveTemporalCli() },
      dbFilename: path.join(dir, 'temporal.db'),
      searchAttributes: SEARCH_ATTRIBUTES.map((sa) =>
        defineSearchAttributeKey(sa.name, SEARCH_ATTRIBUTE_SDK_TYPE[sa.type]),
      ),
      extraArgs: [...dynamicConfigFlags()],
    },
  });
  const connectedMs = performance.now() - t0;
  try {
    // The same readiness ours waits for: every search attribute listed.
    for (;;) {
      const res = await env.connection.operatorService.listSearchAttributes({ namespace: 'default' });
      if (SEARCH_ATTRIBUTES.every((sa) => res.customAttributes?.[sa.name] !== undefined)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    return { connectedMs, readyMs: performance.now() - t0 };
  } finally {
    await env.teardown();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.floor((s.length - 1) / 2)]! + s[Math.ceil((s.length - 1) / 2)]!) / 2;
};

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2), { rounds: { type: 'string' } });
  const rounds = integerFlag(flags.rounds ?? '5', '--rounds');
  const oursMs: number[] = [];
  const sdkMs: number[] = [];
  const sdkConnectMs: number[] = [];
  const sdkFailures: string[] = [];
  for (let i = 1; i <= rounds; i++) {
    // Alternate which goes first, so a load swing does not favour one side.
    const order = i % 2 === 1 ? (['ours', 'sdk'] as const) : (['sdk', 'ours'] as const);
    for (const kind of order) {
      const load = os.loadavg()[0]!.toFixed(2);
      if (kind === 'ours') {
        const r = await ours();
        oursMs.push(r.readyMs);
        console.log(`round ${i} ours: ready in ${r.readyMs} ms (load ${load})`);
      } else {
        try {
          const r = await sdk();
          sdkMs.push(r.readyMs);
          sdkConnectMs.push(r.connectedMs);
          console.log(
            `round ${i} sdk:  connected in ${r.connectedMs.toFixed(0)} ms, ready in ${r.readyMs.toFixed(0)} ms (load ${load})`,
          );
        } catch (err) {
          sdkFailures.push((err as Error).message.split('\n')[0]!);
          console.log(`round ${i} sdk:  failed (load ${load}): ${(err as Error).message.split('\n')[0]}`);
        }
      }
    }
  }
  console.log(`ours: median ${median(oursMs).toFixed(0)} ms ready, ${oursMs.length} of ${rounds} started`);
  console.log(
    `sdk:  median ${median(sdkConnectMs).toFixed(0)} ms connected, ${median(sdkMs).toFixed(0)} ms ready, ` +
      `${sdkMs.length} of ${rounds} started${sdkFailures.length ? `; failures: ${sdkFailures.join(' | ')}` : ''}`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
