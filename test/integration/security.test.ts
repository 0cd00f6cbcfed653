/**
 * The attack suite (`npm run security`) as part of `npm test`: every attack meets its typed refusal, causes no
 * effect, and its control (the same request made as it should be) is accepted. The suite also shows it can fail,
 * against deliberately broken targets: a wallet that verifies nothing and services that serve every read turn the
 * attacks into breaches; a wallet that refuses every capability, the valid ones too, leaves each refusal VOID.
 */
import { holds, verdict } from '../../security/attack';
import { ATTACK_GROUPS } from '../../security/attacks';
import { capabilityAttacksOn } from '../../security/attacks/capabilities';
import { readAttacksOn } from '../../security/attacks/reads';
import { attackTable, runAttackGroups } from '../../security/run';

jest.setTimeout(900_000);

test('every attack is refused as expected, causes no effect, and its control is accepted', async () => {
  const rows = await runAttackGroups(ATTACK_GROUPS);
  const failing = rows.filter((r) => !holds(r));
  if (failing.length > 0) console.error(attackTable(rows));
  expect(rows.length).toBeGreaterThan(0);
  expect(failing).toEqual([]);
  // Every group has a control beside each of its attacks, and every control was accepted.
  expect(new Set(rows.map((r) => r.group))).toEqual(new Set(ATTACK_GROUPS.map((g) => g.name)));
  expect(rows.every((r) => r.control !== '' && r.controlAccepted)).toBe(true);
});

test('the suite can fail: a wallet that verifies nothing turns the capability attacks into breaches', async () => {
  const rows = await runAttackGroups([capabilityAttacksOn({ target: 'unverified' })]);
  expect(rows.length).toBeGreaterThan(0);
  expect(rows.filter((r) => verdict(r) === 'BREACH').length).toBe(rows.length);
  expect(rows.reduce((n, r) => n + r.effects, 0)).toBeGreaterThan(0);
  expect(attackTable(rows)).toMatch(/0 held, \d+ breached, 0 void \(control not accepted\); effects caused: [1-9]/);
});

test('the suite can fail: a wallet that refuses every capability, the valid ones too, holds nothing', async () => {
  const rows = await runAttackGroups([capabilityAttacksOn({ target: 'distrusting' })]);
  expect(rows.length).toBeGreaterThan(0);
  // Every attack is "refused", and every control with it: no refusal proves anything.
  expect(rows.every((r) => r.refused && !r.controlAccepted && verdict(r) === 'VOID')).toBe(true);
  expect(attackTable(rows)).toMatch(new RegExp(`0 held, 0 breached, ${rows.length} void`));
});

test('the suite can fail: services that serve every read leak the records the read attacks ask for', async () => {
  const rows = await runAttackGroups([readAttacksOn({ target: 'unverified' })]);
  const breaches = rows.filter((r) => verdict(r) === 'BREACH');
  // Every read is served; only the admin path on the public listener stays unrouted.
  expect(breaches.length).toBe(rows.length - 1);
  expect(breaches.every((r) => r.effects === 1)).toBe(true);
});
