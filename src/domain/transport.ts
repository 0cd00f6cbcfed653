/**
 * How a tool reaches its downstream, declared with the tool: pure data (and pure functions), read in the workflow
 * sandbox by the recovery table (src/domain/recovery.ts) and resolved by the worker into a transport that sends
 * (src/downstream/transports.ts). Three kinds:
 *
 * - `ledgerloop`: a service that speaks Ledgerloop's own HTTP contract (src/downstream/protocol.ts): it dedupes
 *   a same key for the retention it declares at `GET /v1/contract`, answers a lookup by key, seals a missing key,
 *   and refuses a stale fence. A tool that names only `service` and `route` uses it.
 * - `function`: the worker runs the team's `execute(args, ctx)` (and `lookup(key, ctx)`), given to the worker by
 *   tool name; the declaration says what the function's own downstream promises.
 * - `http`: a third-party HTTP API (Stripe-style): method and path template, the header that carries the key,
 *   the declared key retention, how statuses read, a lookup request, and credentials from a worker secret.
 *
 * What happens after a lost response is never a transport's to decide: each kind only says what its downstream
 * promises (`promisesOf`), and the table decides.
 */
import type { Json } from './canonical';

/**
 * What a downstream promises about repeats, lookups, seals, fences and requests in flight. Every field defaults to
 * the weakest promise (no dedupe, no lookup, no seal, no fence, no in-flight bound): a declaration only ever
 * claims more than nothing.
 */
export interface DownstreamPromises {
  /**
   * A repeat of the same key with the same arguments is answered from the first request's outcome for this long,
   * counted from the first send (Stripe: at least 24 h). Absent: a repeat is a new request.
   */
  readonly keyRetentionMs?: number;
  /** The downstream can be asked whether an effect exists: by the key itself, or by a metadata field the call set. */
  readonly lookup?: 'by_key' | 'by_metadata';
  /** A lookup may miss an effect committed up to this long ago (a search index that lags writes). Default 0. */
  readonly lookupLagMs?: number;
  /** A lookup can seal a missing key so that no late request commits under it. Default false. */
  readonly seals?: boolean;
  /** The downstream refuses a request whose fence is lower than one it accepted. Default false. */
  readonly fenced?: boolean;
  /**
   * A request has committed or will never commit once this long has passed since it was sent (the downstream's
   * own request timeout, plus the network's). Absent: no bound, so only a seal or an operator proves absence.
   */
  readonly maxInFlightMs?: number;
}

/** The promises as the recovery table reads them: a `ledgerloop` service declares its retention at run time. */
export interface Promises extends Omit<DownstreamPromises, 'keyRetentionMs'> {
  /** `service`: the retention the service declares at `GET /v1/contract`, read by the dispatch activity. */
  readonly keyRetentionMs?: number | 'service';
}

/** A service on Ledgerloop's HTTP contract: a mutation route, lookups and seals by key, fences, declared retention. */
export interface LedgerloopTransport {
  readonly kind: 'ledgerloop';
  /** The mutating route, e.g. `/v1/debits`. */
  readonly route: string;
}

/**
 * A function the worker runs: `execute(args, ctx)` and an optional `lookup(key, ctx)`, given to the worker by the
 * tool's name (`functions` of `createWorker` / `LedgerloopPlugin`), never carried in the declaration (the
 * declaration is bundled into the workflow sandbox, the function does I/O).
 */
export interface FunctionTransport {
  readonly kind: 'function';
  /** What the function's own downstream promises (an SDK that takes an idempotency key, a lookup, ...). */
  readonly promises?: DownstreamPromises;
  /**
   * Names of the worker's secrets the function receives in `ctx.secrets`, read from the worker's environment (or
   * its `secrets` option). A name the worker lacks refuses the worker's start. Never in history or logs.
   */
  readonly secrets?: readonly string[];
}

