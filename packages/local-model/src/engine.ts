/**
 * The model, loaded once per process with node-llama-cpp: one context with `sequences` slots, one `LlamaChat`
 * per slot (it keeps the slot's evaluated prefix, so a conversation's next turn evaluates only what is new), and a
 * FIFO queue in front of the slots. CPU only, prebuilt binaries only: `getLlama` is told never to build or
 * download anything, so a missing binary is an error at start, not a download at run time.
 *
 * node-llama-cpp is an ES module with top-level await: it is loaded with `import()`, which works from the
 * CommonJS this repository runs under tsx.
 */
import type { ChatHistoryItem, Llama, LlamaChat, LlamaContext, LlamaGrammar, LlamaModel } from 'node-llama-cpp';
import { ApiError } from './errors';
import type { GenerateInput, GenerateOutput, ModelEngine } from './model-engine';
import type { HistoryItem } from './prompt';

export interface EngineOptions {
  readonly modelPath: string;
  /** Threads for evaluation (llama.cpp's thread pool). */
  readonly threads: number;
  readonly contextSize: number;
  /** Concurrent generations (context sequences); requests beyond them wait in the queue. */
  readonly sequences: number;
  /** Requests that may wait for a slot; more are refused with 429. */
  readonly maxQueue: number;
  /** llama.cpp's log lines go here (warnings and errors only). */
  readonly log: (line: string) => void;
}

interface Slot {
  readonly chat: LlamaChat;
}

const GRAMMAR_CACHE = 32;

export class Engine implements ModelEngine {
  private readonly free: Slot[];
  private readonly waiting: Array<{ resolve: (s: Slot) => void; reject: (e: unknown) => void }> = [];
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  private constructor(
    private readonly llama: Llama,
    readonly model: LlamaModel,
    private readonly context: LlamaContext,
    slots: Slot[],
    private readonly opts: EngineOptions,
    readonly loadMs: number,
  ) {
    this.free = slots;
  }

  static async load(opts: EngineOptions): Promise<Engine> {
    const t0 = Date.now();
    const { getLlama, LlamaChat, LlamaLogLevel } = await import('node-llama-cpp');
    const llama = await getLlama({
      gpu: false,
      build: 'never',
      skipDownload: true,
      usePrebuiltBinaries: true,
      maxThreads: opts.threads,
      logLevel: LlamaLogLevel.warn,
      logger: (level, message) => {
        const text = message.trim();
        if (text !== '') opts.log(`llama.cpp ${level}: ${text}`);
      },
    });
    const model = await llama.loadModel({ modelPath: opts.modelPath });
    const context = await model.createContext({
      contextSize: opts.contextSize,
      sequences: opts.sequences,
      threads: opts.threads,
    });
    const slots: Slot[] = [];
    for (let i = 0; i < opts.sequences; i++) {
      slots.push({ chat: new LlamaChat({ contextSequence: context.getSequence(), autoDisposeSequence: true }) });
    }
    return new Engine(llama, model, context, slots, opts, Date.now() - t0);
  }

  get contextSize(): number {
    return this.context.contextSize;
  }

  get threads(): number {
    return this.opts.threads;
  }

  /** Requests generating or waiting. */
  get busy(): { readonly running: number; readonly waiting: number } {
    return { running: this.opts.sequences - this.free.length, waiting: this.waiting.length };
  }

  /** The prompt's length in tokens, as the chat template lays it out for the next model turn. */
  promptTokens(history: readonly HistoryItem[]): number {
    const chat = this.anyChat();
    const state = chat.chatWrapper.generateContextState({
      chatHistory: [...(history as ChatHistoryItem[]), { type: 'model', response: [] }],
    });
    return state.contextText.tokenize(this.model.tokenizer).length;
  }

  private anyChat(): LlamaChat {
    const slot = this.free[0] ?? this.slotsInUse[0];
    if (!slot) throw new Error('the engine has no chat slot');
    return slot.chat;
  }

  private readonly slotsInUse: Slot[] = [];

  private grammarFor(gbnf: string): Promise<LlamaGrammar> {
    const key = gbnf;
    let g = this.grammars.get(key);
    if (g === undefined) {
      g = this.llama.createGrammar({ grammar: gbnf });
      g.catch(() => this.grammars.delete(key));
      if (this.grammars.size >= GRAMMAR_CACHE) this.grammars.delete(this.grammars.keys().next().value!);
      this.grammars.set(key, g);
    }
    return g;
  }

  private acquire(signal: AbortSignal): Promise<Slot> {
    const slot = this.free.pop();
    if (slot) {
      this.slotsInUse.push(slot);
      return Promise.resolve(slot);
    }
    if (this.waiting.length >= this.opts.maxQueue) {
      return Promise.reject(
        new ApiError(
          429,
          'rate_limit_error',
          `the local model is busy: ${this.opts.sequences} generating and ${this.waiting.length} waiting`,
          null,
          'server_busy',
          { 'retry-after': '1' },
        ),
      );
    }
    return new Promise<Slot>((resolve, reject) => {
      const entry = {
        resolve: (s: Slot) => {
          signal.removeEventListener('abort', onAbort);
          this.slotsInUse.push(s);
          resolve(s);
        },
        reject,
      };
      const onAbort = (): void => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  private release(slot: Slot): void {
    const i = this.slotsInUse.indexOf(slot);
    if (i >= 0) this.slotsInUse.splice(i, 1);
    const next = this.waiting.shift();
    if (next) next.resolve(slot);
    else this.free.push(slot);
  }

  async generate(input: GenerateInput): Promise<GenerateOutput> {
    const queued = Date.now();
    const grammar = input.grammar ? await this.grammarFor(input.grammar) : undefined;
    const slot = await this.acquire(input.signal);
    const started = Date.now();
    let firstTokenAt = 0;
    let lastTokenAt = 0;
    let tokens = 0;
    try {
      const res = await slot.chat.generateResponse(input.history as ChatHistoryItem[], {
        ...(grammar ? { grammar } : {}),
        maxTokens: input.maxTokens,
        temperature: input.temperature,
        ...(input.topP !== undefined ? { topP: input.topP } : {}),
        seed: input.seed,
        repeatPenalty: false,
        signal: input.signal,
        stopOnAbortSignal: true,
        ...(input.stop.length > 0 && !grammar ? { customStopTriggers: [...input.stop] } : {}),
        onToken: (t) => {
          const now = Date.now();
          if (tokens === 0) firstTokenAt = now;
          lastTokenAt = now;
          tokens += t.length;
        },
        onTextChunk: (chunk) => input.onText(chunk),
      });
      const reason = res.metadata.stopReason;
      return {
        text: res.response,
        completionTokens: tokens,
        stopReason: reason === 'maxTokens' ? 'length' : reason === 'abort' ? 'abort' : 'stop',
        queueMs: started - queued,
        firstTokenMs: tokens > 0 ? firstTokenAt - started : Date.now() - started,
        decodeMs: tokens > 0 ? lastTokenAt - firstTokenAt : 0,
      };
    } finally {
      this.release(slot);
    }
  }

  async dispose(): Promise<void> {
    for (const w of this.waiting.splice(0)) w.reject(new Error('the server is stopping'));
    await this.context.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }
}
