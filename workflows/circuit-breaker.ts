/**
 * A circuit breaker per dependency, kept in workflow state: after `threshold` consecutive calls to a service
 * that did not succeed (UNKNOWN or failed), the run stops dispatching to it for `cooldownMs` and records why.
 */
import type { Ledger } from './ledger';

export class CircuitBreakers {
  private readonly consecutive = new Map<string, number>();

  constructor(
    private readonly ledger: Ledger,
    private readonly threshold = 3,
    private readonly cooldownMs = 30_000,
  ) {}

  /** The reason a dispatch to `service` is refused now, or null when its circuit is closed. */
  openReason(service: string): string | null {
    const until = this.ledger.projection.circuits[service];
    if (until === undefined || Date.parse(until) <= Date.now()) return null;
    return `circuit for ${service} is open until ${until}`;
  }

  record(service: string, succeeded: boolean, detail: string): void {
    const n = succeeded ? 0 : (this.consecutive.get(service) ?? 0) + 1;
    this.consecutive.set(service, n);
    if (n >= this.threshold) {
      this.consecutive.set(service, 0);
      const until = new Date(Date.now() + this.cooldownMs).toISOString();
      this.ledger.append({
        type: 'CircuitOpened',
        service,
        reason: `${n} consecutive calls did not succeed; last: ${detail}`,
        until,
      });
    }
  }
}
