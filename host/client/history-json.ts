/**
 * A history to and from Temporal's JSON format, as `ledgerloop export` writes and `ledgerloop replay` reads it.
 *
 * `@temporalio/common`'s `historyToJSON`/`historyFromJSON` call protobufjs's JSON extension from
 * `@temporalio/common`'s own copy of protobufjs, on message types built by `@temporalio/proto`'s copy. When npm
 * installs the two packages with separate copies (it does in a fresh project that depends on ledgerloop: the
 * OpenTelemetry exporter and grpc's proto-loader hoist protobufjs 7, so each 8.x copy nests under its package),
 * every call fails with "type must be a Type". Here the JSON extension always comes from the copy that built the
 * types; when both packages share one copy, the SDK's own functions run (they also read older JSON exports).
 */
import path from 'node:path';
import {
  historyFromJSON as sdkHistoryFromJSON,
  historyToJSON as sdkHistoryToJSON,
} from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';

export interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: unknown): unknown;
}

const dirOf = (pkg: string): string => path.dirname(require.resolve(`${pkg}/package.json`));
const protojsonFrom = (dir: string): string => require.resolve('protobufjs/ext/protojson', { paths: [dir] });

/** History JSON through one protobufjs JSON extension and the History type its copy built. */
export interface HistoryJson {
  toJSON(history: temporal.api.history.v1.IHistory): string;
  fromJSON(json: unknown): temporal.api.history.v1.IHistory;
}

/** History JSON through `protojson` (protobufjs/ext/protojson) on `historyType`, both of one protobufjs copy. */
export function historyJsonWith(protojson: ProtoJson, historyType: unknown): HistoryJson {
  return {
    toJSON: (history) =>
      JSON.stringify(protojson.toJson(historyType, temporal.api.history.v1.History.fromObject(history)), null, 2),
    fromJSON(json) {
      const loaded = protojson.fromJson(historyType, json, { ignoreUnknownFields: true });
      if (loaded === null || loaded === undefined) throw new TypeError('Invalid history');
      return loaded as temporal.api.history.v1.IHistory;
    },
  };
}

let chosen: HistoryJson | undefined;

/** The SDK's functions when its packages share one protobufjs; else the copy that built `@temporalio/proto`'s types. */
function historyJson(): HistoryJson {
  if (chosen !== undefined) return chosen;
  const protoDir = dirOf('@temporalio/proto');
  const own = protojsonFrom(protoDir);
  if (own === protojsonFrom(dirOf('@temporalio/common')))
    return (chosen = { toJSON: sdkHistoryToJSON, fromJSON: sdkHistoryFromJSON });
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the copy named by its resolved path
  const protojson = require(own) as ProtoJson;
  return (chosen = historyJsonWith(protojson, protoHistoryType()));
}

/** `@temporalio/proto`'s History type, looked up on its (patched) root. */
export function protoHistoryType(): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { patchProtobufRoot } = require('@temporalio/proto/lib/patch-protobuf-root') as {
    patchProtobufRoot<T>(root: T): T & { lookupType(name: string): unknown };
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return patchProtobufRoot(require('@temporalio/proto') as object).lookupType('temporal.api.history.v1.History');
}

/** The history as Temporal's JSON (what `temporal workflow show --output json` writes), pretty-printed. */
export function historyToJSON(history: temporal.api.history.v1.IHistory): string {
  return historyJson().toJSON(history);
}

/** A history from Temporal's JSON. */
export function historyFromJSON(json: unknown): temporal.api.history.v1.IHistory {
  return historyJson().fromJSON(json);
}
