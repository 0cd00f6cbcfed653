/**
 * The conversation as the model reads it. A chat template knows system, user and model turns only, so:
 *
 * - the tools and the reply format are described in the system turn (the client's own system text first);
 * - an earlier assistant turn is written back in the reply format the grammar produces (`{"tool_calls":…}` or
 *   `{"tool_calls":[],"final_answer":…}`), so the model sees its own earlier replies as it wrote them;
 * - the tool messages after an assistant turn become one user turn that gives each call's result, in the order of
 *   the calls: each result is found by its `tool_call_id` (request.ts has already checked that every call has
 *   exactly one), never by the position of the tool message.
 *
 * Pure: the items have the shape of node-llama-cpp's `ChatHistoryItem`, without importing it.
 */
import type { ChatMessage, ChatRequest, ToolCallMessage, ToolSpec } from './request';

export type HistoryItem =
  | { readonly type: 'system'; readonly text: string }
  | { readonly type: 'user'; readonly text: string }
  | { readonly type: 'model'; readonly response: string[] };

/** Whether replies are generated under the tool-call grammar (tools offered and not `tool_choice: none`). */
export function usesToolGrammar(req: Pick<ChatRequest, 'tools' | 'toolChoice'>): boolean {
  return req.tools.length > 0 && req.toolChoice.kind !== 'none';
}

function compactJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text; // arguments that never parsed are shown as the string they were
  }
}

/** An assistant turn in the reply format. */
export function envelopeText(m: {
  readonly text: string | null;
  readonly toolCalls: readonly ToolCallMessage[];
}): string {
  if (m.toolCalls.length > 0) {
    return JSON.stringify({
      tool_calls: m.toolCalls.map((c) => ({ name: c.name, arguments: compactJson(c.arguments) })),
    });
  }
  return JSON.stringify({ tool_calls: [], final_answer: m.text ?? '' });
}

type Json = Readonly<Record<string, unknown>>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A JSON Schema as a short type signature (`{account: string matching ^[a-z]+$, memo?: string}`): about half the
 * tokens of the schema's JSON, and easier for a small model to read. Constructs it does not know are shown as JSON.
 */
export function signatureOf(schema: unknown, depth = 0): string {
  if (!isObj(schema) || depth > 8) return JSON.stringify(schema) ?? 'any';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  const alts = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (alts) return alts.map((a) => signatureOf(a, depth + 1)).join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : schema.type;
  if (type === 'object' || (type === undefined && isObj(schema.properties))) {
    const props = isObj(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const fields = Object.entries(props).map(
      ([k, v]) => `${k}${required.has(k) ? '' : '?'}: ${signatureOf(v, depth + 1)}`,
    );
    if (isObj(schema.additionalProperties))
      fields.push(`[key: string]: ${signatureOf(schema.additionalProperties, depth + 1)}`);
    return `{${fields.join(', ')}}`;
  }
  if (type === 'array') return `${isObj(schema.items) ? signatureOf(schema.items, depth + 1) : 'any'}[]`;
  if (typeof type !== 'string') return JSON.stringify(schema);
  const notes: string[] = [];
  if (typeof schema.pattern === 'string') notes.push(`matching ${schema.pattern}`);
  if (typeof schema.format === 'string') notes.push(`format ${schema.format}`);
  if (typeof schema.maxLength === 'number') notes.push(`at most ${schema.maxLength} characters`);
  const big = (n: unknown): boolean => typeof n !== 'number' || Math.abs(n) >= 2 ** 31;
  if (!big(schema.minimum) || !big(schema.maximum))
    notes.push(`from ${schema.minimum ?? '-∞'} to ${schema.maximum ?? '∞'}`);
  return notes.length > 0 ? `${type} (${notes.join(', ')})` : type;
}

/** The system text that describes the tools and the reply format. */
export function toolsInstructions(tools: readonly ToolSpec[], req: Pick<ChatRequest, 'toolChoice'>): string {
  const lines = [
    'You can call these tools (name(arguments): what it does):',
    ...tools.map((t) => `- ${t.name}(${signatureOf(t.parameters)}): ${t.description.trim() || '(no description)'}`),
    'Reply with exactly one JSON object and nothing else.',
    'To call tools: {"tool_calls":[{"name":"<tool name>","arguments":{<arguments as the tool\'s schema says>}}]}',
  ];
  const choice = req.toolChoice;
  if (choice.kind === 'function') lines.push(`You must call the tool ${choice.name}.`);
  else if (choice.kind === 'required') lines.push('You must call at least one tool.');
  else {
    lines.push(
      'Only a tool call acts: nothing is done until a tool result says it was. Never claim in a final answer what no tool result shows.',
      'When the tool results show the goal reached, or that it cannot be reached, reply: {"tool_calls":[],"final_answer":"<a short answer>"}',
    );
  }
  return lines.join('\n');
}

/** After the results, what the next reply may be: a model without a tool role forgets its calls were answered. */
export const AFTER_RESULTS =
  'A call that succeeded is done: never make it again. If the goal is now reached, or cannot be reached, reply ' +
  '{"tool_calls":[],"final_answer":"<a short answer>"}; otherwise call only what the goal still needs.';

function toolResultsText(calls: readonly ToolCallMessage[], results: ReadonlyMap<string, string>): string {
  const lines = calls.map((c, i) => `${i + 1}. ${c.name} ${compactArgs(c.arguments)} -> ${results.get(c.id) ?? ''}`);
  return ['The application ran your calls:', ...lines, AFTER_RESULTS].join('\n');
}

function compactArgs(text: string): string {
  const v = compactJson(text);
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The history items for `req`, ending with the turn the model answers next. */
export function historyOf(req: Pick<ChatRequest, 'messages' | 'tools' | 'toolChoice'>): HistoryItem[] {
  const grammar = usesToolGrammar(req);
  const items: HistoryItem[] = [];
  const instructions = grammar ? toolsInstructions(req.tools, req) : undefined;
  const messages: readonly ChatMessage[] = req.messages;
  let instructed = false;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    switch (m.role) {
      case 'system':
        if (instructions !== undefined && !instructed) {
          items.push({ type: 'system', text: `${m.text}\n\n${instructions}` });
          instructed = true;
        } else items.push({ type: 'system', text: m.text });
        break;
      case 'user':
        if (instructions !== undefined && !instructed) {
          items.push({ type: 'system', text: instructions });
          instructed = true;
        }
        items.push({ type: 'user', text: m.text });
        break;
      case 'assistant': {
        items.push({ type: 'model', response: [grammar ? envelopeText(m) : (m.text ?? envelopeText(m))] });
        if (m.toolCalls.length > 0) {
          const results = new Map<string, string>();
          while (i + 1 < messages.length && messages[i + 1]!.role === 'tool') {
            const t = messages[++i] as Extract<ChatMessage, { role: 'tool' }>;
            results.set(t.toolCallId, t.text);
          }
          items.push({ type: 'user', text: toolResultsText(m.toolCalls, results) });
        }
        break;
      }
      case 'tool':
        // request.ts refuses a tool message that does not follow its call; the loop above consumes the others.
        throw new Error(`tool message ${m.toolCallId} does not follow its call`);
    }
  }
  if (instructions !== undefined && !instructed) items.unshift({ type: 'system', text: instructions });
  return items;
}
