/**
 * The message size limits are the same on every Temporal server Ledgerloop runs on: the dev server's flags
 * (host/server/message-limits.ts) and the dynamic config file the cluster and compose load.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { dynamicConfigFlags, MESSAGE_LIMITS_DYNAMIC_CONFIG } from '../../host/server/message-limits';

const FILE = path.join(__dirname, '..', '..', 'deploy', 'temporal', 'dynamicconfig', 'ledgerloop.yaml');

/** The global (unconstrained) value of `key` in the dynamic config file, if it has one. */
function fileValue(text: string, key: string): string | undefined {
  const escaped = key.replace(/\./g, '\\.');
  const m = new RegExp(`^${escaped}:\\n\\s+- value: (\\S+)\\n\\s+constraints: \\{\\}`, 'm').exec(text);
  return m?.[1];
}

test('the dynamic config file states each message limit the dev server is given, with the same value', () => {
  const text = readFileSync(FILE, 'utf8');
  const keys = Object.keys(MESSAGE_LIMITS_DYNAMIC_CONFIG);
  expect(keys).toContain('history.maxInFlightUpdatePayloads');
  for (const key of keys)
    expect([key, fileValue(text, key)]).toEqual([key, String(MESSAGE_LIMITS_DYNAMIC_CONFIG[key])]);
  // The check can fail: a key the file does not state has no value.
  expect(fileValue(text, 'history.noSuchSetting')).toBeUndefined();
});

test('the dev server flags carry each value as JSON', () => {
  expect(dynamicConfigFlags({ 'a.b': 1, 'c.d': true })).toEqual([
    '--dynamic-config-value',
    'a.b=1',
    '--dynamic-config-value',
    'c.d=true',
  ]);
  expect(dynamicConfigFlags()).toContain('history.maxInFlightUpdatePayloads=262144');
});
