/**
 * The public tool API (`ledgerloop/workflow-tools`, `ledgerloop/tool-registry`) and how a worker takes a user's
 * tools module: canonicalization helpers give one form per intent and refuse ambiguous input; a tools module is
 * checked before anything connects; the bundler aliases the workflow's registry only when given a module.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  canonicalMoney,
  CanonicalizationError,
  defineToolModule,
  nfc,
  sortedSet,
  sortedSetBy,
  ToolRegistry,
  ToolRegistryError,
  zonedTime,
} from '../../src/tools';
import { BUNDLER_OPTIONS, bundlerOptionsFor, REPO_ROOT, WORKFLOW_REGISTRY_MODULE } from '../../host/worker/bundle';
import { loadToolsModule } from '../../host/worker/tools-module';
import { createWorker, WorkerConfigError } from '../../host/worker/create-worker';
import { generateSigningKey } from '../../src/capability/capability-keys';
import { labScriptedModel } from '../../lab/scenarios';

const EXAMPLE_TOOLS = path.resolve(__dirname, '../../examples/ticketing/src/tools/workflow-tools.ts');

describe('canonicalization helpers', () => {
  test('NFC strings, sorted sets by code units, zoned times as a UTC instant plus the zone', () => {
    expect(nfc(' Cafe\u0301 ')).toBe('Caf\u00e9');
    expect(sortedSet(['b', 'a', 'B', 'Cafe\u0301', 'Caf\u00e9', 'a '])).toEqual(['B', 'Caf\u00e9', 'a', 'b']);
    expect(zonedTime('2026-12-02T09:00:00+01:00', 'Europe/Berlin')).toEqual({
      at: '2026-12-02T08:00:00.000Z',
      zone: 'Europe/Berlin',
    });
    expect(zonedTime('2026-12-02T08:00Z', 'Europe/Berlin')).toEqual(
      zonedTime('2026-12-02T09:00:00.000+01:00', 'Europe/Berlin'),
    );
    expect(canonicalMoney({ minor: 1250, currency: 'EUR' })).toEqual({ minor: 1250, currency: 'EUR' });
  });

  test('ambiguous input is refused, never guessed', () => {
    expect(() => zonedTime('2026-12-02T09:00:00', 'Europe/Berlin')).toThrow(CanonicalizationError); // no zone offset
    expect(() => zonedTime('2026-02-30T09:00:00Z', 'Europe/Berlin')).toThrow(/not a date-time/); // V8 would roll it over
    expect(() => zonedTime('2026-12-02T09:00:00Z', 'Berlin time')).toThrow(/IANA/);
    expect(() => canonicalMoney({ minor: 12.5, currency: 'EUR' })).toThrow(/minor units/);
    expect(() => canonicalMoney({ minor: 1, currency: 'eur' })).toThrow(/ISO 4217/);
    expect(() => sortedSetBy([{ id: 'a' }, { id: 'a ' }], (x) => x.id)).toThrow(/duplicate set member a/);
    expect(sortedSetBy([{ id: 'b' }, { id: 'a' }], (x) => x.id)).toEqual([{ id: 'a' }, { id: 'b' }]);
  });
});

describe('tool modules', () => {
  test('a module id and its names are checked; a module that defines other tools than it names is refused', () => {
    expect(() => defineToolModule({ id: 'Bad Id', names: ['x'], load: () => [] })).toThrow(ToolRegistryError);
    expect(() => defineToolModule({ id: 'empty', names: [], load: () => [] })).toThrow(/names no tool/);
    const lying = new ToolRegistry([], [defineToolModule({ id: 'lying', names: ['a_tool'], load: () => [] })]);
    expect(() => lying.get('a_tool')).toThrow(/declares \[a_tool\] but defines \[\]/);
  });

  test('the worker loads the example tools module; a path that is relative, missing or exports no registry is Tools.Invalid', () => {
    const registry = loadToolsModule(EXAMPLE_TOOLS);
    expect(registry.names()).toEqual(['ticketing_cancel_ticket', 'ticketing_open_ticket']);
    expect(registry.get('ticketing_open_ticket')?.compensation).toMatchObject({ tool: 'ticketing_cancel_ticket' });
    expect(() => loadToolsModule('examples/ticketing/src/tools/workflow-tools.ts')).toThrow(/absolute path/);
    expect(() => loadToolsModule(path.join(__dirname, 'no-such-module.ts'))).toThrow(/cannot load the tools module/);
    expect(() => loadToolsModule(path.resolve(__dirname, '../../src/tools/canonical-forms.ts'))).toThrow(
      /must export workflowTools/,
    );
  });

  test('the tools module every run evaluates loads no zod; the declaration entry does (the control)', () => {
    const loadsZod = (file: string): boolean =>
      execFileSync(
        process.execPath,
        [
          '-r',
          'tsx/cjs',
          '-e',
          `require(${JSON.stringify(file)}); process.stdout.write(String(Object.keys(require.cache).some((k) => k.includes('/node_modules/zod/'))))`,
        ],
        { cwd: path.resolve(__dirname, '../..'), encoding: 'utf8' },
      ) === 'true';
    expect(loadsZod(EXAMPLE_TOOLS)).toBe(false);
    expect(loadsZod(path.resolve(__dirname, '../../src/tools/registry-entry.ts'))).toBe(false);
    expect(loadsZod(path.resolve(__dirname, '../../src/tools/index.ts'))).toBe(true);
  }, 30_000);

  test('the bundler aliases the workflow registry only when given a tools module', () => {
    expect(bundlerOptionsFor()).toBe(BUNDLER_OPTIONS);
    const hook = bundlerOptionsFor(EXAMPLE_TOOLS).webpackConfigHook;
    const config = hook({ resolve: { alias: { keep: 'me' } } });
    // The registry alias joins what was there and the bundle's one zod and one SHA-256 per worker
    // (host/worker/workflow-zod.ts, workflow-hashes.ts).
    expect(config.resolve?.alias).toEqual({
      keep: 'me',
      zod$: path.join(REPO_ROOT, 'host', 'worker', 'workflow-zod.ts'),
      [require.resolve('zod/v4/locales/index.cjs')]: false,
      '@noble/hashes/sha2$': path.join(REPO_ROOT, 'host', 'worker', 'workflow-hashes.ts'),
      '@noble/hashes/utils$': path.join(REPO_ROOT, 'host', 'worker', 'workflow-hashes.ts'),
      // A tools module's `ledgerloop/…` imports are this package's own files (built or not).
      'ledgerloop/tool-registry$': path.join(REPO_ROOT, 'src', 'tools', 'registry-entry.ts'),
      'ledgerloop/workflow-tools$': path.join(REPO_ROOT, 'src', 'tools', 'index.ts'),
      'ledgerloop/ai-sdk/workflow$': path.join(REPO_ROOT, 'workflows', 'ai-sdk', 'index.ts'),
      [WORKFLOW_REGISTRY_MODULE]: EXAMPLE_TOOLS,
    });
    expect(config.optimization?.concatenateModules).toBe(true);
    expect(() => bundlerOptionsFor('relative/tools')).toThrow(/absolute path/);
  });
});

describe('createWorker', () => {
  const base = {
    services: {},
    model: labScriptedModel(),
    capabilityKey: generateSigningKey(),
    identityIssuers: { current: () => [] },
    address: '127.0.0.1:1', // never reached: every case is refused before connecting
  };

  test('an invalid policy, no model or a bad tools module is refused before anything connects', async () => {
    await expect(createWorker({ ...base, policy: { version: '' } as never })).rejects.toThrow(WorkerConfigError);
    await expect(createWorker({ ...base, policy: { version: 'v1', rules: [] }, model: [] })).rejects.toThrow(
      /model is required/,
    );
    await expect(
      createWorker({ ...base, policy: { version: 'v1', rules: [] }, tools: path.join(__dirname, 'missing.ts') }),
    ).rejects.toThrow(ToolRegistryError);
  });
});
