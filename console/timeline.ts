/**
 * The run page's reading of a ledger: every event as one line of a timeline (turns, proposals, validation,
 * decisions, attempts, lookups, compensations, the stop), and every call with what names it (operation key,
 * arguments hash), what settled it (receipt, the capability sent, the lookup's evidence) and whether it was left
 * standing at a stop. Pure.
 */
import type { LedgerEvent } from '../src/domain/ledger-events';
import type { CallView, Projection } from '../src/domain/reducer';

export type Phase = 'turn' | 'proposal' | 'validation' | 'decision' | 'attempt' | 'lookup' | 'compensation' | 'stop';

export interface TimelineRow {
  readonly seq: number;
  readonly at: string;
  readonly phase: Phase;
  readonly type: string;
  readonly callId?: string;
  readonly text: string;
}

const who = (a?: { principalId: string }): string => (a ? ` (verified: ${a.principalId})` : '');
const money = (m?: number, c?: string): string => (m !== undefined && c ? ` ${(m / 100).toFixed(2)} ${c}` : '');

function describe(e: LedgerEvent): { phase: Phase; text: string } {
  switch (e.type) {
    case 'RunCreated':
      return {
        phase: 'turn',
        text: `run of ${e.principalId} (${e.tenant}), strategy ${e.strategy}, deadline ${e.deadlineAt}${e.identity?.verified ? `, identity verified (${e.identity.issuer})` : e.identity ? `, identity refused: ${e.identity.code}` : ''}`,
      };
    case 'LedgerCarriedForward':
      return {
        phase: 'turn',
        text: `continued from ${e.fromTemporalRunId} (${e.eventCount} events, hash ${e.projectionHash.slice(0, 12)}…)`,
      };
    case 'ModelRequestStarted':
      return { phase: 'turn', text: `turn ${e.turn}: the model is asked` };
    case 'ModelResponseRecorded':
      return { phase: 'turn', text: `turn ${e.turn}: ${e.final ? 'the model is done' : `${e.proposals} proposal(s)`}` };
    case 'ToolProposalRecorded':
      return { phase: 'proposal', text: `${e.toolName} proposed${e.origin === 'compensation' ? ' by the saga' : ''}` };
    case 'IntentRepeated':
      return {
        phase: 'proposal',
        text: `the same intent as ${e.sameAsCallId}: its outcome ${e.outcome}, nothing sent`,
      };
    case 'ProposalRejected':
      return { phase: 'validation', text: `rejected ${e.code}: ${e.message}` };
    case 'ArgumentsCanonicalized':
      return {
        phase: 'validation',
        text: `canonical arguments ${e.argumentsHash.slice(0, 16)}…, key ${e.operationKey}`,
      };
    case 'AuthorizationAllowed':
      return {
        phase: 'decision',
        text: `allowed ${e.action}${money(e.amountMinor, e.currency)} under ${e.policyVersion}${e.chain?.length ? ` (${e.chain.join(' → ')})` : ''}`,
      };
    case 'AuthorizationDenied':
      return {
        phase: 'decision',
        text: `denied ${e.action}${money(e.amountMinor, e.currency)}: ${e.code ?? ''} ${e.reason}`,
      };
    case 'ApprovalRequested':
      return {
        phase: 'decision',
        text: `approval requested under ${e.policyVersion}: ${e.reason}${e.invalidated ? ` (again: ${e.invalidated})` : ''}`,
      };
    case 'ApprovalGranted':
      return { phase: 'decision', text: `approved by ${e.approver}${who(e.actor)}, valid until ${e.expiresAt}` };
    case 'ApprovalDenied':
      return { phase: 'decision', text: `denied by ${e.approver}${who(e.actor)}: ${e.reason}` };
    case 'ApprovalWithdrawn':
      return { phase: 'decision', text: `approval request withdrawn: ${e.reason}` };
    case 'ReauthorizationStarted':
      return { phase: 'decision', text: `decided again after ${e.attempts} attempt(s): ${e.cause}` };
    case 'DispatchDeferred':
      return { phase: 'decision', text: `deferred ${e.retryAfterMs} ms: ${e.reason}` };
    case 'CircuitOpened':
      return { phase: 'decision', text: `circuit to ${e.service} open until ${e.until}: ${e.reason}` };
    case 'DispatchIntentRecorded':
      return { phase: 'attempt', text: `intent recorded: ${e.intent.toolName} key ${e.intent.operationKey}` };
    case 'ToolAttemptStarted':
      return { phase: 'attempt', text: `dispatch ${e.dispatch} to ${e.service ?? '?'} under ${e.keyUsed}` };
    case 'ToolOutcomeMarkedUnknown':
      return {
        phase: 'attempt',
        text: `outcome UNKNOWN after ${e.attempts} attempt(s): ${e.cause}${e.timeoutClass ? ` (${e.timeoutClass})` : ''}`,
      };
    case 'ToolResultRecorded':
      return {
        phase: 'attempt',
        text: `${e.state}${e.receipt ? ` receipt ${e.receipt}` : ''}${e.errorCode ? ` ${e.errorCode}` : ''} after ${e.attempts} attempt(s)${e.replayed ? ', replayed by the downstream' : ''}`,
      };
    case 'AbsenceAwaited':
      return {
        phase: 'lookup',
        text: `${e.service} found nothing under the key and cannot seal it: still UNKNOWN, looked up again at ${e.until} (a request in flight could land until then)`,
      };
    case 'ToolEffectReconciled':
      return {
        phase: 'lookup',
        text: `settled ${e.outcome} via ${e.via}${e.receipt ? ` receipt ${e.receipt}` : ''}: ${e.detail}${e.evidence ? ` [lookup: ${e.evidence.lookup}${e.evidence.status ? ` ${e.evidence.status}` : ''} at ${e.evidence.checkedAt}]` : ''}${who(e.actor)}`,
      };
    case 'OperatorWaitStarted':
      return { phase: 'lookup', text: `waiting for an operator: ${e.unknownCalls.join(', ')}` };
    case 'CompensationRegistered':
      return {
        phase: 'compensation',
        text: `compensation ${e.toolName} registered as ${e.compensationCallId}, key ${e.operationKey}`,
      };
    case 'CompensationStarted':
      return { phase: 'compensation', text: `compensating: ${e.reason}` };
    case 'CompensationCompleted':
      return { phase: 'compensation', text: `compensation ${e.outcome}: ${e.detail}` };
    case 'StandingEffectsSettled':
      return {
        phase: 'stop',
        text: `standing effects (${e.choice}): offset [${e.offset.join(', ')}], nothing to offset [${e.nothingToOffset.join(', ')}], unsettled [${e.unsettled.join(', ')}], left [${e.left.join(', ')}]`,
      };
    case 'CancellationRequested':
      return {
        phase: 'stop',
        text: `cancel requested${e.requestedBy ? ` by ${e.requestedBy.principalId}` : ''}${e.reason ? `: ${e.reason}` : ''}${e.whileStopping ? ' (while the run was stopping: it finished its saga and settlement, then stopped)' : ''}`,
      };
    case 'RunCompleted': {
      const left =
        e.leftStanding.length > 0
          ? `; left standing: ${e.leftStanding.map((l) => `${l.logicalCallId} (${l.why})`).join(', ')}`
          : '';
      return { phase: 'stop', text: `stopped: ${e.stopReason}${e.detail ? ` (${e.detail})` : ''}${left}` };
    }
  }
}

