/**
 * The shape shared by the commands that act on one call of one run (`approve`, `deny`, `resolve`): the two
 * positional ids, who decides (`--token`, verified by the run; `--as` is only a label now), and, once the command's own options are added, the timeout and
 * connection options.
 */
import type { Command } from 'commander';
import { addConnectionOptions, addTimeoutOption } from '../connect';
import { CliUsageError } from '../errors';
import { parseNonEmpty, parsePrincipal } from '../parse';
import { readToken } from '../../src/identity/issue';

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

/** `--token`, shared by approve, deny, resolve and cancel. */
export function addTokenOption(cmd: Command): Command {
  return cmd.option(
    '--token <jws|@file>',
    `your identity token (default env ${ACTOR_TOKEN_ENV}); the ledger records its verified principal`,
  );
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
