/**
 * The shape shared by the commands that act on one call of one run (`approve`, `deny`, `resolve`): the two
 * positional ids, who decides (`--as`), and, once the command's own options are added, the timeout and
 * connection options.
 */
import type { Command } from 'commander';
import { addConnectionOptions, addTimeoutOption } from '../connect';
import { parseNonEmpty, parsePrincipal } from '../parse';
import { arg, configureCommand, type CommandIO } from './shared';

export interface CallCommandSpec {
  readonly name: string;
  readonly description: string;
  /** How the `<logicalCallId>` argument is described, e.g. "the UNKNOWN call". */
  readonly call: string;
  /** How `--as` is described, e.g. "who decides, e.g. ops:bob". */
  readonly as: string;
}

/** `<workflowId> <logicalCallId> --as <kind:name>`; add the command's own options, then `finishCallCommand`. */
export function callCommand(program: Command, spec: CallCommandSpec): Command {
  return program
    .command(spec.name)
    .description(spec.description)
    .argument(
      '<workflowId>',
      'the run’s workflow id',
      arg((v) => parseNonEmpty(v, 'workflowId')),
    )
    .argument(
      '<logicalCallId>',
      spec.call,
      arg((v) => parseNonEmpty(v, 'logicalCallId')),
    )
    .requiredOption(
      '--as <kind:name>',
      spec.as,
      arg((v) => parsePrincipal(v, '--as')),
    );
}

/** The timeout (for the query and the update) and connection options, and the shared output handling. */
export function finishCallCommand(cmd: Command, io: CommandIO): Command {
  addTimeoutOption(cmd, 'the query and the update');
  addConnectionOptions(cmd);
  configureCommand(cmd, io);
  return cmd;
}
