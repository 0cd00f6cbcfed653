/**
 * The transport of a function tool: runs the team's `execute` (and `lookup`) in the worker and reads what it did as
 * the same outcomes an HTTP downstream gives, so the recovery table treats both alike:
 *
 * | the function                                   | outcome                                               |
 * |------------------------------------------------|-------------------------------------------------------|
 * | returns a JSON value                           | `ok` (the result, checked as untrusted by the workflow) |
 * | returns a value nested too deep, or a cycle    | `ok`, the depth marker: settled `Result.Invalid`        |
 * | throws `NothingSentError`                      | `rejected` (FAILED), or `unavailable` when retryable    |
 * | was not begun (cancelled, past its deadline)   | `unavailable`: nothing sent                              |
 * | throws anything else, returns a non-JSON value | `response_lost`: it may have acted, the call is UNKNOWN |
 *
 * A reason that names a secret's value has it replaced (`[secret]`) before it can reach history or a log.
 */
import { shallowOrMarker } from '../domain/json-depth';
import type { LookupAnswer } from '../domain/recovery';
import type { DownstreamPromises } from '../domain/transport';
import type { SendOutcome } from './classify';
import { NothingSentError, type FunctionLookup, type ToolContext, type ToolImplementation } from './function-tool';
import { redact } from './secrets';
import {
  declaredRetention,
  reasonOf,
  type AttemptCall,
  type LookupCall,
  type Retention,
  type Transport,
} from './transport';

export class FunctionTransport implements Transport {
  constructor(
    private readonly impl: ToolImplementation,
    private readonly promises: DownstreamPromises,
    /** The secrets the declaration names, already checked present at the worker's start. */
    private readonly secrets: Readonly<Record<string, string>>,
  ) {}

  async send(call: AttemptCall): Promise<SendOutcome> {
    if (call.signal.aborted || Date.now() >= call.deadlineAtMs)
      return { kind: 'unavailable', reason: 'not begun: the attempt was cancelled or reached its deadline' };
    const args = argumentsOf(call);
    if (args === undefined) return { kind: 'unavailable', reason: 'the canonical arguments do not parse; nothing run' };
    // Aborted when the attempt is cancelled or reaches its deadline, whichever comes first.
    const signal = AbortSignal.any([call.signal, AbortSignal.timeout(Math.max(1, call.deadlineAtMs - Date.now()))]);
    let returned: unknown;
    try {
      returned = await this.impl.execute(args, this.context({ ...call, signal }, call.key));
    } catch (err) {
      return this.thrown(err);
    }
    let body: unknown;
    try {
      // The depth first, by a loop: the round trip recurses (src/downstream/depth-guard.ts).
      body = JSON.parse(JSON.stringify(shallowOrMarker(returned ?? null))) as unknown;
    } catch (err) {
      return { kind: 'response_lost', reason: `the function returned a value that is not JSON: ${this.reason(err)}` };
    }
    return { kind: 'ok', status: 200, body, replayed: false, ...receiptIn(body) };
  }

  async lookup(call: LookupCall): Promise<LookupAnswer> {
    if (this.impl.lookup === undefined) return { kind: 'unreachable', reason: 'the function declares no lookup' };
    let answer: FunctionLookup;
    try {
      answer = await this.impl.lookup(call.key, this.context(call, call.key));
    } catch (err) {
      return { kind: 'unreachable', reason: `the lookup threw: ${this.reason(err)}` };
    }
    if (answer?.kind === 'not_found') return { kind: 'not_found', sealed: false };
    if (answer?.kind === 'found') {
      let result: unknown;
      try {
        result = JSON.parse(JSON.stringify(shallowOrMarker(answer.result ?? null))) as unknown;
      } catch {
        return { kind: 'unreachable', reason: 'the lookup found a record that is not JSON' };
      }
      return { kind: 'found', status: answer.status, result, ...receiptIn(result) };
    }
    const why = answer?.kind === 'unknown' ? answer.reason : 'the lookup answered nothing it may answer';
    return { kind: 'unreachable', reason: redact(String(why).slice(0, 300), this.secrets) };
  }

  async retention(): Promise<Retention> {
    return declaredRetention(this.promises.keyRetentionMs);
  }

  private thrown(err: unknown): SendOutcome {
    if (err instanceof NothingSentError) {
      const reason = this.reason(err.message);
      if (err.retryable) return { kind: 'unavailable', reason: `nothing sent: ${reason}` };
      return {
        kind: 'rejected',
        status: 422,
        code: 'Downstream.Rejected',
        reason: err.code,
        body: { error: 'Downstream.Rejected', reason: err.code, message: reason },
      };
    }
    return { kind: 'response_lost', reason: `the function threw after it may have acted: ${this.reason(err)}` };
  }

  private reason(err: unknown): string {
    return redact(typeof err === 'string' ? err.slice(0, 300) : reasonOf(err), this.secrets);
  }

  private context(call: AttemptCall | LookupCall, key: string): ToolContext {
    const attempt = 'attempt' in call ? call : undefined;
    const signal = call.signal ?? AbortSignal.timeout(10_000);
    const ctx = {
      operationKey: key,
      argumentsHash: call.intent.argumentsHash,
      attempt: attempt?.attempt ?? 0,
      fence: attempt?.fence ?? 0,
      signal,
      deadline: new Date(attempt?.deadlineAtMs ?? Date.now() + 10_000),
      principal: { id: call.intent.principalId, tenant: call.intent.tenant },
      tenant: call.intent.tenant,
      runId: call.intent.runId,
      logicalCallId: call.intent.logicalCallId,
    };
    // Not enumerable: a function that logs or serializes its context does not write the secrets with it.
    return Object.defineProperty(ctx, 'secrets', {
      value: Object.freeze({ ...this.secrets }),
      enumerable: false,
    }) as ToolContext;
  }
}

/** The call's arguments as the tool parses them: the canonical body without its tenant (the signer checked it). */
function argumentsOf(call: AttemptCall): unknown {
  const { tenant: _tenant, ...rest } = call.body as Record<string, unknown>;
  const parsed = call.tool.args.safeParse(rest);
  return parsed.success ? parsed.data : undefined;
}

/** The receipt a result names: its `receipt`, else its `id`. */
function receiptIn(body: unknown): { receipt?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const { receipt, id } = body as { receipt?: unknown; id?: unknown };
  if (typeof receipt === 'string') return { receipt };
  return typeof id === 'string' ? { receipt: id } : {};
}
