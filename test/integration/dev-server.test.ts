import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { SA, SEARCH_ATTRIBUTES, SEARCH_ATTRIBUTE_SDK_TYPE } from '../../src/domain/search-attributes';
import { INDEXED_VALUE_TYPE, startDevServer, type DevServer } from '../../host/server/dev-server';

jest.setTimeout(120_000);

const address = process.env.TEMPORAL_ADDRESS;

/** IndexedValueType numbers (temporal.api.enums.v1) by CLI type name: the helper's own table. */
const INDEXED: Record<string, number> = INDEXED_VALUE_TYPE;

test('typed search attribute keys match the registered list', () => {
  const keys = Object.values(SA).map((k) => ({ name: k.name, type: k.type }));
  const list = SEARCH_ATTRIBUTES.map((sa) => ({ name: sa.name, type: SEARCH_ATTRIBUTE_SDK_TYPE[sa.type] }));
  expect(keys).toEqual(list);
});

describe('shared dev server (TEMPORAL_ADDRESS)', () => {
  if (!address) {
    test.skip('TEMPORAL_ADDRESS is not set: run through `npm test` (scripts/test.ts starts the server)', () => {});
    return;
  }

  test('has the project search attributes registered', async () => {
    const connection = await Connection.connect({ address });
    try {
      const res = await connection.operatorService.listSearchAttributes({
        namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
      });
      const custom = res.customAttributes ?? {};
      for (const sa of SEARCH_ATTRIBUTES) {
        expect({ name: sa.name, type: custom[sa.name] }).toEqual({ name: sa.name, type: INDEXED[sa.type] });
      }
    } finally {
      await connection.close();
    }
  });
});

describe('own dev server', () => {
  let tmp: string;
  let server: DevServer | undefined;

  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-devserver-'));
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('survives SIGKILL: a workflow started before the kill is still there after a restart on the same db', async () => {
    const dbFile = path.join(tmp, 'temporal.db');
    server = await startDevServer({ headless: true, dbFile, logFile: path.join(tmp, 'temporal.log') });
    expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(fs.existsSync(dbFile)).toBe(true);

    const workflowId = `dev-server-test-${Date.now()}`;
    let connection = await Connection.connect({ address: server.address });
    try {
      const health = await connection.healthService.check({});
      expect(health.status).toBe(1); // SERVING
      const client = new Client({ connection });
      // No worker polls this task queue: the workflow stays RUNNING.
      await client.workflow.start('noSuchWorkflowType', {
        taskQueue: 'ledgerloop-dev-server-test-unpolled',
        workflowId,
        args: [],
        typedSearchAttributes: [{ key: SA.status, value: 'running' }],
      });
    } finally {
      await connection.close();
    }

    const before = server;
    before.kill('SIGKILL');
    const exit = await before.exited;
    expect(exit.signal).toBe('SIGKILL');

    server = await startDevServer({ headless: true, dbFile, logFile: path.join(tmp, 'temporal.log') });
    expect(server.pid).not.toBe(before.pid);
    connection = await Connection.connect({ address: server.address });
    try {
      const client = new Client({ connection });
      const description = await client.workflow.getHandle(workflowId).describe();
      expect(description.workflowId).toBe(workflowId);
      expect(description.status.name).toBe('RUNNING');
      expect(description.typedSearchAttributes.get(SA.status)).toBe('running');
      await client.workflow.getHandle(workflowId).terminate('test done');
    } finally {
      await connection.close();
    }
    await server.stop();
    await expect(server.exited).resolves.toBeDefined();
    server = undefined;
  });
});
