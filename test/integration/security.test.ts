/**
 * The attack suite (`npm run security`) as part of `npm test`: every attack meets its typed refusal and causes no
 * effect. The suite also shows it can fail: against a wallet started without its verification key, the same
 * attacks are breaches.
 */
import { holds } from '../../security/attack';
import { ATTACK_GROUPS } from '../../security/attacks';
import { capabilityAttacksOn } from '../../security/attacks/capabilities';
import { attackTable, runAttackGroups } from '../../security/run';

jest.setTimeout(600_000);

test('every attack is refused as expected and causes no effect', async () => {
  const rows = await runAttackGroups(ATTACK_GROUPS);
  const breaches = rows.filter((r) => !holds(r));
  if (breaches.length > 0) console.error(attackTable(rows));
  expect(rows.length).toBeGreaterThan(0);
  expect(breaches).toEqual([]);
});

test('the suite can fail: a wallet that verifies nothing turns the capability attacks into breaches', async () => {
  const rows = await runAttackGroups([capabilityAttacksOn({ verifying: false })]);
  expect(rows.length).toBeGreaterThan(0);
  expect(rows.filter((r) => !holds(r)).length).toBe(rows.length);
  expect(rows.reduce((n, r) => n + r.effects, 0)).toBeGreaterThan(0);
  expect(attackTable(rows)).toMatch(/0 held, \d+ breached; effects caused: [1-9]/);
});
