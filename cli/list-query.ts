/**
 * The visibility query `ledgerloop list` sends (`client.workflow.list({ query })`), built from Ledgerloop's
 * search attributes (src/domain/search-attributes.ts). Pure: validated filters in, a query string out.
 */
import { SA } from '../src/domain/search-attributes';
import { CliUsageError } from './errors';

/** The statuses the workflow publishes in LedgerloopStatus today (the projection's status). */
export const KNOWN_STATUSES: readonly string[] = ['running', 'waiting_for_operator', 'stopped'];

/** The stop reasons the workflow publishes in LedgerloopStopReason today (`StopReason` in src/domain/run.ts). */
export const KNOWN_STOP_REASONS: readonly string[] = [
  'completed',
  'budget_exhausted',
  'deadline_exceeded',
  'tool_failed',
  'authorization_denied',
  'outcome_unknown',
  'operator_stopped',
  'model_failed',
  'compensation_failed',
];

export interface ListFilters {
  readonly status?: string;
  readonly principal?: string;
  readonly tenant?: string;
  readonly strategy?: string;
  readonly stopReason?: string;
  /** Only runs with at least one UNKNOWN call. */
  readonly unknown?: boolean;
  /** Only runs with at least one call waiting for approval. */
  readonly pendingApprovals?: boolean;
  /** Only stopped runs whose stop left at least one effect standing for an operator. */
  readonly leftStanding?: boolean;
}

/** The workflow type every agent run has. */
export const AGENT_RUN_TYPE = 'agentRun';

/** A keyword value for the query: non-empty, no quotes or backslashes (nothing to escape, nothing injected). */
export function keywordLiteral(flag: string, value: string): string {
  const v = value.trim();
  if (v === '' || /['"\\\n\r]/.test(v)) {
    throw new CliUsageError(`${flag}: "${value}" is not a valid filter value (no quotes, backslashes or line breaks)`);
  }
  return `'${v}'`;
}

/** `WorkflowType = 'agentRun' AND LedgerloopStatus = 'running' AND ...`. */
export function buildListQuery(f: ListFilters): string {
  const clauses = [`WorkflowType = '${AGENT_RUN_TYPE}'`];
  const eq = (flag: string, name: string, value: string | undefined): void => {
    if (value !== undefined) clauses.push(`${name} = ${keywordLiteral(flag, value)}`);
  };
  eq('--status', SA.status.name, f.status);
  eq('--principal', SA.principal.name, f.principal);
  eq('--tenant', SA.tenant.name, f.tenant);
  eq('--strategy', SA.strategy.name, f.strategy);
  eq('--stop-reason', SA.stopReason.name, f.stopReason);
  if (f.unknown) clauses.push(`${SA.unknownCalls.name} > 0`);
  if (f.pendingApprovals) clauses.push(`${SA.pendingApprovals.name} > 0`);
  if (f.leftStanding) clauses.push(`${SA.leftStanding.name} > 0`);
  return clauses.join(' AND ');
}

/**
 * Notes for filter values the workflow does not publish today (likely typos). They do not stop the query: a newer
 * workflow may publish more values than this CLI knows.
 */
export function filterWarnings(f: ListFilters): string[] {
  const out: string[] = [];
  if (f.status !== undefined && !KNOWN_STATUSES.includes(f.status)) {
    out.push(`note: "${f.status}" is not a status this CLI knows (${KNOWN_STATUSES.join(', ')})`);
  }
  if (f.stopReason !== undefined && !KNOWN_STOP_REASONS.includes(f.stopReason)) {
    out.push(`note: "${f.stopReason}" is not a stop reason this CLI knows (${KNOWN_STOP_REASONS.join(', ')})`);
  }
  return out;
}
