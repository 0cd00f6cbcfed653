/**
 * In-memory downstreams of the workflow tier's function tools, SDK-shaped: a ledger that dedupes a key (and can be
 * asked by it), and a mail API that can only be asked. Each counts its own effects; a test can hold a send in
 * flight and let it land later, as a request on the wire would.
 */
export interface LedgerPosting {
  readonly id: string;
  readonly account: string;
  readonly amountMinor: number;
}

/** A ledger SDK: `post` under an idempotency key returns the first posting for a repeat of the key. */
export class FakeLedgerApi {
  readonly postings = new Map<string, LedgerPosting>();
  /** Every call of `post`, replays included. */
  calls = 0;
  lookups = 0;
  /** The API key every request must carry. */
  constructor(readonly apiKey: string) {}

  async post(
    req: { account: string; amountMinor: number },
    opts: { idempotencyKey: string; apiKey: string; signal: AbortSignal },
  ): Promise<{ posting: LedgerPosting; replayed: boolean }> {
    if (opts.apiKey !== this.apiKey) throw new Error('401 invalid api key');
    opts.signal.throwIfAborted();
    this.calls += 1;
    const earlier = this.postings.get(opts.idempotencyKey);
    if (earlier) return { posting: earlier, replayed: true };
    const posting = { id: `post_${this.postings.size + 1}`, account: req.account, amountMinor: req.amountMinor };
    this.postings.set(opts.idempotencyKey, posting);
    return { posting, replayed: false };
  }

  async find(key: string): Promise<LedgerPosting | undefined> {
    this.lookups += 1;
    return this.postings.get(key);
  }
}

/** A mail API: a send may be held on the wire and land later; it can be asked by key, it neither dedupes nor seals. */
export class FakeMailApi {
  readonly delivered = new Map<string, { id: string; to: string }>();
  private readonly inFlight = new Map<string, { id: string; to: string }>();
  sends = 0;
  lookups = 0;
  /** When true, the next send stays on the wire (its caller sees it time out) until `land` or `drop`. */
  holdNext = false;
  private lookedUp: Array<() => void> = [];

  async send(req: { to: string }, key: string, signal: AbortSignal): Promise<{ id: string; to: string }> {
    this.sends += 1;
    const message = { id: `msg_${this.sends}`, to: req.to };
    if (this.holdNext) {
      this.holdNext = false;
      this.inFlight.set(key, message);
      // The caller gives up waiting; the message is still on the wire.
      await new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('timed out'))));
    }
    this.delivered.set(key, message);
    return message;
  }

  /** Every held message arrives now. */
  landAll(): void {
    for (const [key, m] of this.inFlight) this.delivered.set(key, m);
    this.inFlight.clear();
  }

  async find(key: string): Promise<{ id: string; to: string } | undefined> {
    this.lookups += 1;
    const found = this.delivered.get(key);
    for (const wake of this.lookedUp.splice(0)) wake();
    return found;
  }

  /** Resolves at the next lookup (an event to wait on, not a sleep). */
  nextLookup(): Promise<void> {
    return new Promise((resolve) => this.lookedUp.push(resolve));
  }
}