/** One way a response reads: its status (or a range) and, optionally, a field of its JSON body. */
export interface StatusMatch {
  readonly status: number | readonly [number, number];
  /** A dotted path into the JSON body, e.g. `error.type`. */
  readonly field?: string;
  /** The field's value (or one of them); without it, the field only has to be present. */
  readonly equals?: string | readonly string[];
}

/** How an HTTP API's statuses read. Anything none of them matches: 2xx answered, else UNKNOWN (do not guess). */
export interface HttpStatuses {
  /** Another request under the key is still executing (Stripe: 409): try again later, nothing new was done. */
  readonly inFlight?: readonly StatusMatch[];
  /** The key was first used with other parameters (Stripe: 400 `idempotency_error`): refused, nothing done. */
  readonly keyReused?: readonly StatusMatch[];
  /** Refusals that prove nothing was done (a validation error, a declined card): the call FAILED. */
  readonly refused?: readonly StatusMatch[];
  /** The request was not processed at all (429, 503 with no side effect): nothing done, Temporal retries. */
  readonly notProcessed?: readonly StatusMatch[];
}

/** A lookup request of an HTTP API: by the key, or a search by a metadata field the call set. */
export interface HttpLookup {
  /** The key itself (`GET /v1/things/by-key/{key}`), or a metadata field the request set (a search). */
  readonly by: 'key' | 'metadata';
  /** Path template: `{key}` is the key the call sent, `{field}` a field of the canonical arguments. */
  readonly path: string;
  /** Query parameters, templated the same way (e.g. `{ query: 'metadata["ledgerloop_key"]:"{key}"' }`). */
  readonly query?: Readonly<Record<string, string>>;
  /**
   * Where a search's matches are (a dotted path to an array, e.g. `data`): none is not found, one or more is
   * found. Absent: the body is the one record, 200 found and 404 not found.
   */
  readonly results?: string;
  /** The search may miss an effect committed up to this long ago (Stripe's search lags writes). Default 0. */
  readonly lagMs?: number;
  /** A found record that holds no effect (a failed or cancelled object): the call FAILED, nothing to offset. */
  readonly failedWhen?: { readonly field: string; readonly equals: string | readonly string[] };
  /** A found record still being processed: looked up again later. */
  readonly pendingWhen?: { readonly field: string; readonly equals: string | readonly string[] };
}

/** A third-party HTTP API. Its base URL is the worker's `services[<tool service>]`. */
export interface HttpTransport {
  readonly kind: 'http';
  readonly method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path template under the base URL; `{field}` is a field of the canonical arguments (URL-encoded). */
  readonly path: string;
  /**
   * The request body from the canonical arguments and the key the call sends. Default: the canonical arguments
   * without `tenant`. Pure: it runs in the worker, and its output is not recorded.
   */
  body?(args: Json, key: string): Json;
  /** How the body is encoded; default `json`. `form` is `application/x-www-form-urlencoded` with `a[b]` nesting. */
  readonly encoding?: 'json' | 'form';
  /** The header that carries the key (default `Idempotency-Key`) and a vendor prefix before the operation key. */
  readonly key?: { readonly header?: string; readonly prefix?: string };
  /**
   * How long the API keeps a key: a same-key resend is only sent inside it, counted from the first send as
   * recorded in history. Required for an `idempotent_by_key` tool (its worker refuses to start without it).
   */
  readonly keyRetentionMs?: number;
  /** A request has committed or never will once this long has passed since it was sent. */
  readonly maxInFlightMs?: number;
  readonly statuses?: HttpStatuses;
  readonly lookup?: HttpLookup;
  /** The credential: a worker secret sent in a header (default `authorization`, scheme `Bearer`). */
  readonly auth?: { readonly secret: string; readonly header?: string; readonly scheme?: 'Bearer' | 'Basic' | '' };
  /** The field of a success body that is the effect's receipt; default `id`. */
  readonly receiptField?: string;
  /** A dotted path to a refusal's code in its body (e.g. `error.code`), mapped through `codes`. */
  readonly errorCodeField?: string;
  /** A refusal's code as the ledger records it, e.g. `{ card_declined: 'Payments.CardDeclined' }`. */
  readonly codes?: Readonly<Record<string, string>>;
}

