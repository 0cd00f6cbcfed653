/** The tool registry: name -> declaration. Workflow-safe (pure declarations only). */
import type { AnyTool } from '../domain/tool';
import { inventoryTools } from './inventory.tool';
import { notificationsTools } from './notifications.tool';
import { ordersTools } from './orders.tool';
import { shippingTools } from './shipping.tool';
import { walletTools } from './wallet.tool';

export class ToolRegistry {
  private readonly byName = new Map<string, AnyTool>();

  constructor(tools: readonly AnyTool[]) {
    for (const tool of tools) {
      if (this.byName.has(tool.name)) throw new Error(`duplicate tool name ${tool.name}`);
      this.byName.set(tool.name, tool);
    }
  }

  get(name: string): AnyTool | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }
}

/** The tools the built-in services provide. */
export const builtinTools = new ToolRegistry([
  ...walletTools,
  ...inventoryTools,
  ...shippingTools,
  ...ordersTools,
  ...notificationsTools,
]);
