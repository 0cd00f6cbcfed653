/**
 * Reads a reply generated under the tool-call grammar (grammar.ts) while it is being generated: the text of a
 * `final_answer` as it grows (after an empty `tool_calls`, `{"tool_calls":[],"final_answer":"…"}`, or alone), and
 * each tool call as soon as its object is complete. The same reader serves the
 * streaming and the non-streaming responses, so both say the same thing.
 *
 * A reply cut off by the token limit ends with what was complete, plus the call being written when it was cut
 * (its name, if it got that far, and its argument text as far as it went: not JSON, as OpenAI's cut-off calls).
 */

export interface ParsedCall {
  readonly name: string;
  /** The arguments as compact JSON text, or the raw partial text of a cut-off call. */
  readonly arguments: string;
}

export type EnvelopeEvent =
  | { readonly kind: 'content'; readonly text: string }
  | { readonly kind: 'call'; readonly index: number; readonly call: ParsedCall };

export interface EnvelopeResult {
  /** The final answer's text, or the raw text when the reply was not in the reply format. */
  readonly content: string | null;
  readonly calls: readonly ParsedCall[];
  /** A call that was being written when generation stopped. */
  readonly partialCall?: ParsedCall;
}

const HEAD = /^\s*\{\s*"(tool_calls|final_answer)"\s*:\s*/;
const ANSWER_KEY = /^\s*,\s*"final_answer"\s*:\s*/;
const WS = /\s/;

export class EnvelopeReader {
  private text = '';
  private mode: 'head' | 'answer' | 'calls' | 'answer-key' | 'done' | 'other' = 'head';
  private pos = 0;
  private answer = '';
  private answerOpen = false;
  private readonly calls: ParsedCall[] = [];
  /** Inside the calls array: where the current element began, its depth, string state. */
  private elemStart = -1;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private arrayOpen = false;

  /** Feeds generated text; returns what became known with it. */
  push(chunk: string): EnvelopeEvent[] {
    this.text += chunk;
    const events: EnvelopeEvent[] = [];
    if (this.mode === 'head') {
      const m = HEAD.exec(this.text);
      if (m) {
        this.mode = m[1] === 'final_answer' ? 'answer' : 'calls';
        this.pos = m[0].length;
      } else if (!this.couldStillBeHead()) this.mode = 'other';
    }
    if (this.mode === 'calls') this.readCalls(events);
    if (this.mode === 'answer-key') this.readAnswerKey();
    if (this.mode === 'answer') this.readAnswer(events);
    return events;
  }

  /** Whether the text so far is a prefix of a reply head. */
  private couldStillBeHead(): boolean {
    const t = this.text.trimStart();
    for (const key of ['tool_calls', 'final_answer']) {
      const head = `{"${key}":`;
      const compact = t.replace(/\s+/g, '');
      if (head.startsWith(compact) || compact.startsWith(head)) return true;
    }
    return false;
  }

  /** After an empty `tool_calls`: `,"final_answer":` follows. */
  private readAnswerKey(): void {
    const rest = this.text.slice(this.pos);
    const m = ANSWER_KEY.exec(rest);
    if (m) {
      this.mode = 'answer';
      this.pos += m[0].length;
    } else if (!`,"final_answer":`.startsWith(rest.replace(/\s+/g, ''))) this.mode = 'other';
  }

  private readAnswer(events: EnvelopeEvent[]): void {
    const t = this.text;
    if (!this.answerOpen) {
      while (this.pos < t.length && WS.test(t[this.pos]!)) this.pos++;
      if (this.pos >= t.length) return;
      if (t[this.pos] !== '"') {
        this.mode = 'other';
        return;
      }
      this.answerOpen = true;
      this.pos++;
    }
    let out = '';
    while (this.pos < t.length) {
      const c = t[this.pos]!;
      if (c === '"') {
        this.mode = 'done';
        this.pos++;
        break;
      }
      if (c === '\\') {
        const decoded = decodeEscape(t, this.pos);
        if (decoded === undefined) break; // the escape is not complete yet
        out += decoded.text;
        this.pos += decoded.length;
        continue;
      }
      out += c;
      this.pos++;
    }
    if (out !== '') {
      this.answer += out;
      events.push({ kind: 'content', text: out });
    }
  }

  private readCalls(events: EnvelopeEvent[]): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t[this.pos]!;
      if (!this.arrayOpen) {
        if (WS.test(c)) this.pos++;
        else if (c === '[') {
          this.arrayOpen = true;
          this.pos++;
        } else {
          this.mode = 'other';
          return;
        }
        continue;
      }
      if (this.elemStart < 0) {
        if (WS.test(c) || c === ',') this.pos++;
        else if (c === '{') {
          this.elemStart = this.pos;
          this.depth = 0;
          this.inString = false;
          this.escaped = false;
        } else if (c === ']') {
          this.mode = this.calls.length === 0 ? 'answer-key' : 'done';
          this.pos++;
          return;
        } else {
          this.mode = 'other';
          return;
        }
        if (this.elemStart < 0) continue;
      }
      // Inside an element: find where its object closes.
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
      } else if (c === '"') this.inString = true;
      else if (c === '{' || c === '[') this.depth++;
      else if (c === '}' || c === ']') {
        this.depth--;
        if (this.depth === 0) {
          const call = callOf(t.slice(this.elemStart, this.pos + 1));
          if (call === undefined) {
            this.mode = 'other';
            return;
          }
          this.calls.push(call);
          events.push({ kind: 'call', index: this.calls.length - 1, call });
          this.elemStart = -1;
        }
      }
      this.pos++;
    }
  }

  /** What the whole reply says (call after the last `push`). */
  finish(): EnvelopeResult {
    if (this.mode === 'answer' || (this.mode === 'done' && this.answerOpen)) {
      return { content: this.answer, calls: [] };
    }
    if (this.mode === 'answer-key') return { content: '', calls: [] };
    if (this.mode === 'calls' || this.mode === 'done') {
      const partial = this.elemStart >= 0 ? partialCallOf(this.text.slice(this.elemStart)) : undefined;
      return { content: null, calls: [...this.calls], ...(partial ? { partialCall: partial } : {}) };
    }
    return { content: this.text.trim(), calls: [] };
  }
}

/** One `\…` escape at `at`: its text and length, or undefined when the text ends inside it. */
function decodeEscape(t: string, at: number): { text: string; length: number } | undefined {
  const next = t[at + 1];
  if (next === undefined) return undefined;
  if (next !== 'u') {
    const simple: Record<string, string> = {
      '"': '"',
      '\\': '\\',
      '/': '/',
      b: '\b',
      f: '\f',
      n: '\n',
      r: '\r',
      t: '\t',
    };
    return { text: simple[next] ?? next, length: 2 };
  }
  const hex = t.slice(at + 2, at + 6);
  if (hex.length < 4) return undefined;
  return { text: String.fromCharCode(parseInt(hex, 16)), length: 6 };
}

function callOf(text: string): ParsedCall | undefined {
  try {
    const v = JSON.parse(text) as { name?: unknown; arguments?: unknown };
    if (typeof v.name !== 'string') return undefined;
    return { name: v.name, arguments: JSON.stringify(v.arguments ?? {}) };
  } catch {
    return undefined;
  }
}

function partialCallOf(text: string): ParsedCall | undefined {
  const name = /"name"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(text);
  if (!name) return undefined;
  const args = /"arguments"\s*:\s*/.exec(text);
  return { name: name[1]!, arguments: args ? text.slice(args.index + args[0].length) : '' };
}
