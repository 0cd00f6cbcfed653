/**
 * The server's refusals, shaped as OpenAI shapes them: an HTTP status and `{ error: { message, type, param, code } }`.
 * Every bad request ends here with a 4xx; nothing a client sends can crash the server.
 */

/** OpenAI's error types, as the `openai` client maps them to its error classes. */
export type ApiErrorType =
  'invalid_request_error' | 'authentication_error' | 'not_found_error' | 'rate_limit_error' | 'server_error';

export interface ApiErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: ApiErrorType;
    readonly param: string | null;
    readonly code: string | null;
  };
}

/** A refusal the server answers with; `status` is the HTTP status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly type: ApiErrorType,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Extra response headers (e.g. `retry-after` on a 429). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  body(): ApiErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** A 400 `invalid_request_error` naming the parameter at fault. */
export function invalidRequest(message: string, param: string | null = null, code = 'invalid_value'): ApiError {
  return new ApiError(400, 'invalid_request_error', message, param, code);
}
