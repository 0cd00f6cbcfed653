/**
 * The names a run's `strategy` may take: the runtime's two. Code that installs a strategy of its own
 * (retry-strategies.ts, `installStrategy`) adds its name here by declaration merging
 * (`declare module '…/strategy-names' { interface StrategyNames { name: true } }`), so its own code type-checks;
 * the package's types know only these two.
 */
export interface StrategyNames {
  check_receipt: true;
  same_key_replay: true;
}

export type RetryStrategy = keyof StrategyNames;
