/**
 * `npm run security`: every attack of the suite against real processes, a table of what each met, exit 1 on any
 * breach (an attack that was not refused as expected, or that caused an effect).
 *
 *   node -r tsx/cjs security/main.ts [--json] [group ...]
 */
import { ATTACK_GROUPS } from './attacks';
import { attackTable, runAttackGroups } from './run';
import { holds } from './attack';

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const names = args.filter((a) => !a.startsWith('--'));
  const unknown = names.filter((n) => !ATTACK_GROUPS.some((g) => g.name === n));
  if (unknown.length > 0) {
    process.stderr.write(
      `security: unknown group(s) ${unknown.join(', ')}; known: ${ATTACK_GROUPS.map((g) => g.name).join(', ')}\n`,
    );
    return 2;
  }
  const groups = names.length > 0 ? ATTACK_GROUPS.filter((g) => names.includes(g.name)) : ATTACK_GROUPS;
  const rows = await runAttackGroups(groups, (l) => process.stderr.write(`${l}\n`));
  process.stdout.write(json ? `${JSON.stringify(rows, null, 2)}\n` : `${attackTable(rows)}\n`);
  return rows.length > 0 && rows.every(holds) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`security: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
