/**
 * The lines of scripts/cluster-authz.ts: each call against the cluster's frontend is expected to be refused (a
 * PermissionDenied from its authorizer), accepted, or let past the authorizer (an answer from the server behind
 * it), and each line says which it was. A line that is not as expected counts as a failure.
 */
import type { Client, Connection } from '@temporalio/client';
import { frontendRefusal, GRPC_PERMISSION_DENIED } from '../../host/client/frontend-refusal';

/** gRPC status codes the checks name. */
export const GRPC = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: GRPC_PERMISSION_DENIED,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
} as const;

const CODE_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(GRPC).map(([name, code]) => [code, name]),
);

/** A caller of the frontend: one connection with one token (none: anonymous). */
export interface Caller {
  readonly connection: Connection;
  readonly client: Client;
  readonly token?: string;
}

export function grpcCode(err: unknown): number | undefined {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

/** The frontend's reason for a PermissionDenied, else the error's message. */
export function reasonOf(err: unknown): string {
  const refusal = frontendRefusal(err);
  if (refusal !== undefined) return refusal;
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const details = (e as { details?: unknown }).details;
    if (typeof details === 'string' && details !== '') return details;
  }
  return (err as Error).message;
}

export class AuthzCheck {
  failures = 0;

  constructor(private readonly out: (line: string) => void) {}

  say(line: string): void {
    this.out(line);
  }

  fail(label: string, problem: string): void {
    this.failures++;
    this.say(`  FAIL     ${label}: ${problem}`);
  }

  /** Must be refused with PermissionDenied by the frontend. */
  async refused(label: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
      this.fail(label, 'accepted');
    } catch (err) {
      if (grpcCode(err) === GRPC.PERMISSION_DENIED)
        this.say(`  refused  ${label}: PermissionDenied (${reasonOf(err)})`);
      else this.fail(label, `not a PermissionDenied (${reasonOf(err)})`);
    }
  }

  /** Must succeed (and pass `check` on its result). */
  async accepted<T>(
    label: string,
    fn: () => Promise<T>,
    check: (r: T) => string | undefined | Promise<string | undefined> = () => undefined,
  ): Promise<void> {
    try {
      const problem = await check(await fn());
      if (problem === undefined) this.say(`  accepted ${label}`);
      else this.fail(label, problem);
    } catch (err) {
      this.fail(
        label,
        `${grpcCode(err) === GRPC.PERMISSION_DENIED ? 'PermissionDenied' : 'failed'} (${reasonOf(err)})`,
      );
    }
  }

  /**
   * Must get past the frontend's authorizer: it succeeds, or the server behind it answers with one of `codes`
   * (a NotFound, an AlreadyExists: the call reached the server and was judged there). A PermissionDenied, or any
   * other error (a dead port), fails the line.
   */
  async passes(label: string, fn: () => Promise<unknown>, codes: readonly number[] = [GRPC.NOT_FOUND]): Promise<void> {
    try {
      await fn();
      this.say(`  accepted ${label}`);
    } catch (err) {
      const code = grpcCode(err);
      if (code !== undefined && codes.includes(code))
        this.say(`  accepted ${label}: past the authorizer (${CODE_NAMES[code] ?? code}: ${reasonOf(err)})`);
      else this.fail(label, reasonOf(err));
    }
  }

  /** Must hold now (a fact about the cluster after the calls above). */
  async holds(label: string, fn: () => Promise<string | undefined>): Promise<void> {
    try {
      const problem = await fn();
      if (problem === undefined) this.say(`  holds    ${label}`);
      else this.fail(label, problem);
    } catch (err) {
      this.fail(label, reasonOf(err));
    }
  }
}
