/**
 * Run budgets beyond turns and tool calls: tokens and spend from the provider's usage figures and a price
 * table, and no-progress detection (the model proposing the same calls again). Pure, workflow-safe.
 */
import type { PlanUsage, ProposedCall } from '../src/domain/activity-contracts';
import { hashCanonical } from '../src/domain/canonical';
import { MAX_JSON_DEPTH, textDepth } from '../src/domain/json-depth';
import type { Projection } from '../src/domain/reducer';
import type { Budgets, ModelPrice } from '../src/domain/run';

/** Price one model call: a model name matches its own entry or the longest entry it starts with. */
export function costMicros(usage: PlanUsage, prices: Readonly<Record<string, ModelPrice>>): number {
  const key = Object.keys(prices)
    .filter((k) => usage.model === k || usage.model.startsWith(`${k}-`))
    .sort((a, b) => b.length - a.length)[0];
  const price = key === undefined ? undefined : prices[key];
  if (price === undefined) return 0;
  return Math.ceil(
    (usage.promptTokens * price.promptPerMTokMicros + usage.completionTokens * price.completionPerMTokMicros) /
      1_000_000,
  );
}

/** Which spend budget the run has used up, or null. */
export function spentBudget(p: Projection, b: Budgets): string | null {
  if (b.maxTokens !== undefined && p.tokens > b.maxTokens) return `tokens: ${p.tokens} used of ${b.maxTokens}`;
  if (b.maxCostMicros !== undefined && p.costMicros > b.maxCostMicros)
    return `cost: ${p.costMicros} micros used of ${b.maxCostMicros}`;
  return null;
}

/** A turn's proposals as a set (order and provider ids ignored): equal signatures mean the same proposal. */
export function proposalSignature(proposals: readonly ProposedCall[]): string {
  const items = proposals.map((p) => {
    let args: unknown = p.argumentsJson;
    try {
      // Too deep to canonicalize under the one level `{ name, args }` adds: compared as text, like malformed
      // arguments (validate refuses both). Arguments within the limit hash as they always did.
      if (textDepth(p.argumentsJson) < MAX_JSON_DEPTH) args = JSON.parse(p.argumentsJson);
    } catch {
      /* malformed arguments compare as text */
    }
    return hashCanonical({ name: p.name, args });
  });
  return hashCanonical(items.sort());
}
