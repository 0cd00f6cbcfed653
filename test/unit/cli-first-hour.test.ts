/** The CLI's first-hour helpers: the demo key found without configuration, and errors that say what to set. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NoWorkerError, isNoPollerError, withCodecHint } from '../../cli/errors';
import { codecFromEnv, generateCodecKeys } from '../../src/codec/data-converter';
import { cliDataConverter } from '../../src/codec/demo-key';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'll-cli-keys-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('cliDataConverter', () => {
  const demo = path.join(dir, 'codec-demo-keys');
  fs.writeFileSync(demo, `${generateCodecKeys('demo').keys}\n`);

  it('reads with the demo key when no keys are configured, says so, and sends plaintext', async () => {
    const notes: string[] = [];
    const dc = cliDataConverter((l) => notes.push(l), {}, demo);
    const codec = dc!.payloadCodecs![0]!;
    expect(notes).toHaveLength(0); // said only when an encrypted payload is read
    const plain = {
      metadata: { encoding: new TextEncoder().encode('json/plain') },
      data: new TextEncoder().encode('{"a":1}'),
    };
    // What the CLI sends is left as it is: a worker without keys can read it.
    expect(await codec.encode([plain])).toEqual([plain]);
    // What the demo's workers wrote with the demo key is read back.
    const encrypted = await codecFromEnv({ LEDGERLOOP_CODEC_KEYS_FILE: demo })!.encode([plain]);
    expect(new TextDecoder().decode(encrypted[0]!.metadata!['encoding'])).toBe('binary/encrypted');
    expect(await codec.decode(encrypted)).toEqual([plain]);
    await codec.decode(encrypted);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/demo key/);
  });

  it('prefers configured keys, silently', () => {
    const notes: string[] = [];
    const dc = cliDataConverter((l) => notes.push(l), { LEDGERLOOP_CODEC_KEYS: generateCodecKeys('k1').keys }, demo);
    expect(dc?.payloadCodecs).toHaveLength(1);
    expect(notes).toEqual([]);
  });

  it('has none when neither exists (plain payloads)', () => {
    expect(cliDataConverter(() => undefined, {}, path.join(dir, 'absent'))).toBeUndefined();
  });
});

describe('errors that say what to do', () => {
  it('an undecodable encrypted payload names the variables and the demo key file', () => {
    const m = withCodecHint('Unknown encoding: binary/encrypted');
    expect(m).toContain('LEDGERLOOP_CODEC_KEYS_FILE');
    expect(m).toContain('.data/codec-demo-keys');
    expect(withCodecHint('something else')).toBe('something else');
  });

  it('the server saying no poller becomes a NoWorkerError naming the queue', () => {
    expect(isNoPollerError(new Error('9 FAILED_PRECONDITION: no poller seen for task queue recently'))).toBe(true);
    expect(isNoPollerError(new Error('5 NOT_FOUND: workflow not found'))).toBe(false);
    const e = new NoWorkerError('ledger query', 'run-1', undefined, 'ledgerloop');
    expect(e.message).toContain('no worker polls task queue ledgerloop');
    expect(e.message).toContain('npm start');
  });
});
