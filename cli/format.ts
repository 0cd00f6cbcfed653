/** Plain-text rendering for the run commands: fixed-width tables and one line per ledger event. */
import type { LedgerEvent } from '../src/domain/ledger-events';
import type { CallView } from '../src/domain/reducer';

/** A fixed-width table: a header row, a rule, then the rows; cells are padded, never wrapped. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    line(headers),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(headers.map((_, i) => r[i] ?? ''))),
  ].join('\n');
}

/** The first `n` characters of a hash or key, with an ellipsis when cut. */
export function short(value: string | null | undefined, n = 12): string {
  if (!value) return '';
  return value.length > n ? `${value.slice(0, n)}…` : value;
}

function kv(pairs: Record<string, string | number | boolean | undefined | null>): string {
  return Object.entries(pairs)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

/** What one event says, after its type: the call it concerns and its telling fields. */
export function eventDetail(e: LedgerEvent): string {
  switch (e.type) {
    case 'RunCreated':
      return kv({
        run: e.runId,
        principal: e.principalId,
        tenant: e.tenant,
        strategy: e.strategy,
        deadline: e.deadlineAt,
        reducer: e.reducerVersion,
      });
    case 'ModelRequestStarted':
      return kv({ turn: e.turn });
    case 'ModelResponseRecorded':
      return kv({ turn: e.turn, proposals: e.proposals, final: e.final, attempt: e.attempt });
    case 'ToolProposalRecorded':
      return `${e.logicalCallId} ${kv({ tool: e.toolName, turn: e.turn, provider: e.providerCallId })}`;
    case 'ProposalRejected':
      return `${e.logicalCallId} ${kv({ code: e.code })}: ${e.message}`;
    case 'ArgumentsCanonicalized':
      return `${e.logicalCallId} ${kv({ key: short(e.operationKey, 14), args: short(e.argumentsHash), toolVersion: e.toolVersion })}`;
    case 'AuthorizationAllowed':
    case 'AuthorizationDenied':
      return `${e.logicalCallId} ${kv({ policy: e.policyVersion, action: e.action, resource: e.resource, code: e.code, chain: e.chain?.join('>') })}: ${e.reason}`;
    case 'ApprovalRequested':
      return `${e.logicalCallId} ${kv({ policy: e.policyVersion, args: short(e.argumentsHash), invalidated: e.invalidated })}: ${e.reason}`;
    case 'ApprovalGranted':
      return `${e.logicalCallId} ${kv({ by: e.approver, policy: e.policyVersion, expires: e.expiresAt })}`;
    case 'ApprovalDenied':
      return `${e.logicalCallId} ${kv({ by: e.approver })}: ${e.reason}`;
    case 'DispatchDeferred':
      return `${e.logicalCallId} ${kv({ retryAfterMs: e.retryAfterMs })}: ${e.reason}`;
    case 'DispatchIntentRecorded':
      return `${e.logicalCallId} ${kv({ key: short(e.intent.operationKey, 14), tool: e.intent.toolName, principal: e.intent.principalId, tenant: e.intent.tenant, policy: e.intent.policyVersion })}`;
    case 'ToolAttemptStarted':
      return `${e.logicalCallId} ${kv({ dispatch: e.dispatch, key: short(e.keyUsed, 24) })}`;
    case 'ToolOutcomeMarkedUnknown':
      return `${e.logicalCallId} ${kv({ attempts: e.attempts })}: ${e.cause}`;
    case 'AbsenceAwaited':
      return `${e.logicalCallId} ${kv({ service: e.service, until: e.until })}: not found, unsealed; looked up again after the in-flight window`;
    case 'ToolEffectReconciled':
      return `${e.logicalCallId} ${kv({ outcome: e.outcome, via: e.via, receipt: e.receipt, checked: e.evidence?.lookup })}: ${e.detail}`;
    case 'ToolResultRecorded':
      return `${e.logicalCallId} ${kv({ state: e.state, attempts: e.attempts, receipt: e.receipt, error: e.errorCode, replayed: e.replayed || undefined, fence: e.fence, worker: e.workerIdentity })}`;
    case 'OperatorWaitStarted':
      return `unknown=${e.unknownCalls.join(',')}`;
    case 'RunCompleted':
      return `${kv({ stopReason: e.stopReason, leftStanding: (e.leftStanding ?? []).map((l) => `${l.logicalCallId}:${l.state}:${l.why}`).join(',') })}: ${e.detail}`;
    default: {
      // Event types this renderer has no special case for: their fields as key=value.
      const { type: _type, seq: _seq, at: _at, ...rest } = e as LedgerEvent;
      return Object.entries(rest)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
    }
  }
}

/** `#7  2025-01-01T10:00:00.000Z  ToolResultRecorded  lc_1_… state=SUCCEEDED …` */
export function eventLine(e: LedgerEvent): string {
  return `#${String(e.seq).padEnd(3)} ${e.at}  ${e.type.padEnd(24)} ${eventDetail(e)}`.trimEnd();
}

/** The calls table of `show`. */
export function callsTable(calls: readonly CallView[]): string {
  return renderTable(
    [
      'CALL',
      'TOOL',
      'STATE',
      'OPERATION KEY',
      'RECEIPT',
      'DISPATCHES',
      'ATTEMPTS',
      'SETTLED VIA',
      'APPROVED BY',
      'ERROR',
    ],
    calls.map((c) => [
      c.logicalCallId,
      c.toolName,
      c.state,
      short(c.operationKey, 16),
      c.receipt ?? '',
      String(c.dispatches),
      String(c.attempts),
      c.reconciledVia ?? '',
      c.approvedBy ?? '',
      c.errorCode ?? '',
    ]),
  );
}
