/**
 * `RunCore`: the state every run model holds (model.ts), whoever hosts the loop: the agent run (run.ts) or a
 * governed session in a team's own workflow (session/governed-session.ts). The deadline clock, the tool-call
 * budget's reservations, the saga's registrations, the retry accounting and the run's opening record are written
 * here once; each host adds only how its loop turns and how it ends.
 */
import { CancellationScope, workflowInfo } from '@temporalio/workflow';
import type { DeadlineClock } from '../src/domain/activity-presets';
import { REDUCER_VERSION, retryAmplification } from '../src/domain/reducer';
import {
  DEFAULT_BUDGETS,
  DEFAULT_CAPS,
  DEFAULT_LIMITS,
  type AgentRunInput,
  type AttemptLimits,
  type Budgets,
  type RetryStrategy,
  type TimeoutCaps,
} from '../src/domain/run';
import { workflowTools } from '../src/tools/workflow-registry';
import { Approvals } from './approvals';
import { CircuitBreakers } from './circuit-breaker';
import type { HandledRun } from './handlers';
import type { RunIdentity } from './identity';
import type { Ledger } from './ledger';
import type { RunModel, ValidatedCall, Who } from './model';
import { PolicyHolder } from './policy-holder';
import { RunView } from './run-view';
import { Saga } from './steps/compensate';

export abstract class RunCore implements RunModel, HandledRun {
  /** The business run id: the workflow id, the same across continue-as-new. */
  readonly runId = workflowInfo().workflowId;
  readonly tools = workflowTools;
  readonly policy = new PolicyHolder();
  /** Cancelling this scope (`requestCancel`, or Temporal's cancel of the workflow) stops the run's calls. */
  readonly scope = new CancellationScope();
  readonly budgets: Budgets;
  readonly who: Who;
  readonly deadlineAt: string;
  readonly strategy: RetryStrategy;
  readonly approvals: Approvals;
  readonly breakers: CircuitBreakers;
  protected readonly deadlineAtMs: number;
  protected readonly view: RunView;
  protected readonly saga: Saga;
  private readonly caps: TimeoutCaps;
  private readonly limits: AttemptLimits;
  /** Calls holding a place in the tool-call budget while they wait (authorizer, approval, rate limit). */
  private readonly reservedIntents = new Set<string>();
  /** Who the run was started by, as its opening verified it (an agent run carries it across continue-as-new). */
  protected startIdentity: { readonly issuer: string; readonly subject: string } | undefined;

  protected constructor(
    readonly input: AgentRunInput,
    readonly ledger: Ledger,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...input.limits };
    this.caps = { ...DEFAULT_CAPS, ...input.caps };
    this.budgets = { ...DEFAULT_BUDGETS, ...input.budgets };
    this.deadlineAt = input.deadlineAt;
    this.deadlineAtMs = Date.parse(input.deadlineAt);
    this.strategy = input.strategy;
    this.who = { principalId: input.principal.id, tenant: input.principal.tenant };
    this.view = new RunView(this.ledger, this.budgets);
    this.saga = new Saga(this.ledger, this.tools, this.runId, this.who);
    this.breakers = new CircuitBreakers(this.ledger);
    this.approvals = new Approvals(this.ledger, this.show, {
      runId: this.runId,
      ...this.who,
      startedBy: () => this.startIdentity,
    });
  }

  /** Publish the run's state for the UI (search attributes, current details). */
  readonly show = (): void => this.view.publish();
  /** The policy the run decides from now, for the checks on approvers, operators and cancellers. */
  readonly heldPolicy = () => this.policy.current?.document;

  clock(): DeadlineClock {
    return { deadlineAtMs: this.deadlineAtMs, nowMs: Date.now(), caps: this.caps, limits: this.limits };
  }

  reserveIntent(callId: string): boolean {
    if (this.reservedIntents.has(callId)) return true;
    if (this.ledger.projection.intents + this.reservedIntents.size >= this.budgets.maxToolCalls) return false;
    this.reservedIntents.add(callId);
    return true;
  }

  releaseIntent(callId: string): void {
    this.reservedIntents.delete(callId);
  }

  registerCompensation(call: ValidatedCall): void {
    this.saga.register(call);
  }

  retryAccounting() {
    const p = this.ledger.projection;
    return { dependencies: p.dependencies, amplification: retryAmplification(p), circuits: p.circuits };
  }

  /** What a stop other than `completed` does with standing effects; default `compensate`. */
  protected get onAbort(): 'compensate' | 'leave' {
    return this.input.onAbort ?? 'compensate';
  }

  /**
   * Record the run's start from its verified opening: the policy the opening returned is held from then on, and
   * the ledger's `RunCreated` names the identity (or why it was refused). Returns the refusal, if any.
   */
  protected recordOpening(checked: RunIdentity): string | undefined {
    if (checked.ok && checked.policy) this.policy.hold(checked.policy);
    if (checked.ok) this.startIdentity = { issuer: checked.identity.issuer, subject: checked.identity.subject };
    this.ledger.append({
      type: 'RunCreated',
      runId: this.runId,
      ...this.who,
      strategy: this.strategy,
      deadlineAt: this.deadlineAt,
      budgets: this.budgets,
      reducerVersion: REDUCER_VERSION,
      onAbort: this.onAbort,
      identity: checked.ok
        ? {
            verified: true,
            subject: checked.identity.subject,
            issuer: checked.identity.issuer,
            tokenDigest: checked.identity.tokenDigest,
            roles: checked.identity.roles,
          }
        : { verified: false, code: checked.code, reason: checked.reason },
    });
    return checked.ok ? undefined : `${checked.code}: ${checked.reason}`;
  }
}
