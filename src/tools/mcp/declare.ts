/**
 * MCP tool declarations (tool-set.ts) as Ledgerloop tools: the same pipeline as every other tool (validate, key,
 * authorize at dispatch, dispatch, settle), with what the team declared, never what the server hints:
 *
 * | declared                 | the tool                                                                      |
 * |--------------------------|-------------------------------------------------------------------------------|
 * | `effect: read`           | no compensation; a lost response leaves nothing to find                       |
 * | `effect: write`          | irreversible (no offset is known); a lost response is reconciled by `lookup`,  |
 * |                          | else it waits for an operator                                                  |
 * | `contract`               | what a retry may do (src/domain/retry-contract.ts)                             |
 * | `approval: required`     | every call waits for a human (a policy rule `approval: never` may waive it)    |
 * | `inputSchema`            | the proposal's check, in the sandbox (json-schema.ts); the model is offered it |
 * | `outputSchema`           | the structured result's check; without one, only text passes, bounded          |
 *
 * Each tool also carries its binding (`mcp`): the worker reads it to reach the server, the workflow never does.
 */
import { z } from 'zod';
import type { Json } from '../../domain/canonical';
import type { AnyTool, ToolDefinition } from '../../domain/tool';
import { compileJsonSchema, McpSchemaError } from './json-schema';
import { McpToolSetError, parseToolSet, type McpToolDeclaration, type McpToolSet } from './tool-set';

/** What an answered MCP call reaches the workflow as (src/downstream/mcp/result.ts writes it): untrusted data. */
export interface McpAnswerBody {
  /** The tool's own `isError`: it ran and reported an error. */
  readonly isError: boolean;
  /** The text blocks, joined by a newline. */
  readonly text: string;
  /** The structured content, when the tool returned one. */
  readonly structured?: Json;
  /** The other blocks (images, audio, resources), counted by type: never their bytes. */
  readonly blocks: Readonly<Record<string, number>>;
  /**
   * The call's answer was lost and its declared lookup found the state it meant (src/downstream/mcp/mcp-transport.ts):
   * there is no answer to check against the output schema, and the model is told so.
   */
  readonly reconciled?: true;
}

/** Where an MCP tool goes: its server (the tool's `service`), its name there, and its whole declaration. */
export interface McpBinding {
  readonly server: string;
  readonly declaration: McpToolDeclaration;
  /** How long the server dedupes a same-key request, when the tool set declares it. */
  readonly keyRetentionMs?: number;
}

/** A Ledgerloop tool made from an MCP declaration. */
export type McpTool = ToolDefinition<Record<string, Json>, McpAnswerBody> & { readonly mcp: McpBinding };

/** Whether `tool` was made from an MCP declaration. */
export function isMcpTool(tool: AnyTool | undefined): tool is McpTool {
  const binding = (tool as { mcp?: unknown } | undefined)?.mcp;
  return typeof binding === 'object' && binding !== null && 'declaration' in binding;
}

const BLOCKS = z.record(z.string(), z.number().int().nonnegative());

function resultSchema(decl: McpToolDeclaration, where: string): z.ZodType<McpAnswerBody> {
  const base = z
    .object({ isError: z.boolean(), text: z.string(), blocks: BLOCKS, reconciled: z.literal(true).optional() })
    .strict();
  if (decl.outputSchema === undefined)
    return base.extend({ structured: z.unknown().optional() }) as unknown as z.ZodType<McpAnswerBody>;
  const output = compileJsonSchema(decl.outputSchema, `${where} outputSchema`);
  // With an output schema, the structured content must be there and match it (an error answer carries none).
  return base.extend({ structured: z.unknown().optional() }).superRefine((body, ctx) => {
    if (body.isError || body.reconciled === true) return;
    const value = body.structured ?? jsonText(body.text);
    if (value === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'the tool declares an output schema but returned no structured content',
      });
      return;
    }
    for (const issue of output.check(value))
      ctx.addIssue({ code: 'custom', message: `structured content ${issue.path}: ${issue.message}` });
  }) as unknown as z.ZodType<McpAnswerBody>;
}

