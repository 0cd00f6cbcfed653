/**
 * History JSON when the SDK's packages carry separate protobufjs copies (a fresh install of ledgerloop: see
 * host/client/history-json.ts). The SDK's own functions fail there; the path through the copy that built the types
 * writes and reads the same JSON the SDK does when the copies are shared.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON as sdkFromJSON, historyToJSON as sdkToJSON } from '@temporalio/common/lib/proto-utils';
import { historyJsonWith, protoHistoryType, type ProtoJson } from '../../host/client/history-json';

const dir = path.join(__dirname, '..', 'replay', 'histories', 'baseline');
const file = readdirSync(dir).find((f) => f.endsWith('.json'))!;
const json = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as unknown;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const protojson = require('protobufjs/ext/protojson') as ProtoJson;

test('through the types’ own protobufjs copy, a checked-in history reads and writes as the SDK reads and writes it', () => {
  const ours = historyJsonWith(protojson, protoHistoryType());
  const history = ours.fromJSON(json);
  expect(history.events?.length).toBeGreaterThan(5);
  expect(ours.toJSON(history)).toBe(sdkToJSON(sdkFromJSON(json)));
  expect(ours.toJSON(ours.fromJSON(JSON.parse(ours.toJSON(history))))).toBe(ours.toJSON(history));
});

test('a JSON extension from another protobufjs copy fails as the SDK does in a fresh install; the types’ own does not', () => {
  // A second copy of protobufjs, evaluated apart from the first: what npm nests under @temporalio/common.
  let other: ProtoJson | undefined;
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    other = require('protobufjs/ext/protojson') as ProtoJson;
  });
  if (other === undefined) throw new Error('no second copy');
  expect(other).not.toBe(protojson);
  const history = historyJsonWith(protojson, protoHistoryType()).fromJSON(json);
  expect(() => historyJsonWith(other!, protoHistoryType()).toJSON(history)).toThrow(/type must be a Type/);
  expect(() => historyJsonWith(protojson, protoHistoryType()).toJSON(history)).not.toThrow();
});
