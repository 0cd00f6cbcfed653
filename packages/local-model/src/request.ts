/**
 * A Chat Completions request body, checked and normalised. Everything the server cannot honour is refused with a
 * typed 400 naming the parameter (`n` above 1, logprobs, a `response_format` other than text, image parts, the
 * legacy `functions`); parameters that change nothing here (`user`, `metadata`, `store`, penalties) are ignored, as
 * OpenAI-compatible servers do. The conversation's tool calls and tool results must pair up by `tool_call_id`
 * exactly as OpenAI requires: every call answered once, by the tool messages right after it.
 */
import { z } from 'zod';
import { invalidRequest, type ApiError } from './errors';

/** Tool names as OpenAI allows them. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const TextPart = z.object({ type: z.literal('text'), text: z.string() });
const Content = z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]);

const ToolCall = z.looseObject({
  id: z.string().min(1).max(256),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

const Message = z.discriminatedUnion('role', [
  z.looseObject({ role: z.enum(['system', 'developer']), content: Content }),
  z.looseObject({ role: z.literal('user'), content: Content }),
  z.looseObject({
    role: z.literal('assistant'),
    content: Content.nullable().optional(),
    tool_calls: z.array(ToolCall).optional(),
  }),
  z.looseObject({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: Content }),
]);

const Tool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().regex(TOOL_NAME, 'must be 1-64 letters, digits, underscores or dashes'),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
]);

const Body = z.looseObject({
  model: z.string({ error: 'you must provide a model parameter' }),
  messages: z.array(Message).min(1, 'messages must hold at least one message'),
  tools: z.array(Tool).max(128).optional(),
  tool_choice: ToolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().gt(0).max(1).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  n: z.number().int().positive().nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)])
    .nullable()
    .optional(),
  response_format: z.looseObject({ type: z.string() }).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  functions: z.unknown().optional(),
  function_call: z.unknown().optional(),
});

export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** The function's parameters as the client sent them (a JSON Schema object); `{}` when absent. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

export interface ToolCallMessage {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** One message of the conversation, normalised (content parts joined into text). */
export type ChatMessage =
  | { readonly role: 'system'; readonly text: string }
  | { readonly role: 'user'; readonly text: string }
  | { readonly role: 'assistant'; readonly text: string | null; readonly toolCalls: readonly ToolCallMessage[] }
  | { readonly role: 'tool'; readonly toolCallId: string; readonly text: string };

export type ToolChoiceSpec =
  { readonly kind: 'auto' | 'none' | 'required' } | { readonly kind: 'function'; readonly name: string };

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSpec[];
  readonly toolChoice: ToolChoiceSpec;
  readonly parallelToolCalls: boolean;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly temperature?: number;
  readonly topP?: number;
  readonly seed?: number;
  readonly maxTokens?: number;
  readonly stop: readonly string[];
}

/** `messages[2].content` from a zod issue path. */
export function paramOf(path: readonly PropertyKey[]): string | null {
  if (path.length === 0) return null;
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
}

function textOf(content: z.infer<typeof Content>, param: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((part, i) => {
      const text = TextPart.safeParse(part);
      if (!text.success) {
        throw invalidRequest(
          `content part of type ${JSON.stringify(part.type)} is not supported by this model (text only)`,
          `${param}[${i}]`,
          'unsupported_content',
        );
      }
      return text.data.text;
    })
    .join('');
}

function unsupported(param: string, why: string): ApiError {
  return invalidRequest(`${param} ${why}`, param, 'unsupported_parameter');
}

/** Checks that every assistant tool call is answered exactly once by the tool messages that follow it. */
function checkToolPairing(messages: readonly ChatMessage[]): void {
  let open: Map<string, boolean> | undefined; // call id -> answered
  let openAt = -1;
  const close = (): void => {
    if (!open) return;
    const missing = [...open].filter(([, answered]) => !answered).map(([id]) => id);
    if (missing.length > 0) {
      throw invalidRequest(
        `an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; ` +
          `no response for: ${missing.join(', ')}`,
        `messages[${openAt}].tool_calls`,
        'tool_call_unanswered',
      );
    }
    open = undefined;
  };
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      const answered = open?.get(m.toolCallId);
      if (answered === undefined) {
        throw invalidRequest(
          `a message with role 'tool' must respond to a tool call of the assistant message before it; ` +
            `no such call: ${m.toolCallId}`,
          `messages[${i}].tool_call_id`,
          'tool_call_id_unknown',
        );
      }
      if (answered) {
        throw invalidRequest(
          `tool call ${m.toolCallId} has more than one tool message`,
          `messages[${i}].tool_call_id`,
          'tool_call_id_repeated',
        );
      }
      open!.set(m.toolCallId, true);
      return;
    }
    close();
    if (m.role === 'assistant' && m.toolCalls.length > 0) {
      const ids = m.toolCalls.map((c) => c.id);
      if (new Set(ids).size !== ids.length) {
        throw invalidRequest(
          `tool call ids must be unique within a message`,
          `messages[${i}].tool_calls`,
          'tool_call_id_repeated',
        );
      }
      open = new Map(ids.map((id) => [id, false]));
      openAt = i;
    }
  });
  close();
}

