/**
 * An MCP tool as one more transport (src/downstream/transport.ts): it sends `tools/call` on the worker's connection
 * to the tool's server and reads what came back as the outcomes every transport gives, so the one recovery table
 * (src/domain/recovery.ts) decides what follows a lost answer, never this file:
 *
 * | the call (call-tool.ts)                         | outcome                                                  |
 * |-------------------------------------------------|----------------------------------------------------------|
 * | the tool is not listed as declared (drift.ts)   | `rejected`: refused before sending, until re-imported    |
 * | no listing read yet, `not_sent`                 | `unavailable`: nothing sent, Temporal retries            |
 * | `answered`                                      | `ok` with the bounded answer body (result.ts)            |
 * | `tool_error`, declared `onToolError: no_effect` | `rejected`: the team says an error changes nothing       |
 * | `tool_error`, declared `onToolError: unknown`   | `response_lost`: it ran, and may have acted              |
 * | `unknown`                                       | `response_lost`                                          |
 *
 * A lookup is the declared read of the same server (`lookup` of the declaration), with the call's own arguments: it
 * finds the state the call meant (`found.textEquals`), which is `by_metadata` evidence, not a record of the key.
 */
import type { Json } from '../../domain/canonical';
import type { LookupAnswer } from '../../domain/recovery';
import type { McpBinding } from '../../tools/mcp/declare';
import type { McpToolDeclaration } from '../../tools/mcp/tool-set';
import type { SendOutcome } from '../classify';
import { declaredRetention, type AttemptCall, type LookupCall, type Retention, type Transport } from '../transport';
import { callTool, type McpCallOutcome } from './call-tool';
import type { McpConnection } from './connection';
import { driftOf, driftReason } from './drift';
import { answerBody } from './result';

/** The largest lookup answer read (its text is compared, never recorded). */
const MAX_LOOKUP_BYTES = 1_048_576;

export class McpTransport implements Transport {
  constructor(
    private readonly conn: McpConnection,
    private readonly binding: McpBinding,
  ) {}

  private get decl(): McpToolDeclaration {
    return this.binding.declaration;
  }

  async send(call: AttemptCall): Promise<SendOutcome> {
    const drift = driftOf(this.decl, this.conn.tools());
    if (drift.kind === 'unknown')
      return { kind: 'unavailable', reason: driftReason(this.binding.server, this.decl, drift) };
    if (drift.kind !== 'matches') return refused('Mcp.ToolDrift', driftReason(this.binding.server, this.decl, drift));
    const args = argumentsOf(call.body);
    if (args === undefined)
      return { kind: 'unavailable', reason: 'the canonical arguments are not an object; nothing sent' };
    const outcome = await callTool(this.conn, {
      name: this.decl.mcpName,
      arguments: args,
      operation: {
        key: call.key,
        argumentsHash: call.intent.argumentsHash,
        fence: call.fence,
        intentAt: call.intentAt,
      },
      timeoutMs: Math.min(this.conn.callTimeoutMs, Math.max(1, call.deadlineAtMs - Date.now())),
      signal: call.signal,
    });
    return this.read(outcome);
  }

  async lookup(call: LookupCall): Promise<LookupAnswer> {
    const lookup = this.decl.lookup;
    if (lookup === undefined) return { kind: 'unreachable', reason: `${this.decl.name} declares no lookup` };
    const callArgs = call.body === undefined ? undefined : argumentsOf(call.body);
    if (callArgs === undefined)
      return { kind: 'unreachable', reason: 'the lookup needs the call arguments, and they are not an object' };
    const readArgs = fill(lookup.arguments, callArgs);
    const expected = fill(lookup.found.textEquals, callArgs);
    if (readArgs === undefined || typeof readArgs !== 'object' || readArgs === null || Array.isArray(readArgs))
      return { kind: 'unreachable', reason: 'the lookup arguments name a field the call does not have' };
    if (typeof expected !== 'string')
      return { kind: 'unreachable', reason: 'the lookup expects a text the call arguments do not give' };
    const outcome = await callTool(this.conn, {
      name: lookup.tool,
      arguments: readArgs,
      ...(call.signal !== undefined ? { signal: call.signal } : {}),
    });
    switch (outcome.kind) {
      case 'answered': {
        const body = answerBody(outcome.result, MAX_LOOKUP_BYTES);
        if ('withheld' in body) return { kind: 'unreachable', reason: `the lookup answer: ${body.withheld}` };
        if (body.text !== expected) return { kind: 'not_found', sealed: false };
        return {
          kind: 'found',
          status: 'completed',
          result: { isError: false, text: '', blocks: {}, reconciled: true },
        };
      }
      // The read ran and reported an error (a file that does not exist): the state the call meant is not there.
      case 'tool_error':
        return outcome.result !== undefined
          ? { kind: 'not_found', sealed: false }
          : { kind: 'unreachable', reason: `the lookup was refused: MCP error ${outcome.error?.code ?? '?'}` };
      case 'unknown':
      case 'not_sent':
        return { kind: 'unreachable', reason: `the lookup got no answer: ${outcome.why}` };
    }
  }

  async retention(): Promise<Retention> {
    return declaredRetention(this.binding.keyRetentionMs);
  }

  private read(outcome: McpCallOutcome): SendOutcome {
    switch (outcome.kind) {
      case 'answered':
        return { kind: 'ok', status: 200, body: answerBody(outcome.result, this.decl.maxResultBytes), replayed: false };
      case 'tool_error': {
        const what = outcome.result !== undefined ? 'the tool reported an error' : `MCP error ${outcome.error?.code}`;
        if (this.decl.onToolError === 'no_effect') return refused('Mcp.ToolError', `${what} (declared: no effect)`);
        return { kind: 'response_lost', reason: `${what}; it may have acted (declared onToolError: unknown)` };
      }
      case 'unknown':
        return { kind: 'response_lost', reason: outcome.why };
      case 'not_sent':
        return { kind: 'unavailable', reason: outcome.why };
    }
  }
}

function refused(reason: string, message: string): SendOutcome {
  return {
    kind: 'rejected',
    status: 422,
    code: 'Downstream.Rejected',
    reason,
    body: { error: 'Downstream.Rejected', reason, message },
  };
}

/** The arguments the server is sent: the canonical ones without the run's tenant (bound in the hash, not sent). */
function argumentsOf(body: Json): Record<string, Json> | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { tenant: _tenant, ...args } = body;
  return args;
}

/** `template` with each `{ "$arg": "field" }` leaf replaced by the call's argument; undefined when one is missing. */
export function fill(template: Json, args: Readonly<Record<string, Json>>): Json | undefined {
  if (Array.isArray(template)) {
    const out: Json[] = [];
    for (const item of template) {
      const v = fill(item, args);
      if (v === undefined) return undefined;
      out.push(v);
    }
    return out;
  }
  if (typeof template !== 'object' || template === null) return template;
  const keys = Object.keys(template);
  if (keys.length === 1 && keys[0] === '$arg') {
    const field = template['$arg'];
    return typeof field === 'string' && Object.hasOwn(args, field) ? args[field] : undefined;
  }
  const out: Record<string, Json> = {};
  for (const k of keys) {
    const v = fill(template[k] as Json, args);
    if (v === undefined) return undefined;
    out[k] = v;
  }
  return out;
}
