/**
 * `ledgerloop mcp import <server>`: lists an MCP server's tools and writes (or updates) the project's checked-in
 * tool set, `<out>` (default `mcp/<server>.tools.json`), for the team to review and commit:
 *
 *   ledgerloop mcp import files -- mcp-server-filesystem ./data          a stdio server: the command after --
 *   ledgerloop mcp import everything --url http://127.0.0.1:3001/mcp [--auth-secret TOKEN_VAR]
 *
 * Prints what was added, changed (version bumped: review its effect and contract), removed and unchanged. Nothing
 * of a secret is printed or written: `--auth-secret` names a variable of the environment.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { CliUsageError } from '../errors';
import { configureCommand, printJson, runAction, type CommandIO } from './shared';

interface McpImportFlags {
  readonly url?: string;
  readonly authSecret?: string;
  readonly out?: string;
  readonly confirmIdempotent?: string;
  readonly timeout: string;
  readonly json: boolean;
}

/** Loaded when the command runs: the MCP SDK is an optional peer dependency. */
/* eslint-disable @typescript-eslint/no-require-imports */
const listingLib = () =>
  require('../../src/downstream/mcp/read-listing') as typeof import('../../src/downstream/mcp/read-listing');
const setLib = () => require('../../src/tools/mcp/import-set') as typeof import('../../src/tools/mcp/import-set');
const toolSetLib = () => require('../../src/tools/mcp/tool-set') as typeof import('../../src/tools/mcp/tool-set');
/* eslint-enable @typescript-eslint/no-require-imports */

export function registerMcp(program: Command, io: CommandIO): Command {
  const mcp = configureCommand(program.command('mcp').description('MCP servers as governed tools'), io);
  const cmd = mcp
    .command('import')
    .description('list an MCP server’s tools and write their declarations into the project')
    .argument('<server>', 'the server’s name in the project (a-z, 0-9, _ and -)')
    .argument('[command...]', 'a stdio server: its command and arguments, after --')
    .option('--url <url>', 'a Streamable HTTP server’s MCP endpoint')
    .option('--auth-secret <variable>', 'the environment variable whose value is sent as a Bearer token')
    .option('--out <file>', 'the tool set file (default mcp/<server>.tools.json)')
    .option('--confirm-idempotent <names>', 'comma-separated tools whose idempotentHint the team confirms')
    .option('--timeout <ms>', 'how long to wait for the server', '20000')
    .option('--json', 'print the report as JSON', false);
  configureCommand(cmd, io).action(async (server: string, command: string[], flags: McpImportFlags) => {
    await runAction(cmd, io, async () => {
      if ((flags.url === undefined) === (command.length === 0))
        throw new CliUsageError('give either --url or a stdio command after --');
      const config =
        flags.url !== undefined
          ? { url: flags.url, ...(flags.authSecret !== undefined ? { auth: { secret: flags.authSecret } } : {}) }
          : { command: command[0]!, args: command.slice(1) };
      const out = path.resolve(flags.out ?? path.join('mcp', `${server}.tools.json`));
      const existing = existsSync(out)
        ? toolSetLib().parseToolSet(JSON.parse(readFileSync(out, 'utf8')) as unknown, out)
        : undefined;
      const listing = await listingLib().readListing(server, config, { timeoutMs: Number(flags.timeout) });
      const report = setLib().importToolSet(server, listing.tools, existing, {
        confirmIdempotent: (flags.confirmIdempotent ?? '').split(',').filter((s) => s !== ''),
        ...(listing.serverInfo !== undefined ? { serverInfo: listing.serverInfo } : {}),
      });
      // What is written must load: the same check a worker makes.
      toolSetLib().parseToolSet(report.set, out);
      mkdirSync(path.dirname(out), { recursive: true });
      writeFileSync(out, `${JSON.stringify(report.set, null, 2)}\n`);
      const summary = {
        file: path.relative(process.cwd(), out) || out,
        added: report.added,
        changed: report.changed,
        removed: report.removed,
        unchanged: report.unchanged,
      };
      if (flags.json) printJson(io, summary);
      else
        io.out(
          `${summary.file}: ${report.set.tools.length} tools; added ${report.added.join(', ') || '-'}; changed ` +
            `${report.changed.join(', ') || '-'} (review); removed ${report.removed.join(', ') || '-'}\n`,
        );
      return 0;
    });
  });
  return mcp;
}