export function timeline(events: readonly LedgerEvent[]): TimelineRow[] {
  return events.map((e) => {
    const d = describe(e);
    const callId = 'logicalCallId' in e ? e.logicalCallId : 'forwardCallId' in e ? e.forwardCallId : undefined;
    return { seq: e.seq, at: e.at, type: e.type, ...(callId ? { callId } : {}), ...d };
  });
}

export interface CallRow {
  readonly call: CallView;
  readonly capability?: string;
  readonly evidence?: string;
  /** Named by the stop's StandingEffectsSettled as left for an operator or unsettled. */
  readonly standingAtStop: boolean;
}

export function callRows(events: readonly LedgerEvent[], projection: Projection): CallRow[] {
  const left = new Set<string>();
  const capability = new Map<string, string>();
  const evidence = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'StandingEffectsSettled') for (const id of [...e.left, ...e.unsettled]) left.add(id);
    if (e.type === 'ToolResultRecorded' && e.capability)
      capability.set(
        e.logicalCallId,
        `sha256 ${e.capability.capabilityDigest.slice(0, 16)}…, kid ${e.capability.kid}, aud ${e.capability.aud}`,
      );
    if (e.type === 'ToolEffectReconciled' && e.evidence)
      evidence.set(
        e.logicalCallId,
        `${e.evidence.service} said ${e.evidence.lookup}${e.evidence.status ? ` (${e.evidence.status})` : ''}${e.evidence.receipt ? ` receipt ${e.evidence.receipt}` : ''} at ${e.evidence.checkedAt}`,
      );
  }
  return Object.values(projection.calls).map((call) => ({
    call,
    ...(capability.has(call.logicalCallId) ? { capability: capability.get(call.logicalCallId)! } : {}),
    ...(evidence.has(call.logicalCallId) ? { evidence: evidence.get(call.logicalCallId)! } : {}),
    standingAtStop: left.has(call.logicalCallId),
  }));
}
