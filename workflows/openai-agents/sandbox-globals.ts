/**
 * The Web globals `@openai/agents-core` needs in the workflow sandbox and does not find there
 * (docs/openai-agents.md, "What the sandbox lacks"):
 * - `EventTarget` and `CustomEvent`: its browser shim (the one webpack's `browser` condition picks for the workflow
 *   bundle) makes every `Agent`, `Runner` and run state an event emitter over `new EventTarget()`; without them the
 *   first `new Agent(...)` throws `ReferenceError: EventTarget is not defined`. Listeners here run synchronously, in
 *   the order added, as the DOM's do: deterministic.
 * - `structuredClone`: `tool()` clones the parameters' JSON schema with it (`ReferenceError: structuredClone is not
 *   defined` from utils/strictToolSchema): ./structured-clone.ts, for the plain data it clones.
 * Installed only when missing, so this module is a no-op outside the sandbox (and keeps a polyfill another plugin,
 * such as `@temporalio/ai-sdk`'s, installed first).
 */
import { sandboxStructuredClone } from './structured-clone';

type Listener = (event: Event) => void;

class SandboxEvent {
  constructor(
    readonly type: string,
    init?: { readonly detail?: unknown },
  ) {
    this.detail = init?.detail;
  }
  readonly detail: unknown;
}

class SandboxEventTarget {
  readonly #listeners = new Map<string, Listener[]>();

  addEventListener(type: string, listener: Listener | null): void {
    if (listener === null) return;
    const list = this.#listeners.get(type) ?? [];
    if (!list.includes(listener)) list.push(listener);
    this.#listeners.set(type, list);
  }

  removeEventListener(type: string, listener: Listener | null): void {
    const list = this.#listeners.get(type);
    if (list && listener)
      this.#listeners.set(
        type,
        list.filter((l) => l !== listener),
      );
  }

  dispatchEvent(event: Event): boolean {
    for (const listener of [...(this.#listeners.get(event.type) ?? [])]) listener(event);
    return true;
  }
}

const g = globalThis as Record<string, unknown>;
if (typeof g['EventTarget'] === 'undefined') g['EventTarget'] = SandboxEventTarget;
if (typeof g['CustomEvent'] === 'undefined') g['CustomEvent'] = SandboxEvent;
if (typeof g['structuredClone'] === 'undefined') g['structuredClone'] = sandboxStructuredClone;

export {};
