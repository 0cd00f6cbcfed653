/** The tool registry: name -> declaration. Workflow-safe (pure declarations only). */
import type { AnyTool } from '../domain/tool';
import { sharedValue } from './shared-declarations';

/**
 * Tools declared together in one module, loaded the first time one of them is looked up. Every workflow run
 * evaluates the modules it loads afresh (the SDK's per-run module cache), and building a tool's zod schemas is
 * most of that cost, so a run should pay only for the services it calls.
 */
export interface ToolModule {
  /** The names the module defines; checked against what `load` returns. */
  readonly names: readonly string[];
  load(): readonly AnyTool[];
}

/** Load a module's declarations once per worker (see shared-declarations.ts), frozen against mutation. */
export function sharedModule(id: string, load: () => readonly AnyTool[]): () => readonly AnyTool[] {
  return () => sharedValue(`tool-module:${id}`, () => Object.freeze(load().map((t) => Object.freeze(t))));
}

/** A user's tool module: its id (unique per worker), the names it defines, and a `load` that requires them. */
export interface ToolModuleSpec {
  /** Unique among the worker's tool modules; the built-in ones use their service names. */
  readonly id: string;
  readonly names: readonly string[];
  /** Requires the module that builds the declarations, e.g. `() => require('./ticketing.tools').ticketingTools`. */
  load(): readonly AnyTool[];
}

/** Thrown for a tool module or registry that cannot be used (a duplicate name or id, a module naming other tools). */
export class ToolRegistryError extends Error {
  override readonly name = 'Tools.Invalid';
}

/**
 * A tool module whose declarations are built once per worker, on first use, and shared by every run (frozen).
 * Keep the module that calls this cheap: no zod schema at its top level, only in the module `load` requires.
 */
export function defineToolModule(spec: ToolModuleSpec): ToolModule {
  if (!/^[a-z][a-z0-9_-]{0,63}$/.test(spec.id)) {
    throw new ToolRegistryError(`a tool module id is 1-64 of a-z, 0-9, _ and - (got ${JSON.stringify(spec.id)})`);
  }
  if (spec.names.length === 0) throw new ToolRegistryError(`tool module ${spec.id} names no tool`);
  return { names: [...spec.names], load: sharedModule(`user:${spec.id}`, spec.load) };
}

export class ToolRegistry {
  private readonly byName = new Map<string, AnyTool>();
  private readonly unloaded = new Map<string, ToolModule>();

  constructor(tools: readonly AnyTool[], modules: readonly ToolModule[] = []) {
    for (const tool of tools) this.add(tool);
    for (const m of modules) {
      for (const name of m.names) {
        if (this.byName.has(name) || this.unloaded.has(name))
          throw new ToolRegistryError(`duplicate tool name ${name}`);
        this.unloaded.set(name, m);
      }
    }
  }

  get(name: string): AnyTool | undefined {
    const tool = this.byName.get(name);
    if (tool) return tool;
    const m = this.unloaded.get(name);
    if (!m) return undefined;
    this.load(m);
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys(), ...this.unloaded.keys()].sort();
  }

  private add(tool: AnyTool): void {
    if (this.byName.has(tool.name)) throw new ToolRegistryError(`duplicate tool name ${tool.name}`);
    this.byName.set(tool.name, tool);
  }

  private load(m: ToolModule): void {
    const tools = m.load();
    const got = tools.map((t) => t.name).sort();
    const declared = [...m.names].sort();
    if (got.join() !== declared.join()) {
      throw new ToolRegistryError(`a tool module declares [${declared.join(', ')}] but defines [${got.join(', ')}]`);
    }
    for (const name of m.names) this.unloaded.delete(name);
    for (const tool of tools) this.add(tool);
  }
}

/* eslint-disable @typescript-eslint/no-require-imports -- a require() in a function is what defers the module */
/** The tools the built-in services provide, each service's module loaded on first use, once per worker. */
export const builtinTools = new ToolRegistry(
  [],
  [
    {
      names: ['wallet_debit', 'wallet_refund'],
      load: sharedModule('wallet', () => (require('./wallet.tool') as typeof import('./wallet.tool')).walletTools),
    },
    {
      names: ['inventory_reserve', 'inventory_release'],
      load: sharedModule(
        'inventory',
        () => (require('./inventory.tool') as typeof import('./inventory.tool')).inventoryTools,
      ),
    },
    {
      names: ['shipping_schedule', 'shipping_cancel'],
      load: sharedModule(
        'shipping',
        () => (require('./shipping.tool') as typeof import('./shipping.tool')).shippingTools,
      ),
    },
    {
      names: ['orders_mark_fulfilled'],
      load: sharedModule('orders', () => (require('./orders.tool') as typeof import('./orders.tool')).ordersTools),
    },
    {
      names: ['notifications_send_email'],
      load: sharedModule(
        'notifications',
        () => (require('./notifications.tool') as typeof import('./notifications.tool')).notificationsTools,
      ),
    },
  ],
);
/* eslint-enable @typescript-eslint/no-require-imports */
