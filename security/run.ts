/** Runs attack groups one after another and collects one row per attack; a group that fails to start is a row too. */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { holds, type AttackGroup, type AttackRow } from './attack';

const ATTACK_TIMEOUT_MS = 60_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]);
}

export async function runAttackGroups(
  groups: readonly AttackGroup[],
  log: (line: string) => void = () => {},
): Promise<AttackRow[]> {
  const rows: AttackRow[] = [];
  for (const group of groups) {
    const dir = mkdtempSync(path.join(os.tmpdir(), `ledgerloop-security-${group.name}-`));
    log(`security: ${group.name}: starting`);
    let started: Awaited<ReturnType<AttackGroup['setup']>>;
    try {
      started = await withTimeout(group.setup({ dir, log }), 180_000, `${group.name} setup`);
    } catch (err) {
      rows.push({
        group: group.name,
        attack: '(setup)',
        expected: 'the group starts',
        observed: `setup failed: ${(err as Error).message}`,
        refused: false,
        effects: 0,
        ms: 0,
      });
      continue;
    }
    try {
      for (const attack of started.attacks) {
        const t0 = Date.now();
        let row: AttackRow;
        try {
          const o = await withTimeout(attack.run(), ATTACK_TIMEOUT_MS, attack.name);
          row = { group: group.name, attack: attack.name, expected: attack.expected, ...o, ms: Date.now() - t0 };
        } catch (err) {
          row = {
            group: group.name,
            attack: attack.name,
            expected: attack.expected,
            observed: `the attack itself failed: ${(err as Error).message}`,
            refused: false,
            effects: 0,
            ms: Date.now() - t0,
          };
        }
        rows.push(row);
        log(
          `security: ${holds(row) ? 'held' : 'BREACH'}  ${group.name} · ${attack.name}: ${row.observed} (effects ${row.effects})`,
        );
      }
    } finally {
      await started
        .teardown()
        .catch((err: unknown) => log(`security: ${group.name}: teardown failed: ${(err as Error).message}`));
    }
  }
  return rows;
}

/** The table `npm run security` prints: one row per attack, then the verdict computed from the rows. */
export function attackTable(rows: readonly AttackRow[]): string {
  const cells = rows.map((r) => [
    holds(r) ? 'held' : 'BREACH',
    `${r.group} · ${r.attack}`,
    r.expected,
    r.observed,
    String(r.effects),
  ]);
  const head = ['verdict', 'attack', 'expected refusal', 'observed', 'effects'];
  const widths = head.map((h, i) => Math.min(70, Math.max(h.length, ...cells.map((c) => c[i]!.length))));
  const line = (c: readonly string[]) =>
    c.map((x, i) => (x.length > widths[i]! ? `${x.slice(0, widths[i]! - 1)}…` : x.padEnd(widths[i]!))).join(' | ');
  const breaches = rows.filter((r) => !holds(r)).length;
  const effects = rows.reduce((n, r) => n + r.effects, 0);
  return [
    line(head),
    widths.map((w) => '-'.repeat(w)).join('-|-'),
    ...cells.map(line),
    '',
    `${rows.length - breaches} held, ${breaches} breached; effects caused: ${effects}`,
  ].join('\n');
}
