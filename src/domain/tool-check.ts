/**
 * A tool declaration's promises checked against its contract, before any run: a declaration the recovery table
 * could only follow by guessing is refused at the worker's start (`ToolDeclarationError`), never at a lost
 * response. Pure: the worker calls it over every tool it serves (src/downstream/transports.ts adds what only the
 * worker knows: implementations, secrets, base URLs).
 */
import type { AnyTool } from './tool';
import { promisesOf, transportOf } from './transport';

/** Thrown at the worker's start for tools it cannot serve safely; names every problem, leaks no secret. */
export class ToolDeclarationError extends Error {
  override readonly name = 'Tools.DeclarationInvalid';
  constructor(readonly problems: readonly string[]) {
    super(`the worker cannot serve these tools: ${problems.join('; ')}`);
  }
}

const positive = (ms: number | undefined): boolean => ms === undefined || (Number.isFinite(ms) && ms > 0);

/** What is wrong with one declaration (empty: nothing). */
export function declarationProblems(tool: AnyTool): string[] {
  const problems: string[] = [];
  const t = transportOf(tool);
  const p = promisesOf(tool);
  const say = (what: string) => problems.push(`${tool.name}: ${what}`);
  if (typeof tool.service !== 'string' || tool.service === '') say('names no service');
  if (t.kind === 'ledgerloop' && (typeof t.route !== 'string' || !t.route.startsWith('/')))
    say('names neither a route on the Ledgerloop contract nor a transport');
  if (t.kind === 'http') {
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(t.method))
      say(`an HTTP method ${String(t.method)} that changes nothing`);
    if (typeof t.path !== 'string' || !t.path.startsWith('/')) say('an HTTP path that does not start with /');
    if (t.lookup !== undefined && !t.lookup.path.startsWith('/')) say('a lookup path that does not start with /');
  }
  if (t.kind === 'function' && t.promises?.seals === true)
    say('declares that its function seals a missing key, but a function lookup cannot seal');
  if (tool.idempotency === 'idempotent_by_key' && p.keyRetentionMs === undefined)
    say('is idempotent_by_key but declares no key retention (how long the downstream keeps a key)');
  if (tool.idempotency === 'reconcilable_by_lookup' && p.lookup === undefined)
    say('is reconcilable_by_lookup but declares no lookup');
  const retention = p.keyRetentionMs === 'service' ? undefined : p.keyRetentionMs;
  if (!positive(retention)) say('a key retention that is not a positive number of milliseconds');
  if (!positive(p.maxInFlightMs)) say('a maximum in-flight time that is not a positive number of milliseconds');
  if (p.lookupLagMs !== undefined && !(Number.isFinite(p.lookupLagMs) && p.lookupLagMs >= 0))
    say('a lookup lag that is not a non-negative number of milliseconds');
  return problems;
}
