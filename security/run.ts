/**
 * Runs attack groups one after another and collects one row per attack, each beside its control; a group that
 * fails to start is a row too.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { holds, verdict, type AttackGroup, type AttackRow, type Control, type ControlOutcome } from './attack';

// A hang fails its row instead of the suite; loaded CI machines need room (a run waiting for approval: up to 50 s).
const ATTACK_TIMEOUT_MS = 90_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]);
}

/** Runs a control once, whatever it throws: a control that cannot run was not accepted. */
async function runControl(c: Control): Promise<ControlOutcome> {
  try {
    return await withTimeout(c.run(), ATTACK_TIMEOUT_MS, `control ${c.name}`);
  } catch (err) {
    return { observed: `the control itself failed: ${(err as Error).message}`, accepted: false };
  }
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
        control: '(none)',
        controlObserved: '',
        controlAccepted: false,
      });
      continue;
    }
    const controls = new Map<Control, Promise<ControlOutcome>>();
    try {
      for (const attack of started.attacks) {
        let ran = controls.get(attack.control);
        if (ran === undefined) {
          ran = runControl(attack.control);
          controls.set(attack.control, ran);
          const c = await ran;
          log(
            `security: ${c.accepted ? 'control' : 'CONTROL FAILED'}  ${group.name} · ${attack.control.name}: ${c.observed}`,
          );
        }
        const c = await ran;
        const t0 = Date.now();
        let outcome;
        try {
          outcome = await withTimeout(attack.run(), ATTACK_TIMEOUT_MS, attack.name);
        } catch (err) {
          outcome = { observed: `the attack itself failed: ${(err as Error).message}`, refused: false, effects: 0 };
        }
        const row: AttackRow = {
          group: group.name,
          attack: attack.name,
          expected: attack.expected,
          ...outcome,
          ms: Date.now() - t0,
          control: attack.control.name,
          controlObserved: c.observed,
          controlAccepted: c.accepted,
        };
        rows.push(row);
        log(
          `security: ${verdict(row)}  ${group.name} · ${attack.name}: ${row.observed} (effects ${row.effects}; control: ${c.accepted ? 'accepted' : 'NOT accepted'})`,
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

/**
 * The table `npm run security` prints: one row per attack, its control beside it, then the verdict computed from
 * the rows.
 */
export function attackTable(rows: readonly AttackRow[]): string {
  const cells = rows.map((r) => [
    verdict(r),
    `${r.group} · ${r.attack}`,
    r.expected,
    r.observed,
    String(r.effects),
    r.control,
    `${r.controlAccepted ? 'accepted' : 'NOT accepted'}: ${r.controlObserved}`,
  ]);
  const head = ['verdict', 'attack', 'expected refusal', 'observed', 'effects', 'control', 'control observed'];
  const widths = head.map((h, i) => Math.min(60, Math.max(h.length, ...cells.map((c) => c[i]!.length))));
  const line = (c: readonly string[]) =>
    c.map((x, i) => (x.length > widths[i]! ? `${x.slice(0, widths[i]! - 1)}…` : x.padEnd(widths[i]!))).join(' | ');
  const breaches = rows.filter((r) => verdict(r) === 'BREACH').length;
  const voids = rows.filter((r) => verdict(r) === 'VOID').length;
  const held = rows.filter(holds).length;
  const effects = rows.reduce((n, r) => n + r.effects, 0);
  return [
    line(head),
    widths.map((w) => '-'.repeat(w)).join('-|-'),
    ...cells.map(line),
    '',
    `${held} held, ${breaches} breached, ${voids} void (control not accepted); effects caused: ${effects}`,
  ].join('\n');
}