/** The text parsed as JSON (a server older than structured content writes it there), or undefined. */
function jsonText(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/** The fields of a validated answer the next planning step may see: its structured content, else its text. */
function promote(decl: McpToolDeclaration, body: McpAnswerBody): Json {
  const data: Record<string, Json> = { isError: body.isError };
  if (body.reconciled === true)
    return { ...data, reconciled: true, text: 'the answer was lost; a lookup found the effect' };
  if (decl.outputSchema !== undefined && !body.isError)
    data['structured'] = body.structured ?? jsonText(body.text) ?? null;
  else data['text'] = body.text;
  const other = Object.keys(body.blocks);
  if (other.length > 0) data['blocks'] = { ...body.blocks };
  return data;
}

/** One declaration as a tool. Throws `McpToolSetError` when a schema cannot be checked faithfully. */
function mcpTool(set: McpToolSet, decl: McpToolDeclaration): McpTool {
  const where = `${set.server}.${decl.mcpName}`;
  let args: z.ZodType<unknown>;
  let result: z.ZodType<McpAnswerBody>;
  try {
    args = compileJsonSchema(decl.inputSchema, `${where} inputSchema`).zod;
    result = resultSchema(decl, where);
  } catch (err) {
    if (err instanceof McpSchemaError) throw new McpToolSetError(`tool ${decl.name}: ${err.message}`);
    throw err;
  }
  const action = decl.action ?? `mcp.${set.server}.${decl.mcpName}`;
  const binding: McpBinding = {
    server: set.server,
    declaration: decl,
    ...(set.keyRetentionMs !== undefined ? { keyRetentionMs: set.keyRetentionMs } : {}),
  };
  return {
    name: decl.name,
    version: decl.version,
    description: decl.description,
    args: args as z.ZodType<Record<string, Json>>,
    result,
    maxArgumentBytes: decl.maxArgumentBytes,
    maxResultBytes: decl.maxResultBytes,
    service: set.server,
    // Where it goes, and what the server promises: only what the tool set declares (src/domain/transport.ts).
    transport: {
      kind: 'mcp',
      tool: decl.mcpName,
      ...(set.keyRetentionMs !== undefined ? { keyRetentionMs: set.keyRetentionMs } : {}),
      ...(decl.lookup !== undefined ? { lookup: true } : {}),
    },
    effectScope: action,
    idempotency: decl.contract,
    // The arguments are sent as proposed (JSON Schema has no canonical form to impose); the tenant binds them to
    // the run's tenant in the hash and the key.
    canonicalize: (a, ctx) => ({ ...a, tenant: ctx.tenant }),
    authorization: (_a, ctx) => ({ action, resource: `${ctx.tenant}/mcp/${set.server}`, resourceTenant: ctx.tenant }),
    compensation: decl.effect === 'read' ? { kind: 'none' } : { kind: 'irreversible' },
    invariants: (a) =>
      typeof a !== 'object' || a === null || Array.isArray(a)
        ? 'MCP arguments are a JSON object'
        : Object.hasOwn(a, 'tenant')
          ? 'an argument named "tenant" is reserved for the run\'s tenant'
          : null,
    ...(decl.approval === 'required'
      ? { approval: () => `${where} is declared to need a human approval (${approvalWhy(decl)})` }
      : {}),
    // Names only: argument values may be anything, and the summary is shown in the Temporal UI.
    summary: (a) =>
      `mcp ${where} (${Object.keys(a ?? {})
        .sort()
        .join(', ')
        .slice(0, 120)})`,
    promote: (r) => promote(decl, r),
    mcp: binding,
  };
}

function approvalWhy(decl: McpToolDeclaration): string {
  if (decl.hints.destructiveHint === true) return 'the server hints it is destructive';
  if (Object.keys(decl.hints).length === 0) return 'the server gives no hints';
  return 'the team says so';
}

/** The tools of a tool set file (checked with `parseToolSet`). Throws `McpToolSetError`. */
export function mcpTools(value: unknown, where?: string): McpTool[] {
  const set = parseToolSet(value, where);
  return set.tools.map((decl) => mcpTool(set, decl));
}
