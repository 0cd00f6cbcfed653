/** The CLI's first-hour helpers: the demo key found without configuration, and errors that say what to set. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NoWorkerError, isNoPollerError, withCodecHint } from '../../cli/errors';
import { codecFromEnv, generateCodecKeys } from '../../src/codec/data-converter';
import { adoptLocalCodecKeys, cliDataConverter } from '../../src/codec/demo-key';
import { encryptsPayloads } from '../../host/client/token-transport';
import { guardCommandToken } from '../../cli/commands/call-command';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'll-cli-keys-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('cliDataConverter', () => {
  const demo = path.join(dir, 'codec-demo-keys');
  fs.writeFileSync(demo, `${generateCodecKeys('demo').keys}\n`);

  it('with the demo key and no keys configured, what the CLI sends is encrypted as the demo’s workers write', async () => {
    const notes: string[] = [];
    const dc = cliDataConverter((l) => notes.push(l), {}, demo);
    const codec = dc!.payloadCodecs![0]!;
    expect(notes).toHaveLength(0); // said once it is used
    const plain = {
      metadata: { encoding: new TextEncoder().encode('json/plain') },
      data: new TextEncoder().encode('{"identityToken":"eyJ..."}'),
    };
    // A start input leaves encrypted: no token in clear in the history.
    const [sent] = await codec.encode([plain]);
    expect(new TextDecoder().decode(sent!.metadata!['encoding'])).toBe('binary/encrypted');
    expect(Buffer.from(sent!.data!).toString('latin1')).not.toContain('identityToken');
    expect(await encryptsPayloads(dc)).toBe(true);
    // The demo's workers, which hold the same key, read it; and what they wrote is read back here.
    const workers = codecFromEnv({ LEDGERLOOP_CODEC_KEYS_FILE: demo })!;
    expect(await workers.decode([sent!])).toEqual([plain]);
    expect(await codec.decode(await workers.encode([plain]))).toEqual([plain]);
    expect(notes).toEqual([expect.stringMatching(/encrypted and read with the demo key/)]);
  });

  it('a worker started by hand beside the demo adopts the same key; configured keys win', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(adoptLocalCodecKeys(env, demo)).toEqual({ kind: 'demo', file: demo });
    expect(env['LEDGERLOOP_CODEC_KEYS_FILE']).toBe(demo);
    const configured: NodeJS.ProcessEnv = { LEDGERLOOP_CODEC_KEYS: generateCodecKeys('k1').keys };
    expect(adoptLocalCodecKeys(configured, demo)).toEqual({ kind: 'configured' });
    expect(configured['LEDGERLOOP_CODEC_KEYS_FILE']).toBeUndefined();
  });

  it('prefers configured keys, silently', () => {
    const notes: string[] = [];
    const dc = cliDataConverter((l) => notes.push(l), { LEDGERLOOP_CODEC_KEYS: generateCodecKeys('k1').keys }, demo);
    expect(dc?.payloadCodecs).toHaveLength(1);
    expect(notes).toEqual([]);
  });

  it('has none when neither exists (plain payloads); under LEDGERLOOP_CODEC_STRICT that is refused', () => {
    expect(cliDataConverter(() => undefined, {}, path.join(dir, 'absent'))).toBeUndefined();
    expect(() => cliDataConverter(() => undefined, { LEDGERLOOP_CODEC_STRICT: '1' }, path.join(dir, 'absent'))).toThrow(
      /LEDGERLOOP_CODEC_STRICT=1 needs keys/,
    );
  });
});

describe('a token where no key can be found', () => {
  const stream = () => {
    const lines: string[] = [];
    return { lines, err: { write: (t: string) => lines.push(t) } };
  };

  it('is refused, nothing sent, unless --allow-token-in-clear says so', async () => {
    const refused = stream();
    await expect(guardCommandToken(undefined, 'your identity token', refused.err)).rejects.toThrow(
      /in clear text.*refused \(no codec keys here.*--allow-token-in-clear sends it anyway\), nothing sent/,
    );
    // The explicit flag sends it, with a warning.
    const allowed = stream();
    await expect(guardCommandToken(undefined, 'your identity token', allowed.err, true)).resolves.toBeUndefined();
    expect(allowed.lines.join('')).toMatch(/^warning: your identity token would be written .* in clear text/);
  });

  it('with keys, the token is sent and nothing is said', async () => {
    const quiet = stream();
    const dc = cliDataConverter(() => undefined, { LEDGERLOOP_CODEC_KEYS: generateCodecKeys('k').keys });
    await expect(guardCommandToken(dc, 'your identity token', quiet.err)).resolves.toBeUndefined();
    expect(quiet.lines).toEqual([]);
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
