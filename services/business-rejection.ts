/** The typed business refusal a service's `apply` throws (see `IdempotencyStore.commit`). */

/** Options of a `BusinessRejection`. */
export interface BusinessRejectionOptions {
  /**
   * Operation keys to seal in the same transaction that retains the rejection, when they have no record yet.
   * A compensation refused because its forward key never committed seals that key, so a late forward request
   * can no longer commit and the rejection ("nothing to compensate") stays true.
   */
  readonly sealKeys?: readonly string[];
}

/** A typed business refusal thrown by `apply`: recorded as a retained `failed` record, nothing committed. */
export class BusinessRejection extends Error {
  override readonly name = 'BusinessRejection';
  readonly sealKeys: readonly string[];
  constructor(
    /** A stable reason code such as `Wallet.InsufficientFunds`. */
    readonly reason: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
    options: BusinessRejectionOptions = {},
  ) {
    super(message);
    this.sealKeys = options.sealKeys ?? [];
  }
}
