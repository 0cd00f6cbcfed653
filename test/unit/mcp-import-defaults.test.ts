/**
 * Annotations are untrusted hints: they only pick the import's defaults, every default errs towards a human, and
 * the team's committed declaration wins. Each refusal has its positive control beside it.
 */
import { Failure } from '../../src/domain/failures';
import { planResend, reconcileRule } from '../../src/domain/recovery';
import { STRATEGIES } from '../../src/domain/retry-strategies';
import { promisesOf } from '../../src/domain/transport';
import { mcpTools } from '../../src/tools/mcp/declare';
import type { ListedTool } from '../../src/tools/mcp/digest';
import { importedDeclaration } from '../../src/tools/mcp/import-defaults';
import { MCP_TOOL_SET_FORMAT, type McpToolDeclaration } from '../../src/tools/mcp/tool-set';

const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
const listed = (name: string, annotations?: Record<string, boolean>): ListedTool => ({
  name,
  inputSchema: schema,
  ...(annotations !== undefined ? { annotations } : {}),
});
const toolOf = (decl: McpToolDeclaration) =>
  mcpTools({ format: MCP_TOOL_SET_FORMAT, server: 'srv', tools: [decl] })[0]!;
const ctx = { tenant: 't1' } as Parameters<NonNullable<ReturnType<typeof toolOf>['approval']>>[1];

/** What the one recovery table decides for attempt `attempt` of the tool, nothing to look up or resend under. */
const attemptOf = (decl: McpToolDeclaration, attempt: number) => {
  const tool = toolOf(decl);
  return planResend(
    {
      contract: tool.idempotency,
      promises: promisesOf(tool),
      strategy: STRATEGIES.check_receipt,
      attempt,
      dispatch: 1,
      firstSentAtMs: 0,
      nowMs: 1_000,
    },
    {
      retention: async () => ({ unreadable: 'none declared' }),
      lookup: async () => ({ kind: 'unreachable', reason: 'no lookup' }),
    },
  );
};

test('a tool with no annotations imports as a write that waits for approval, contract none', () => {
  const decl = importedDeclaration('srv', listed('do_it'));
  expect(decl).toMatchObject({ effect: 'write', contract: 'none', approval: 'required', hints: {} });
  expect(toolOf(decl).approval?.({ q: 'x' }, ctx)).toMatch(/gives no hints/);
});

test('positive control: a read-only hint imports as a read with no approval', () => {
  const decl = importedDeclaration('srv', listed('peek', { readOnlyHint: true }));
  expect(decl).toMatchObject({ effect: 'read', contract: 'none', approval: 'none' });
  expect(toolOf(decl).approval).toBeUndefined();
});

test('a destructive hint waits for approval; a hint that it is not destructive does not', () => {
  expect(importedDeclaration('srv', listed('rm', { destructiveHint: true })).approval).toBe('required');
  expect(importedDeclaration('srv', listed('add', { destructiveHint: false })).approval).toBe('none');
});

test('an idempotent hint is idempotent_by_key only when the team confirms it', () => {
  const hinted = listed('put', { idempotentHint: true });
  expect(importedDeclaration('srv', hinted).contract).toBe('none');
  expect(importedDeclaration('srv', hinted, { confirmIdempotent: ['put'] }).contract).toBe('idempotent_by_key');
});

test("a no-hint tool's lost response is never resent and has no lookup: it goes to an operator", async () => {
  const decl = importedDeclaration('srv', listed('do_it'));
  await expect(attemptOf(decl, 2)).resolves.toMatchObject({ kind: 'refuse', code: Failure.DispatchNoResend });
  expect(reconcileRule(promisesOf(toolOf(decl)))).toEqual({ lookUp: false, seal: false });
});

test('positive control: a first attempt of the same tool is sent', async () => {
  const first = await attemptOf(importedDeclaration('srv', listed('do_it')), 1);
  expect(first).toEqual({ kind: 'send', resend: false });
});

test("the team's declaration wins over the server's hints", () => {
  const decl = { ...importedDeclaration('srv', listed('do_it')), approval: 'none' as const, effect: 'read' as const };
  const tool = toolOf(decl);
  expect(tool.approval).toBeUndefined();
  expect(tool.compensation).toEqual({ kind: 'none' });
});

test('a write with an output schema accepts the answer its lookup reconciled, and only that one without content', () => {
  const decl = {
    ...importedDeclaration('srv', listed('put')),
    outputSchema: { type: 'object', properties: { content: { type: 'string' } }, required: ['content'] },
  };
  const tool = toolOf(decl);
  expect(tool.result.safeParse({ isError: false, text: '', blocks: {}, reconciled: true }).success).toBe(true);
  // Positive control: the same empty answer, not reconciled, fails the declared output schema.
  expect(tool.result.safeParse({ isError: false, text: '', blocks: {} }).success).toBe(false);
});
