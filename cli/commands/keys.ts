/**
 * `ledgerloop keys`: a project's development keys (host/project/keys.ts), in the folder the project config names
 * (`keys.dir`, default `.ledgerloop/keys`) or `--dir`:
 *
 *   ledgerloop keys                       create what is missing (signing key, key set, dev issuer, codec keys)
 *   ledgerloop keys rotate [--issuer|--codec]   a new capability signing key (or issuer key, or codec key);
 *                                         the old public key stays trusted until `retire`
 *   ledgerloop keys retire <kid>          stop trusting a rotated-out key
 *   ledgerloop keys token --principal user:alice --tenant acme [--roles approver] [--ttl 1h] [--out file]
 *                                         a development session token, written 0600 (`start --token @file`)
 *
 * Each prints a table of files, key ids and modes: never key material, never a token.
 */
import path from 'node:path';
import type { Command } from 'commander';
import type { KeyFileStatus, ProjectKeyFiles } from '../../host/project/keys';
import { CliUsageError } from '../errors';
import { renderTable } from '../format';
import { parseDuration, parsePrincipal, parseTenant } from '../parse';
import { addConfigOption, commandProject, type ProjectFlags } from '../project';
import { arg, configureCommand, printJson, runAction, type CommandIO } from './shared';

/** Loaded when a keys command runs (it brings jose), not when any command starts. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const lib = () => require('../../host/project/keys') as typeof import('../../host/project/keys');

interface KeysFlags extends ProjectFlags {
  readonly dir?: string;
  readonly json: boolean;
}

/** The key files: `--dir`, else the project config's, else `.ledgerloop/keys` in the working directory. */
export async function keyFilesFor(flags: KeysFlags, cwd: string = process.cwd()): Promise<ProjectKeyFiles> {
  if (flags.dir !== undefined) return lib().keyFilesIn(path.resolve(cwd, flags.dir));
  const project = await commandProject(flags);
  return project?.keys ?? lib().keyFilesIn(path.resolve(cwd, '.ledgerloop', 'keys'));
}

const relative = (file: string): string => path.relative(process.cwd(), file) || file;

/** The listing: one row per file. */
export function keysTable(status: readonly KeyFileStatus[]): string {
  const rows = status.map((s) => [
    relative(s.file),
    s.role,
    s.exists ? s.kids.map((k) => (k === s.active && s.kids.length > 1 ? `${k} (active)` : k)).join(', ') : '(missing)',
    s.mode ?? '',
    s.secret ? 'secret' : 'public',
    s.action ?? '',
  ]);
  return renderTable(['FILE', 'ROLE', 'KEY IDS', 'MODE', 'KIND', 'DONE'], rows);
}

async function withKeys(
  cmd: Command,
  io: CommandIO,
  flags: KeysFlags,
  body: (files: ProjectKeyFiles) => Promise<KeyFileStatus[]>,
): Promise<void> {
  await runAction(cmd, io, async () => {
    const files = await keyFilesFor(flags);
    let status: KeyFileStatus[];
    try {
      status = await body(files);
    } catch (err) {
      if (err instanceof lib().ProjectKeysError) throw new CliUsageError(err.message);
      throw err;
    }
    if (flags.json) printJson(io, { dir: files.dir, files: status });
    else io.out(`${keysTable(status)}\n`);
    return 0;
  });
}

function keysOptions(cmd: Command, io: CommandIO): Command {
  addConfigOption(cmd);
  cmd
    .option('--dir <dir>', 'the keys folder (default: the project config’s keys.dir, else .ledgerloop/keys)')
    .option('--json', 'print the listing as JSON', false);
  return configureCommand(cmd, io);
}

interface RotateFlags extends KeysFlags {
  readonly issuer: boolean;
  readonly codec: boolean;
}

interface TokenFlags extends KeysFlags {
  readonly principal: string;
  readonly tenant: string;
  readonly roles?: string;
  readonly ttl: number;
  readonly out?: string;
}

