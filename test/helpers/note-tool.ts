/** A function tool (`note_add`, service `notes`) and one attempt of it, as the transport tests send it. */
import { z } from 'zod';
import { defineTool } from '../../src/domain/tool';
import type { AttemptCall } from '../../src/downstream/transport';
import { attemptCall } from './attempt-call';

export const noteTool = defineTool({
  name: 'note_add',
  version: 1,
  description: 'add a note',
  args: z.object({ text: z.string() }).strict(),
  result: z.object({ id: z.string() }),
  maxArgumentBytes: 1000,
  maxResultBytes: 1000,
  service: 'notes',
  transport: { kind: 'function', secrets: ['NOTES_KEY'], promises: { lookup: 'by_key' } },
  effectScope: 'notes.add',
  idempotency: 'reconcilable_by_lookup',
  canonicalize: (a, ctx) => ({ tenant: ctx.tenant, text: a.text }),
  authorization: (_a, ctx) => ({ action: 'notes.add', resource: `${ctx.tenant}/notes/x`, resourceTenant: ctx.tenant }),
  compensation: { kind: 'none' },
  summary: () => 'note',
  promote: (r) => ({ id: r.id }),
});

const body = { tenant: 'acme', text: 'hello' };

/** Attempt 2 (fence 7) of `note_add` for tenant acme, with `over` applied. */
export function noteCall(over: Partial<AttemptCall> = {}): AttemptCall {
  const ids = { runId: 'run-1', providerCallId: 'p1', logicalCallId: 'lc_1_x', key: 'op_1' };
  return attemptCall(noteTool, body, ids, { attempt: 2, fence: 7, ...over });
}
