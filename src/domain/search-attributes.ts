/**
 * Ledgerloop's custom search attributes: one list for the dev server (`--search-attribute Name=Type`) and
 * the operator service, plus typed keys for `upsertSearchAttributes` in workflow code.
 *
 * Workflow-safe: imports nothing but `@temporalio/common` (no Node built-ins).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Type names as the CLI's `--search-attribute Name=Type` and `temporal operator search-attribute` spell them. */
export type SearchAttributeTypeName = 'Keyword' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

export interface SearchAttributeDef {
  readonly name: string;
  readonly type: SearchAttributeTypeName;
}

export const SEARCH_ATTRIBUTES: readonly SearchAttributeDef[] = [
  { name: 'LedgerloopStatus', type: 'Keyword' },
  { name: 'LedgerloopPrincipal', type: 'Keyword' },
  { name: 'LedgerloopTenant', type: 'Keyword' },
  { name: 'LedgerloopStopReason', type: 'Keyword' },
  { name: 'LedgerloopUnknownCalls', type: 'Int' },
  { name: 'LedgerloopPendingApprovals', type: 'Int' },
  { name: 'LedgerloopStrategy', type: 'Keyword' },
  { name: 'LedgerloopLeftStanding', type: 'Int' },
];

/** Typed keys for `upsertSearchAttributes([{ key: SA.status, value }])` and `typedSearchAttributes`. */
export const SA = {
  status: defineSearchAttributeKey('LedgerloopStatus', SearchAttributeType.KEYWORD),
  principal: defineSearchAttributeKey('LedgerloopPrincipal', SearchAttributeType.KEYWORD),
  tenant: defineSearchAttributeKey('LedgerloopTenant', SearchAttributeType.KEYWORD),
  stopReason: defineSearchAttributeKey('LedgerloopStopReason', SearchAttributeType.KEYWORD),
  unknownCalls: defineSearchAttributeKey('LedgerloopUnknownCalls', SearchAttributeType.INT),
  pendingApprovals: defineSearchAttributeKey('LedgerloopPendingApprovals', SearchAttributeType.INT),
  strategy: defineSearchAttributeKey('LedgerloopStrategy', SearchAttributeType.KEYWORD),
  /** Set when the run stops: how many effects its stop left standing for an operator (0 for `completed`). */
  leftStanding: defineSearchAttributeKey('LedgerloopLeftStanding', SearchAttributeType.INT),
} as const;

/** `SearchAttributeType` (SDK spelling) for each CLI type name. */
export const SEARCH_ATTRIBUTE_SDK_TYPE: Readonly<Record<SearchAttributeTypeName, SearchAttributeType>> = {
  Keyword: SearchAttributeType.KEYWORD,
  Text: SearchAttributeType.TEXT,
  Int: SearchAttributeType.INT,
  Double: SearchAttributeType.DOUBLE,
  Bool: SearchAttributeType.BOOL,
  Datetime: SearchAttributeType.DATETIME,
  KeywordList: SearchAttributeType.KEYWORD_LIST,
};
