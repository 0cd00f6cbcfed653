/**
 * The shape shared by the commands that act on one call of one run (`approve`, `deny`, `resolve`): the two
 * positional ids, who decides (`--token`, verified by the run; `--as` is only a label now), and, once the command's own options are added, the timeout and
 * connection options.
 */
import type { Command } from 'commander';
import { addConnectionOptions, addTimeoutOption } from '../connect';
import { CliUsageError } from '../errors';
import { parseNonEmpty, parsePrincipal } from '../parse';
import type { DataConverter } from '@temporalio/common';
import { guardTokenTransport, TokenInClearError } from '../../host/client/token-transport';
import { CODEC_KEYS_ENV } from '../../src/codec/data-converter';
import { ActTokenError, tokenForAct } from '../../src/identity/act-token';
import { readToken } from '../../src/identity/issue';
import type { TokenScope } from '../../src/identity/purpose';
import type { ProgressStream } from '../progress';

/** The variable an actor's token is read from when `--token` is not given. */
export const ACTOR_TOKEN_ENV = 'LEDGERLOOP_ACTOR_TOKEN';

/** The actor's token: `--token <jws>` or `--token @file`, else LEDGERLOOP_ACTOR_TOKEN. Required. */
export function actorToken(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const token = readToken(flag, env, ACTOR_TOKEN_ENV);
  if (token === undefined) {
    throw new CliUsageError(
      `this command needs your identity token: --token <jws|@file> or ${ACTOR_TOKEN_ENV} (the run verifies it and records who you are)`,
    );
  }
  return token;
}

/**
 * The token to send for one act: the given one when it names exactly this act, run and call, else one minted from
 * a session token with the development issuer's key (LEDGERLOOP_DEV_ISSUER_KEY; src/identity/act-token.ts). A
 * usage error (nothing sent) when neither is possible.
 */
export async function tokenForCommand(presented: string, scope: TokenScope): Promise<string> {
  try {
    return (await tokenForAct(presented, scope)).token;
  } catch (e) {
    if (e instanceof ActTokenError) throw new CliUsageError(`--token: ${e.message}`);
    throw e;
  }
}

/**
 * Before a token is sent: a client that would write it to the run's history in clear text (no keys configured, no
 * project's, no demo's: src/codec/demo-key.ts) refuses with a usage error, nothing sent, unless the user passed
 * `--allow-token-in-clear`; then it is sent with a warning on stderr.
 */
export async function guardCommandToken(
  dataConverter: DataConverter | undefined,
  what: string,
  err: ProgressStream,
  allowInClear = false,
): Promise<void> {
  try {
    await guardTokenTransport(dataConverter, what, {
      warn: (line) => err.write(`${line}\n`),
      strict: !allowInClear,
      refusal: `(no codec keys here: ${CODEC_KEYS_ENV}, a project's codec-keys or the demo's key; ${ALLOW_IN_CLEAR_FLAG} sends it anyway)`,
    });
  } catch (e) {
    if (e instanceof TokenInClearError) throw new CliUsageError(e.message);
    throw e;
  }
}

/** The flag that sends a token in clear text where no key can be found. */
export const ALLOW_IN_CLEAR_FLAG = '--allow-token-in-clear';

/** `--allow-token-in-clear`, on every command that sends a token. */
export function addAllowInClearOption(cmd: Command): Command {
  return cmd.option(
    ALLOW_IN_CLEAR_FLAG,
    'send the token even though this client has no codec keys: it is then readable in the run’s history (default: refuse)',
    false,
  );
}

/** `--token`, shared by approve, deny, resolve and cancel. */
export function addTokenOption(cmd: Command): Command {
  cmd.option(
    '--token <jws|@file>',
    `your identity token (default env ${ACTOR_TOKEN_ENV}); the ledger records its verified principal`,
  );
  return addAllowInClearOption(cmd);
}
import { arg, configureCommand, runCommand, type CommandIO } from './shared';

export interface CallCommandSpec {
  readonly name: string;
  readonly description: string;
  /** How the `<logicalCallId>` argument is described, e.g. "the UNKNOWN call". */
  readonly call: string;
  /** How `--as` is described, e.g. "who decides, e.g. ops:bob". */
  readonly as: string;
}

/** `<workflowId> <logicalCallId> --token <jws>`; add the command's own options, then `finishCallCommand`. */
export function callCommand(program: Command, spec: CallCommandSpec): Command {
  const cmd = runCommand(program, spec.name, spec.description)
    .argument(
      '<logicalCallId>',
      spec.call,
      arg((v) => parseNonEmpty(v, 'logicalCallId')),
    )
    .option(
      '--as <kind:name>',
      `deprecated and ignored (was: ${spec.as}): the ledger records the principal your --token verifies as`,
      arg((v) => parsePrincipal(v, '--as')),
    );
  return addTokenOption(cmd);
}

/** The timeout (for the query and the update) and connection options, and the shared output handling. */
export function finishCallCommand(cmd: Command, io: CommandIO): Command {
  addTimeoutOption(cmd, 'the query and the update');
  addConnectionOptions(cmd);
  configureCommand(cmd, io);
  return cmd;
}