/** Parses a request body (already JSON-decoded) into a `ChatRequest`, or throws an `ApiError` (400). */
export function parseChatRequest(body: unknown): ChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('the request body must be a JSON object', null, 'invalid_body');
  }
  const parsed = Body.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = paramOf(issue.path);
    const missing = issue.code === 'invalid_type' && issue.input === undefined;
    throw invalidRequest(
      `${param ?? 'body'}: ${issue.message}`,
      param,
      missing ? 'missing_required_parameter' : 'invalid_value',
    );
  }
  const b = parsed.data;
  if (b.functions !== undefined || b.function_call !== undefined)
    throw unsupported('functions', 'is the legacy form: send tools and tool_choice');
  if ((b.n ?? 1) !== 1) throw unsupported('n', 'must be 1: this server returns one choice');
  if (b.logprobs) throw unsupported('logprobs', 'is not supported by this server');
  if (b.response_format && b.response_format.type !== 'text')
    throw unsupported('response_format', `of type ${b.response_format.type} is not supported (text only)`);

  const tools: ToolSpec[] = (b.tools ?? []).map((t) => ({
    name: t.function.name,
    description: t.function.description ?? '',
    parameters: t.function.parameters ?? {},
  }));
  const names = tools.map((t) => t.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) throw invalidRequest(`tool ${dup} is declared twice`, 'tools', 'duplicate_tool');

  let toolChoice: ToolChoiceSpec;
  const tc = b.tool_choice;
  if (tc === undefined) toolChoice = { kind: tools.length > 0 ? 'auto' : 'none' };
  else if (typeof tc === 'string') toolChoice = { kind: tc };
  else toolChoice = { kind: 'function', name: tc.function.name };
  if (toolChoice.kind !== 'none' && toolChoice.kind !== 'auto' && tools.length === 0)
    throw invalidRequest(`tool_choice ${toolChoice.kind} needs tools`, 'tool_choice');
  if (toolChoice.kind === 'function' && !names.includes(toolChoice.name))
    throw invalidRequest(`tool_choice names ${toolChoice.name}, which is not among the tools`, 'tool_choice');

  const messages: ChatMessage[] = b.messages.map((m, i): ChatMessage => {
    const param = `messages[${i}].content`;
    switch (m.role) {
      case 'system':
      case 'developer':
        return { role: 'system', text: textOf(m.content, param) };
      case 'user':
        return { role: 'user', text: textOf(m.content, param) };
      case 'tool':
        return { role: 'tool', toolCallId: m.tool_call_id, text: textOf(m.content, param) };
      case 'assistant': {
        const text = m.content === undefined || m.content === null ? null : textOf(m.content, param);
        const toolCalls = (m.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: c.function.name,
          arguments: c.function.arguments,
        }));
        if (text === null && toolCalls.length === 0)
          throw invalidRequest('an assistant message needs content or tool_calls', param, 'missing_required_parameter');
        return { role: 'assistant', text, toolCalls };
      }
    }
  });
  checkToolPairing(messages);

  const maxTokens = b.max_completion_tokens ?? b.max_tokens ?? undefined;
  const stop = b.stop === undefined || b.stop === null ? [] : typeof b.stop === 'string' ? [b.stop] : b.stop;
  return {
    model: b.model,
    messages,
    tools,
    toolChoice,
    parallelToolCalls: b.parallel_tool_calls ?? true,
    stream: b.stream ?? false,
    includeUsage: b.stream_options?.include_usage ?? false,
    ...(b.temperature !== undefined && b.temperature !== null ? { temperature: b.temperature } : {}),
    ...(b.top_p !== undefined && b.top_p !== null ? { topP: b.top_p } : {}),
    ...(b.seed !== undefined && b.seed !== null ? { seed: b.seed } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    stop: stop.filter((s) => s !== ''),
  };
}
