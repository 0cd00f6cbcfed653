/**
 * The attack suite can fail, shown on small real targets (an HTTP server on loopback, a dead port): a target that
 * lets the attack through is a BREACH; a target that refuses everything, the valid request too, is VOID, never
 * "held"; only a target that refuses the attack and serves its control holds. The services group's check of the
 * admin listener from a non-loopback address is VOID on a dead port (it used to pass on ECONNREFUSED).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { holds, verdict, type AttackGroup } from '../../security/attack';
import { adminOutsideLoopback } from '../../security/attacks/services';
import { attackTable, runAttackGroups } from '../../security/run';
import { getFreePort } from '../../host/server/dev-server';

/** A server that answers 200 to requests carrying `x-grant: valid`, else 403; or 200 / 403 to everything. */
async function target(mode: 'checks' | 'accepts-all' | 'refuses-all'): Promise<{ url: string; close(): void }> {
  const server = http.createServer((req, res) => {
    const ok = mode === 'accepts-all' || (mode === 'checks' && req.headers['x-grant'] === 'valid');
    res.writeHead(ok ? 200 : 403).end(ok ? 'the record' : 'refused');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/**
 * One attack (a forged grant) beside its control (the valid grant), against `url`. The attack is naive on purpose:
 * anything but a 200, a connection error included, counts as its refusal; only the control can tell.
 */
function group(url: string): AttackGroup {
  const status = (grant: string) =>
    fetch(url, { headers: { 'x-grant': grant } }).then(
      (r) => r.status,
      () => 0,
    );
  return {
    name: 'toy',
    setup: () =>
      Promise.resolve({
        attacks: [
          {
            name: 'a forged grant',
            expected: '403',
            control: {
              name: 'the valid grant',
              expected: '200',
              run: async () => {
                const s = await status('valid');
                return { observed: String(s), accepted: s === 200 };
              },
            },
            run: async () => {
              const s = await status('forged');
              return { observed: String(s), refused: s !== 200, effects: s === 200 ? 1 : 0 };
            },
          },
        ],
        teardown: () => Promise.resolve(),
      }),
  };
}

test.each([
  ['checks', 'held', /1 held, 0 breached, 0 void/],
  ['accepts-all', 'BREACH', /0 held, 1 breached, 0 void/],
  ['refuses-all', 'VOID', /0 held, 0 breached, 1 void/],
] as const)('a target that %s: the row is %s', async (mode, expected, summary) => {
  const t = await target(mode);
  try {
    const rows = await runAttackGroups([group(t.url)]);
    expect(rows.map(verdict)).toEqual([expected]);
    expect(holds(rows[0]!)).toBe(expected === 'held');
    const table = attackTable(rows);
    expect(table).toMatch(summary);
    // The control is printed beside the attack.
    expect(table).toContain('the valid grant');
  } finally {
    t.close();
  }
});

test('a dead port: the control fails, so the refusal proves nothing (VOID)', async () => {
  const rows = await runAttackGroups([group(`http://127.0.0.1:${await getFreePort()}`)]);
  expect(rows.map(verdict)).toEqual(['VOID']);
});

describe('the admin listener from a non-loopback address', () => {
  const run = async (adminUrl: string, bound = '127.0.0.1') =>
    runAttackGroups([
      {
        name: 'admin',
        setup: () =>
          Promise.resolve({
            attacks: [
              adminOutsideLoopback(
                adminUrl,
                () => bound,
                () => Promise.resolve(0),
              ),
            ],
            teardown: () => Promise.resolve(),
          }),
      },
    ]);

  test('on a dead port it is VOID (ECONNREFUSED there proves nothing)', async () => {
    const rows = await run(`http://127.0.0.1:${await getFreePort()}`);
    expect(rows.map(verdict)).toEqual(['VOID']);
  });

  test('on a live listener bound to loopback only it holds', async () => {
    const t = await target('checks');
    try {
      const rows = await run(t.url);
      expect(rows.map(verdict)).toEqual(['held']);
    } finally {
      t.close();
    }
  });

  test('on a listener bound to all interfaces it is a breach', async () => {
    const server = http.createServer((_req, res) => res.end('admin'));
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    try {
      // Probed at this machine's other address, or (with none) judged by the bind address the process reports.
      const rows = await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, '0.0.0.0');
      expect(rows.map(verdict)).toEqual(['BREACH']);
    } finally {
      server.close();
    }
  });
});
