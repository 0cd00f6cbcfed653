/**
 * Where the current policy comes from. The file store re-reads its JSON file when it changes, so an operator
 * can publish a new version while runs are waiting; a file that does not parse is a typed error, never a
 * silent fallback.
 */
import { readFileSync, statSync } from 'node:fs';
import { hashCanonical, type Json } from '../domain/canonical';
import { DEFAULT_POLICY, Policy } from '../domain/policy-format';
import { configValue } from '../config';

export interface PolicyStore {
  current(): Policy;
}

export class PolicyFileError extends Error {
  override readonly name = 'Policy.Invalid';
}

export class StaticPolicyStore implements PolicyStore {
  constructor(private readonly policy: Policy = DEFAULT_POLICY) {}
  current(): Policy {
    return this.policy;
  }
}

export class FilePolicyStore implements PolicyStore {
  private cached?: { mtimeMs: number; size: number; policy: Policy };

  constructor(private readonly file: string) {}

  current(): Policy {
    const st = statSync(this.file);
    if (this.cached && this.cached.mtimeMs === st.mtimeMs && this.cached.size === st.size) return this.cached.policy;
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.file, 'utf8'));
    } catch (err) {
      throw new PolicyFileError(`${this.file}: not JSON: ${(err as Error).message}`);
    }
    const parsed = Policy.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new PolicyFileError(`${this.file}: ${issues}`);
    }
    this.cached = { mtimeMs: st.mtimeMs, size: st.size, policy: parsed.data };
    return parsed.data;
  }
}

export function policyStoreFromEnv(env: NodeJS.ProcessEnv = process.env): PolicyStore {
  const file = configValue('LEDGERLOOP_POLICY_FILE', env);
  return file ? new FilePolicyStore(file) : new StaticPolicyStore();
}

const digests = new WeakMap<Policy, string>();

/**
 * The canonical digest of a policy document: what a decision made from a held policy is bound to. Two files
 * with the same version but other rules have other digests, so an edit without a version bump is still seen.
 */
export function policyDigest(policy: Policy): string {
  let d = digests.get(policy);
  if (d === undefined) {
    d = hashCanonical(policy as unknown as Json);
    digests.set(policy, d);
  }
  return d;
}
