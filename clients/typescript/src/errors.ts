/**
 * Every answer that is not a success becomes a `TallyError`: Tally's problem documents
 * (RFC 9457) with their `code` and members, and API Gateway's own answers, which are
 * not problem documents (`{"message": "Forbidden"}`), with a code of their own.
 */

/** The code of an API Gateway answer, by its status (docs/api.md, "API Gateway's own answers"). */
export const GATEWAY_CODES: Readonly<Record<number, string>> = {
  401: "gateway_unauthorized",
  403: "gateway_forbidden",
  404: "gateway_not_found",
  413: "gateway_body_too_large",
  429: "gateway_throttled",
  500: "gateway_error",
  502: "gateway_error",
  503: "gateway_unavailable",
  504: "gateway_timeout",
};

/** The code of an API Gateway answer whose status the table above does not list. */
export const GATEWAY_OTHER = "gateway_error";

export class TallyError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** Tally's problem `code`, or a `gateway_*` code for API Gateway's own answers. */
  readonly code: string;
  /** What went wrong, for people: the problem's `detail`, or API Gateway's `message`. */
  readonly detail: string;
  /** Every member of the problem document (`remaining`, `numbers`, `left`, ...). */
  readonly problem: Readonly<Record<string, unknown>>;
  /** Seconds the answer asked to wait before a repeat (`Retry-After`), if it did. */
  readonly retryAfter: number | null;
  /** Whether API Gateway answered this itself, before Tally saw the request. */
  readonly fromGateway: boolean;

  constructor(init: {
    status: number;
    code: string;
    detail: string;
    problem: Record<string, unknown>;
    retryAfter: number | null;
    fromGateway: boolean;
  }) {
    super(`${init.status} ${init.code}: ${init.detail}`);
    this.name = "TallyError";
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.problem = init.problem;
    this.retryAfter = init.retryAfter;
    this.fromGateway = init.fromGateway;
  }
}

/**
 * Credentials or a token that could not be had (the provider threw): thrown at once,
 * never repeated, since another attempt would ask the same provider. `cause` is the
 * provider's error.
 */
export class CredentialsError extends Error {
  constructor(cause: unknown) {
    super("no credentials or token to send the request with", { cause });
    this.name = "CredentialsError";
  }
}

/** Seconds of a `Retry-After` header given in seconds; `null` when absent or a date. */
export function retryAfterSeconds(response: Response): number | null {
  const value = response.headers.get("retry-after");
  if (value === null || !/^\d+$/.test(value.trim())) {
    return null;
  }
  return Number(value.trim());
}

/** The error an answer of `status` with `body` (its text, parsed when JSON) stands for. */
export function errorOf(response: Response, body: unknown): TallyError {
  const retryAfter = retryAfterSeconds(response);
  const members =
    typeof body === "object" && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  if (typeof members.code === "string") {
    return new TallyError({
      status: response.status,
      code: members.code,
      detail: typeof members.detail === "string" ? members.detail : "",
      problem: members,
      retryAfter,
      fromGateway: false,
    });
  }
  const message = typeof members.message === "string" ? members.message : String(body ?? "");
  return new TallyError({
    status: response.status,
    code: GATEWAY_CODES[response.status] ?? GATEWAY_OTHER,
    detail: message,
    problem: members,
    retryAfter,
    fromGateway: true,
  });
}