export function registerKeys(program: Command, io: CommandIO): void {
  const keys = program
    .command('keys')
    .description(
      'a project’s development keys: capability signing key and key set, dev identity issuer, codec keys, dev tokens',
    );
  configureCommand(keys, io);

  const init = keysOptions(
    keys
      .command('init', { isDefault: true })
      .description('create every key file that is missing (existing ones are checked and kept); list them'),
    io,
  );
  init.action((flags: KeysFlags) => withKeys(init, io, flags, (files) => lib().ensureProjectKeys(files)));

  const status = keysOptions(keys.command('status').description('list the key files, key ids and modes'), io);
  status.action((flags: KeysFlags) => withKeys(status, io, flags, async (files) => lib().describeProjectKeys(files)));

  const rotate = keysOptions(
    keys
      .command('rotate')
      .description(
        'a new capability signing key; its predecessor stays in the key set until retired (--issuer: the dev issuer key; --codec: a new codec key, old ones keep decrypting)',
      )
      .option('--issuer', 'rotate the development issuer’s key instead', false)
      .option('--codec', 'add a codec key and make it the active one instead', false),
    io,
  );
  rotate.action((flags: RotateFlags) =>
    withKeys(rotate, io, flags, (files) => {
      if (flags.issuer && flags.codec) throw new CliUsageError('--issuer and --codec exclude each other');
      return lib().rotateProjectKeys(files, flags.issuer ? 'issuer' : flags.codec ? 'codec' : 'capability');
    }),
  );

  const retire = keysOptions(
    keys
      .command('retire')
      .description('stop trusting a rotated-out key (a capability, issuer or codec key id); the key in use cannot be')
      .argument('<kid>', 'the key id'),
    io,
  );
  retire.action((kid: string, flags: KeysFlags) =>
    withKeys(retire, io, flags, async (files) => lib().retireProjectKey(files, kid)),
  );

  const token = keysOptions(
    keys
      .command('token')
      .description(
        'issue a development session token with the project’s dev issuer, written 0600 to --out (never printed)',
      )
      .requiredOption(
        '--principal <kind:name>',
        'who the token names, e.g. user:alice',
        arg((v) => parsePrincipal(v)),
      )
      .requiredOption(
        '--tenant <id>',
        'the principal’s tenant',
        arg((v) => parseTenant(v)),
      )
      .option('--roles <list>', 'roles, comma-separated (e.g. approver)')
      .option(
        '--ttl <duration>',
        'lifetime, at most 24h',
        arg((v) => parseDuration(v, '--ttl')),
        3_600_000,
      )
      .option('--out <file>', 'where to write it (default <keys dir>/<principal>.token)'),
    io,
  );
  token.action((flags: TokenFlags) =>
    runAction(token, io, async () => {
      const files = await keyFilesFor(flags);
      const out = path.resolve(
        flags.out ?? path.join(files.dir, `${flags.principal.replace(/[^A-Za-z0-9._-]/g, '_')}.token`),
      );
      const roles = (flags.roles ?? '')
        .split(',')
        .map((r) => r.trim())
        .filter((r) => r !== '');
      try {
        await lib().issueDevToken(
          files,
          { principal: flags.principal, tenant: flags.tenant, roles, ttlSec: Math.round(flags.ttl / 1000) },
          out,
        );
      } catch (err) {
        if (err instanceof lib().ProjectKeysError) throw new CliUsageError(err.message);
        throw err;
      }
      if (flags.json) printJson(io, { token: out, principal: flags.principal, tenant: flags.tenant, roles });
      else io.out(`${relative(out)}\n`);
      io.err.write(
        `wrote a session token for ${flags.principal} of ${flags.tenant} to ${relative(out)} (0600): ledgerloop start --token @${relative(out)}\n`,
      );
      return 0;
    }),
  );
}
