/**
 * `ledgerloop/tool-registry`: what the module a worker is given as its tools needs, and nothing that builds a
 * zod schema (that module is evaluated by every run; see src/tools/shared-declarations.ts).
 */
export { defineToolModule, ToolRegistry, ToolRegistryError, type ToolModule, type ToolModuleSpec } from './registry';
export type { AnyTool } from '../domain/tool';
export { mcpToolModule } from './mcp/module';
