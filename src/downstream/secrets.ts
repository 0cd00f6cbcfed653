/**
 * Worker secrets: the values a function tool or an HTTP API's credential needs, read from the worker's environment
 * (or its `secrets` option) at start, never from workflow input and never written to history or a log. A reason
 * that may quote one (an SDK's error text) passes `redact` first.
 */

/** Where a worker reads secrets from: its environment by default. */
export type SecretSource = Readonly<Record<string, string | undefined>>;

/** The values of `names` in `source`; the names that are missing or empty. */
export function readSecrets(
  names: readonly string[],
  source: SecretSource,
): { readonly values: Readonly<Record<string, string>>; readonly missing: readonly string[] } {
  const values: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of names) {
    const value = source[name];
    if (typeof value === 'string' && value !== '') values[name] = value;
    else missing.push(name);
  }
  return { values, missing };
}

/** `text` with every secret value (of at least 4 characters) replaced by `[secret]`. */
export function redact(text: string, secrets: Readonly<Record<string, string>>): string {
  let out = text;
  for (const value of Object.values(secrets)) if (value.length >= 4) out = out.split(value).join('[secret]');
  return out;
}
