/**
 * What `@noble/hashes/sha2` and `@noble/hashes/utils` are inside the workflow bundle (the bundler aliases both
 * here: host/worker/bundle.ts), for the same reason as `workflow-zod.ts`: every workflow run evaluates the modules
 * it imports afresh, and evaluating noble's SHA-2 family (its round constants, its 64-bit helpers) cost about a
 * millisecond per run. The first run of a worker loads them; later runs take the same functions.
 *
 * Safe to share: the functions are pure. SHA-256 keeps a module-level scratch buffer, which a hash fills and
 * reads within one synchronous call, and a worker thread runs one workflow activation at a time.
 * Outside the bundle (activities, tests) the packages are imported directly and this module is not used.
 */
import type { sha256 as Sha256 } from '@noble/hashes/sha2';
import type { bytesToHex as BytesToHex, utf8ToBytes as Utf8ToBytes } from '@noble/hashes/utils';
import { sharedValue } from '../../src/tools/shared-declarations';

interface Hashes {
  readonly sha256: typeof Sha256;
  readonly bytesToHex: typeof BytesToHex;
  readonly utf8ToBytes: typeof Utf8ToBytes;
}

const hashes = sharedValue<Hashes>('@noble/hashes', () => {
  // The packages' `.js` entries, which the bundler's exact aliases do not match: loaded by the first run only.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { sha256 } = require('@noble/hashes/sha2.js') as { sha256: typeof Sha256 };
  const { bytesToHex, utf8ToBytes } = require('@noble/hashes/utils.js') as Omit<Hashes, 'sha256'>;
  /* eslint-enable @typescript-eslint/no-require-imports */
  return { sha256, bytesToHex, utf8ToBytes };
});

export const { sha256, bytesToHex, utf8ToBytes } = hashes;
