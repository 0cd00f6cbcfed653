/**
 * `ledgerloop init <dir>`: a new project (host/project/scaffold.ts), its development keys, and `npm install`
 * unless `--no-install`. Prints what it wrote and the commands that come next.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Command } from 'commander';
import type { TemplateName } from '../../host/project/scaffold';
import { CliError, CliUsageError, EXIT_FAILED } from '../errors';
import { keysTable } from './keys';
import { configureCommand, runAction, type CommandIO } from './shared';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when init runs (it brings jose)
const lib = () => require('../../host/project/scaffold') as typeof import('../../host/project/scaffold');

interface InitFlags {
  readonly name?: string;
  readonly ledgerloop?: string;
  readonly template?: string;
  readonly install: boolean;
}

/** What comes after `npm install`, per template. */
const NEXT: Readonly<Record<TemplateName, readonly string[]>> = {
  booking: [
    '  npm start          # a dev server, the booking service, a worker and one governed run; stays up (Ctrl-C)',
    '  npm test           # the project on a real server: booked once, refused by policy, replayed',
    '  npm run faults     # lose the booking’s response after commit: still exactly one booking',
  ],
  downstreams: [
    '  npm test           # a charge over HTTP, a refund through the SDK, an order in PostgreSQL: each once, under faults',
    '  npm run faults     # the fault protocol on each tool: one effect each, counted in its own storage',
    '  (PostgreSQL: DATABASE_URL, else a private server from the initdb/pg_ctl on this machine)',
  ],
};

function npmInstall(dir: string, io: CommandIO): Promise<number> {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const child = spawn(npm, ['install', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d: Buffer) => io.err.write(d.toString()));
  child.stderr.on('data', (d: Buffer) => io.err.write(d.toString()));
  return new Promise((resolve) => {
    child.once('error', (err) => {
      io.err.write(`npm could not be started: ${err.message}\n`);
      resolve(1);
    });
    child.once('close', (code) => resolve(code ?? 1));
  });
}

/** The `--template` value: a template's name, else a usage error naming them all. */
export function templateFlag(name: string): TemplateName {
  if (!lib().isTemplateName(name))
    throw new CliUsageError(`--template must be one of: ${Object.keys(lib().TEMPLATES).join(', ')}`);
  return name;
}

export function registerInit(program: Command, io: CommandIO): void {
  const init = configureCommand(
    program
      .command('init')
      .description(
        'a new project: one tool with its compensation, its service, a policy, a fault protocol, a worker, a start script, tests and dev keys',
      )
      .argument('<dir>', 'the folder to create (it must not exist, or be empty)')
      .option('--name <name>', 'the package name (default: the folder’s name)')
      .option(
        '--template <name>',
        'booking (default: one tool and its own service, nothing but Node) or downstreams (a function tool, an HTTP tool on a Stripe-style API, a PostgreSQL service: none speaks our contract)',
      )
      .option(
        '--ledgerloop <spec>',
        'how the project depends on ledgerloop: a range, a tarball or a file: path (default: the tarball or folder this ledgerloop was installed from, else ^<its version>)',
      )
      .option('--no-install', 'write the files and keys, but do not run npm install'),
    io,
  );
  init.action((dir: string, flags: InitFlags) =>
    runAction(init, io, async () => {
      let made;
      try {
        made = await lib().scaffoldProject({
          dir,
          ...(flags.name !== undefined ? { name: flags.name } : {}),
          ...(flags.ledgerloop !== undefined ? { ledgerloopSpec: flags.ledgerloop } : {}),
          ...(flags.template !== undefined ? { template: templateFlag(flags.template) } : {}),
        });
      } catch (err) {
        if (err instanceof lib().ScaffoldError) throw new CliUsageError(err.message);
        throw err;
      }
      const rel = path.relative(process.cwd(), made.dir) || '.';
      io.out(`wrote ${made.name} in ${rel}: ${made.files.length} files\n`);
      for (const f of made.files) io.out(`  ${f}\n`);
      io.out(`\ndevelopment keys (ledgerloop keys):\n${keysTable(made.keys)}\n`);
      io.out(`\nledgerloop dependency: ${made.ledgerloop}\n`);
      if (flags.install) {
        io.err.write(`npm install in ${rel} …\n`);
        const code = await npmInstall(made.dir, io);
        if (code !== 0)
          throw new CliError(`npm install failed in ${rel} (exit ${code}); the files are written`, EXIT_FAILED);
      }
      io.out(
        ['', 'Next:', `  cd ${rel}`, ...(flags.install ? [] : ['  npm install']), ...NEXT[made.template], ''].join(
          '\n',
        ),
      );
      return 0;
    }),
  );
}
