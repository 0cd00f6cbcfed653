/**
 * `ledgerloop resolve`: an operator settles a call that reconciliation left UNKNOWN (resolveCallUpdate). The
 * workflow first asks the downstream by key and seals the key, then records the resolution with who decided,
 * why, and the lookup's evidence. It refuses a call that is not UNKNOWN, a resolution without who and why,
 * FAILED while the downstream holds the effect, SUCCEEDED without the receipt the downstream holds, and any
 * resolution while the downstream cannot be asked. A refusal is printed with its code and reason (exit 1).
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Command } from 'commander';
import { Failure } from '../../src/domain/failures';
import type { LedgerEvent, ResolutionEvidence } from '../../src/domain/ledger-events';
import { resolveCallUpdate, type OperatorResolution } from '../../workflows/definitions';
import { withSession, type ConnectionFlags } from '../connect';
import { CallNotFoundError, EXIT_FAILED, OperationRefusedError } from '../errors';
import { parseNonEmpty, parseOutcome } from '../parse';
import { actorToken, callCommand, finishCallCommand, guardCommandToken, tokenForCommand } from './call-command';
import { readRun } from './read-run';
import { arg, printJson, runAction, type CommandIO } from './shared';

interface ResolveFlags extends ConnectionFlags {
  readonly outcome: 'SUCCEEDED' | 'FAILED';
  readonly as?: string;
  readonly token?: string;
  /** `--allow-token-in-clear`: send the token even without codec keys. */
  readonly allowTokenInClear?: boolean;
  readonly reason: string;
  readonly receipt?: string;
  readonly json: boolean;
  readonly timeout: number;
}

export function registerResolve(program: Command, io: CommandIO): void {
  const cmd = callCommand(program, {
    name: 'resolve',
    description: 'settle a call left UNKNOWN, with the evidence you used (recorded with who and why)',
    call: 'the UNKNOWN call',
    as: 'who decides, e.g. ops:bob',
  })
    .requiredOption('--outcome <SUCCEEDED|FAILED>', 'what happened downstream', arg(parseOutcome))
    .requiredOption(
      '--reason <text>',
      'the evidence, e.g. "wallet statement shows the debit"',
      arg((v) => parseNonEmpty(v, '--reason')),
    )
    .option(
      '--receipt <id>',
      'the receipt the downstream holds under the key (required for SUCCEEDED: the workflow checks it)',
      arg((v) => parseNonEmpty(v, '--receipt')),
    )
    .option('--json', 'print JSON: the call before and the resolution sent', false);
  finishCallCommand(cmd, io);
  cmd.action((workflowId: string, logicalCallId: string, flags: ResolveFlags) =>
    runAction(cmd, io, async () => {
      // A token to resolve exactly this call of this run (src/identity/purpose.ts).
      const scope = { purpose: 'resolve', run: workflowId, call: logicalCallId } as const;
      const token = await tokenForCommand(actorToken(flags.token), scope);
      return withSession({ ...flags, actorToken: token }, workflowId, async (s) => {
        await guardCommandToken(s.dataConverter, 'the operator’s token', io.err, flags.allowTokenInClear);
        const view = await readRun(s, workflowId, flags.timeout);
        const call = view.ledger.projection.calls[logicalCallId];
        if (!call) {
          const ids = Object.keys(view.ledger.projection.calls);
          throw new CallNotFoundError(
            `run ${workflowId} has no call ${logicalCallId} (calls: ${ids.join(', ') || 'none'})`,
          );
        }
        if (!flags.json)
          io.out(
            `call ${logicalCallId} (${call.toolName}) is ${call.state}; operation key ${call.operationKey ?? '?'}\n`,
          );
        if (flags.outcome === 'SUCCEEDED' && flags.receipt === undefined) {
          io.err.write('note: no --receipt: SUCCEEDED is accepted only with the receipt the downstream holds\n');
        }
        const resolution: OperatorResolution = {
          logicalCallId,
          outcome: flags.outcome,
          token,
          reason: flags.reason,
          ...(flags.receipt !== undefined ? { receipt: flags.receipt } : {}),
        };
        const tq = view.description.taskQueue;
        let accepted: { operator?: string } = {};
        try {
          accepted = await s.answered(
            'resolveCall update',
            workflowId,
            flags.timeout,
            () => view.handle.executeUpdate(resolveCallUpdate, { args: [resolution] }),
            tq,
          );
        } catch (err) {
          const refusal = refusalOf(err);
          if (refusal === undefined) throw err;
          if (flags.json) {
            printJson(io, {
              workflowId,
              before: call,
              resolution: { ...resolution, token: '(redacted)' },
              accepted: false,
              refusal,
            });
            return EXIT_FAILED;
          }
          throw new OperationRefusedError(describeRefusal(refusal));
        }
        const after = await readRun(s, workflowId, flags.timeout).catch(() => undefined);
        const evidence = after === undefined ? undefined : evidenceOf(after.ledger.events, logicalCallId);
        if (flags.json)
          printJson(io, {
            workflowId,
            before: call,
            resolution: { ...resolution, token: '(redacted)' },
            accepted: true,
            evidence,
          });
        else {
          io.out(`resolved ${logicalCallId} as ${flags.outcome} by ${accepted.operator ?? '?'}: ${flags.reason}\n`);
          if (evidence !== undefined) io.out(`evidence: ${describeEvidence(evidence)}\n`);
        }
        return 0;
      });
    }),
  );
}

/** A refused resolveCall update: the workflow's typed failure, with the lookup's evidence when it has one. */
interface Refusal {
  readonly type: string | undefined;
  readonly message: string;
  readonly evidence?: ResolutionEvidence;
}

function refusalOf(err: unknown): Refusal | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  const cause = err.cause;
  if (!(cause instanceof ApplicationFailure)) return { type: undefined, message: cause?.message ?? err.message };
  const evidence = cause.details?.[0] as ResolutionEvidence | undefined;
  return { type: cause.type ?? undefined, message: cause.message, ...(evidence !== undefined ? { evidence } : {}) };
}

/** One line: what was refused and why. A malformed request keeps the short form `refused: <reason>`. */
export function describeRefusal(r: Refusal): string {
  if (r.type === undefined || r.type === Failure.OperatorResolutionInvalid) return `refused: ${r.message}`;
  return `refused (${r.type}): ${r.message}`;
}

export function describeEvidence(e: ResolutionEvidence): string {
  const what =
    e.lookup === 'found'
      ? `found ${e.status ?? '?'}${e.receipt !== undefined ? ` with receipt ${e.receipt}` : ''}${e.errorCode !== undefined ? ` (${e.errorCode})` : ''}`
      : e.lookup === 'sealed'
        ? 'no effect; the key is sealed'
        : 'not found';
  return `${e.service} lookup of ${e.operationKey} at ${e.checkedAt}: ${what}`;
}

function evidenceOf(events: readonly LedgerEvent[], logicalCallId: string): ResolutionEvidence | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === 'ToolEffectReconciled' && e.logicalCallId === logicalCallId && e.via === 'operator')
      return e.evidence;
  }
  return undefined;
}
