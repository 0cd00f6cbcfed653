/**
 * What a new user needs for a first run of their own, on a stack that stays up (`npm start`, `npm run cluster`):
 * acme's `acct_1` seeded, session tokens of the stack's development issuer for a principal, an approver and an
 * operator (the CLI trades them for a token per act with the issuer's key: src/identity/act-token.ts), and the
 * commands to try next, printed exactly as they work against that stack.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Stack } from '../stack';

export interface FirstRun {
  /** Where the tokens are, relative to the working directory when it is inside it. */
  readonly tokensDir: string;
  /** The development issuer's key file (LEDGERLOOP_DEV_ISSUER_KEY), relative as `tokensDir`. */
  readonly devIssuerKey: string;
}

const shown = (p: string): string => {
  const rel = path.relative(process.cwd(), p);
  return rel !== '' && !rel.startsWith('..') ? rel : p;
};

/**
 * Seeds acme's acct_1 (10,000.00 EUR) and writes session tokens alice.jwt (starter), carol.jwt (approver), bob.jwt
 * (operator), mode 0600: each says who you are; the workflow accepts none of them for an act (the CLI mints one per
 * act). The roles are what a frontend that authorizes (the cluster's) lets each do; the run checks its own.
 */
export async function prepareFirstRun(stack: Pick<Stack, 'walletClient' | 'identity'>, dir: string): Promise<FirstRun> {
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' });
  const tokens = path.join(dir, 'tokens');
  fs.mkdirSync(tokens, { recursive: true, mode: 0o700 });
  const ttlSec = 12 * 3600;
  const who = [
    ['alice.jwt', 'user:alice', ['starter']],
    ['carol.jwt', 'manager:carol', ['approver']],
    ['bob.jwt', 'ops:bob', ['operator']],
  ] as const;
  for (const [file, principal, roles] of who) {
    fs.writeFileSync(path.join(tokens, file), await stack.identity.issue(principal, 'acme', roles, { ttlSec }), {
      mode: 0o600,
    });
  }
  return { tokensDir: shown(tokens), devIssuerKey: shown(stack.identity.keyPath) };
}

export interface NextCommandsOptions {
  /** `VAR=value ` prefixes every command needs against this stack (TEMPORAL_ADDRESS, codec keys), or ''. */
  readonly env: string;
  readonly tokensDir: string;
  /**
   * The development issuer's key file (prepareFirstRun): the commands that act name it (LEDGERLOOP_DEV_ISSUER_KEY),
   * so the CLI mints the token for each act from the session tokens.
   */
  readonly devIssuerKey?: string;
  /** The Web UI's base URL, when there is one. */
  readonly uiUrl?: string;
  /** A run of the stack's own to look at (the demo's), if any. */
  readonly exampleRun?: string;
}

/** The next commands, one per line, each runnable as printed while the stack is up. */
export function nextCommands(o: NextCommandsOptions): string[] {
  const cli = `${o.env}npx ledgerloop`;
  // The commands that act present a session token: the CLI mints the token for the one act with the issuer's key.
  const act = o.devIssuerKey ? `${o.env}LEDGERLOOP_DEV_ISSUER_KEY=${o.devIssuerKey} npx ledgerloop` : cli;
  const debit = '--var account=acct_1 --var amount.currency=EUR';
  const run = o.exampleRun ?? '<run id>';
  return [
    'Start a run (a worker polls task queue ledgerloop) and wait for its result:',
    `  ${act} start --scenario wallet-debit ${debit} --var amount.minor=1250 --token @${o.tokensDir}/alice.jwt --wait`,
    `Show a run's ledger${o.exampleRun ? ' (this one is the demo\u2019s)' : ''}, and open it in the Web UI:`,
    `  ${cli} show ${run}`,
    ...(o.uiUrl ? [`  ${o.uiUrl}/namespaces/default/workflows/${run}`] : []),
    'A debit over 500.00 EUR waits for an approver; find its call id with `show`, then approve it as carol:',
    `  ${act} start --scenario wallet-debit ${debit} --var amount.minor=60000 --token @${o.tokensDir}/alice.jwt`,
    `  ${cli} list --pending-approvals`,
    `  ${act} approve <run id> <call id> --token @${o.tokensDir}/carol.jwt`,
    'Export a run\u2019s history and replay it against the workflow code:',
    `  ${cli} export ${run} --out ${run}.json && ${cli} replay ${run}.json`,
  ];
}