/**
 * A tool of an MCP server the worker connects to (src/downstream/mcp): the server is the tool's `service`, the
 * worker's `mcp.servers[<service>]`. What a plain MCP server promises is nothing: it reads no key, seals nothing and
 * bounds no request, so only what the checked-in tool set declares is claimed (src/tools/mcp/tool-set.ts).
 */
export interface McpToolTransport {
  readonly kind: 'mcp';
  /** The tool's name on the server. */
  readonly tool: string;
  /** The server dedupes a repeat under the key in `_meta` for this long (declared only for one that reads it). */
  readonly keyRetentionMs?: number;
  /** A declared read of the same server finds the state the call meant (not the key itself). */
  readonly lookup?: boolean;
}

export type ToolTransport = LedgerloopTransport | FunctionTransport | HttpTransport | McpToolTransport;

/** What a tool declares about where it goes: `service` always (the downstream's name), and `route` or `transport`. */
export interface TransportFields {
  readonly service: string;
  readonly route?: string;
  readonly transport?: ToolTransport;
}

/** A tool's transport: `transport` as declared, else the Ledgerloop contract at `route`. */
export function transportOf(tool: TransportFields): ToolTransport {
  if (tool.transport !== undefined) return tool.transport;
  return { kind: 'ledgerloop', route: tool.route ?? '' };
}

/** What the Ledgerloop contract promises: dedupe for the declared retention, lookup by key, seal, fence. */
export const LEDGERLOOP_PROMISES: Promises = {
  keyRetentionMs: 'service',
  lookup: 'by_key',
  seals: true,
  fenced: true,
};

/** What a tool's downstream promises, by its transport. */
export function promisesOf(tool: TransportFields): Promises {
  const t = transportOf(tool);
  switch (t.kind) {
    case 'ledgerloop':
      return LEDGERLOOP_PROMISES;
    case 'function':
      return t.promises ?? {};
    case 'http':
      return {
        ...(t.keyRetentionMs !== undefined ? { keyRetentionMs: t.keyRetentionMs } : {}),
        ...(t.lookup !== undefined
          ? { lookup: t.lookup.by === 'key' ? 'by_key' : 'by_metadata', lookupLagMs: t.lookup.lagMs ?? 0 }
          : {}),
        ...(t.maxInFlightMs !== undefined ? { maxInFlightMs: t.maxInFlightMs } : {}),
        seals: false,
        fenced: false,
      };
    case 'mcp':
      return {
        ...(t.keyRetentionMs !== undefined ? { keyRetentionMs: t.keyRetentionMs } : {}),
        ...(t.lookup === true ? { lookup: 'by_metadata' as const } : {}),
        seals: false,
        fenced: false,
      };
  }
}

/** How an MCP tool's target begins: `mcp:<server>/<tool>` (the audit reads it: an MCP server gives no receipt). */
export const MCP_TARGET_PREFIX = 'mcp:';

/**
 * The target a dispatch names, recorded in its request and re-checked by the signer: the route of a Ledgerloop
 * service, `METHOD path` of an HTTP API, `function:<tool>` of a function.
 */
export function targetOf(tool: TransportFields & { readonly name: string }): string {
  const t = transportOf(tool);
  switch (t.kind) {
    case 'ledgerloop':
      return t.route;
    case 'http':
      return `${t.method} ${t.path}`;
    case 'function':
      return `function:${tool.name}`;
    case 'mcp':
      return `${MCP_TARGET_PREFIX}${tool.service}/${t.tool}`;
  }
}

/** The worker secrets a tool needs: its function's, or its HTTP API's credential. */
export function secretsOf(tool: TransportFields): readonly string[] {
  const t = transportOf(tool);
  if (t.kind === 'function') return t.secrets ?? [];
  if (t.kind === 'http' && t.auth !== undefined) return [t.auth.secret];
  return [];
}
