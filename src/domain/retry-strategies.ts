/**
 * The retry strategies a run may ask for, each declared once with what it decides: the key each attempt sends,
 * the capability's key mode, whether it prefers a lookup before a resend, and what the call runner does after a
 * dispatch brought no answer. What a retry may actually do is the recovery table's (src/domain/recovery.ts): it
 * narrows a strategy by the tool's idempotency contract and what its downstream promises. None of the readers
 * tests a strategy by its name.
 *
 * The runtime declares two, and both settle a lost outcome only by evidence. The table is closed to a user: a run
 * that names any other strategy is refused where it enters (the client, the workflow's input check, the dispatch
 * activity), typed, with nothing sent. Code inside this repository can install more (`installStrategy`, not part
 * of the package's exports): the fault lab installs its naive loop this way, into its own workers and its own
 * workflow bundle (lab/strategies/).
 */
import type { Observation } from './activity-contracts';
import type { LedgerEventBody } from './ledger-events';
import type { RetryStrategy } from './strategy-names';

export type { RetryStrategy } from './strategy-names';

/** What a capability lets the holder send: the operation key only, or also keys derived from it (`<key>~…`). */
export type KeyMode = 'exact' | 'derived';

/** A dispatch that may have reached the downstream brought no answer: what the call runner is asked to do. */
export interface MaybeSent {
  /** The workflow dispatch that brought no answer (1 for the first). */
  readonly dispatch: number;
  /** The call, as an observation carries it. */
  readonly call: Omit<Observation, 'state'>;
  /** Why its outcome is unknown. */
  readonly cause: string;
  /** Record an event in the run's ledger: how a strategy that settles the call itself leaves its record. */
  record(event: LedgerEventBody): void;
}

/**
 * After a dispatch that may have sent and brought no answer: ask the downstream by key (and seal it), the only
 * honest settlement and the one both runtime strategies take; dispatch again; or the observation the call
 * leaves with, recorded by the strategy itself.
 */
export type AfterMaybeSent = 'reconcile' | 'send_again' | Observation;

export interface StrategyDeclaration {
  readonly description: string;
  /** The recovery table narrows what a retry may do by the tool's contract (recovery.ts); false only in the lab. */
  readonly narrowedByContract: boolean;
  /** The key mode of the capability a call under this strategy is issued. */
  readonly keyMode: KeyMode;
  /** The key workflow dispatch `dispatch` (and Temporal attempt `attempt`) of a call sends. */
  keyFor(operationKey: string, dispatch: number, attempt?: number): string;
  /** An attempt after a possible send asks the downstream by key first (where it can be asked), then resends. */
  readonly lookUpBeforeResend: boolean;
  /** What the call runner does after a dispatch may have sent and brought no answer. */
  afterMaybeSent(unknown: MaybeSent): AfterMaybeSent;
}

const sameKey = (operationKey: string): string => operationKey;
const reconcile = (): AfterMaybeSent => 'reconcile';

export const STRATEGIES = {
  check_receipt: {
    description: 'reconcile by key (ask the downstream for the receipt) before any retry',
    narrowedByContract: true,
    keyMode: 'exact',
    keyFor: sameKey,
    lookUpBeforeResend: true,
    afterMaybeSent: reconcile,
  },
  same_key_replay: {
    description: 'retry under the same key; the downstream idempotency record returns the retained result',
    narrowedByContract: true,
    keyMode: 'exact',
    keyFor: sameKey,
    lookUpBeforeResend: false,
    afterMaybeSent: reconcile,
  },
} as const satisfies Record<string, StrategyDeclaration>;

const installed = new Map<string, StrategyDeclaration>();

/**
 * Install a strategy in this process (or this workflow bundle: a module of the bundle installs it as it loads).
 * Not part of the package's exports. The runtime's own strategies cannot be replaced.
 */
export function installStrategy(name: string, declaration: StrategyDeclaration): void {
  if (Object.hasOwn(STRATEGIES, name)) throw new Error(`strategy ${name} is the runtime's own; it cannot be replaced`);
  installed.set(name, declaration);
}

/** The strategies this process (or this bundle) serves: the runtime's two, then any installed. */
export function strategyNames(): readonly RetryStrategy[] {
  return [...Object.keys(STRATEGIES), ...installed.keys()] as RetryStrategy[];
}

/** Whether `name` is a strategy this process (or this bundle) serves. */
export function isServedStrategy(name: unknown): name is RetryStrategy {
  return typeof name === 'string' && strategyOf(name) !== undefined;
}

/** The declaration of `name`, or undefined when this process (or bundle) does not serve it. */
export function strategyOf(name: string): StrategyDeclaration | undefined {
  return Object.hasOwn(STRATEGIES, name) ? STRATEGIES[name as keyof typeof STRATEGIES] : installed.get(name);
}

/** The capability key mode a strategy needs. */
export function keyModeFor(strategy: RetryStrategy): KeyMode {
  return strategyOf(strategy)?.keyMode ?? 'exact';
}

/**
 * The key attempt `attempt` of workflow dispatch `dispatch` sends: one rule for the workflow (which records the
 * dispatch's key, attempt 1) and the activity (which sends each attempt's). The runtime's strategies send the
 * operation key itself on every attempt; only the lab's naive loop derives a fresh one.
 */
export function attemptKey(strategy: RetryStrategy, operationKey: string, dispatch: number, attempt = 1): string {
  return (strategyOf(strategy) ?? STRATEGIES.check_receipt).keyFor(operationKey, dispatch, attempt);
}
