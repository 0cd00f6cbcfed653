/**
 * `ledgerloop/workflow-tools`: the public API for declaring tools. Everything here is pure and deterministic (it
 * runs in the workflow sandbox too): the declaration (`defineTool`), its idempotency contract and compensation,
 * the canonicalization helpers, and the registry a worker's bundle reads.
 *
 * The module a worker is given as its tools (`createWorker({ tools })`) is evaluated by every run: import
 * `ledgerloop/tool-registry` there (no zod), and this entry only in the module its `load` requires.
 */
export {
  defineTool,
  type AnyTool,
  type AuthorizationRequest,
  type Compensation,
  type DispatchContext,
  type ForwardCall,
  type IdempotencyContract,
  type ToolDefinition,
} from '../domain/tool';
export type {
  DownstreamPromises,
  FunctionTransport,
  HttpLookup,
  HttpStatuses,
  HttpTransport,
  LedgerloopTransport,
  StatusMatch,
  ToolTransport,
} from '../domain/transport';
export { canonicalJson, hashCanonical, CanonicalizationError, type Json } from '../domain/canonical';
export { Currency, Money, PositiveMoney, formatMoney } from '../domain/money';
export { canonicalMoney, nfc, sortedSet, sortedSetBy, TimeZone, ZonedDateTime, zonedTime } from './canonical-forms';
export { normalizeText, OperationKeyRef, onResource, receiptResult, shortKey } from './common';
export { defineToolModule, ToolRegistry, ToolRegistryError, type ToolModule, type ToolModuleSpec } from './registry';
export { mcpToolModule } from './mcp/module';
export { isMcpTool, mcpTools, type McpAnswerBody, type McpBinding, type McpTool } from './mcp/declare';
export { compileJsonSchema, McpSchemaError, type SchemaCheck, type SchemaIssue } from './mcp/json-schema';
export { toolDigest, type ListedTool } from './mcp/digest';
export {
  MCP_TOOL_SET_FORMAT,
  McpToolSetError,
  parseToolSet,
  type McpHints,
  type McpLookup,
  type McpToolDeclaration,
  type McpToolSet,
} from './mcp/tool-set';
