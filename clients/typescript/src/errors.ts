/**
 * Every answer that is not a success becomes a `TallyError`: Tally's problem documents
 * (RFC 9457) with their `code` and members, and API Gateway's own answers, which are
 * not problem documents (`{"message": "Forbidden"}`), with a code of their own.
 *
 * Errors end up in logs and alerts, so they keep no secret of the request (redaction.ts):
 * API Gateway's refusal of a signature goes on to quote the request as it should have
 * been signed, and the message keeps only what comes before that quote; then every
 * secret the request carried, and any secret after a name that carries one, is replaced
 * by `<redacted>` in the detail, the message and the problem's members.
 */
import { redacted, redactedText } from "./redaction.js";

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

/** Where API Gateway's refusal of a signature starts quoting the request it expected. */
const SIGNED_REQUEST_QUOTE = /\s*The (?:Canonical String|String-to-Sign)\b[\s\S]*/i;
export class TallyError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** Tally's problem `code`, or a `gateway_*` code for API Gateway's own answers. */
  readonly code: string;
  /**
   * What went wrong, for people: the problem's `detail`, or API Gateway's `message`
   * (without a signature refusal's quote of the request); no secret of the request in either.
   */
  readonly detail: string;
  /** Every member of the problem document (`remaining`, `numbers`, `left`, ...). */
  readonly problem: Readonly<Record<string, unknown>>;
  /** Seconds the answer asked to wait before a repeat (`Retry-After`), if it did. */
  readonly retryAfter: number | null;
  /** Whether API Gateway answered this itself, before Tally saw the request. */
  readonly fromGateway: boolean;
  /**
   * The `draw_id` a `createDraw` request carried (made by the client when not given):
   * repeat the call with it. Unset for the other calls.
   */
  drawId?: string;
  /**
   * The `period` an `updateSeries` move was sent with (read by the client when not given):
   * repeat the call with it. Unset for the other calls.
   */
  period?: string;

  constructor(init: {
    status: number;
    code: string;
    detail: string;
    problem: Record<string, unknown>;
    retryAfter: number | null;
    fromGateway: boolean;
    /** The secrets the request carried (redaction.ts, `sentSecrets`), replaced wherever they appear. */
    secrets?: readonly string[];
  }) {
    const detail = redactedText(init.detail, init.secrets);
    super(`${init.status} ${init.code}: ${detail}`);
    this.name = "TallyError";
    this.status = init.status;
    this.code = init.code;
    this.detail = detail;
    this.problem = redacted(init.problem, init.secrets) as Record<string, unknown>;
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

/**
 * The request got no answer, after every attempt the retry policy allows: the connection
 * failed, or an attempt took longer than `attemptTimeoutMs`. It names the request by its
 * method and path only; `cause` is the last attempt's failure (a `TypeError` of fetch, a
 * `TimeoutError`).
 */
export class TransportError extends Error {
  readonly method: string;
  /** The path as sent, percent-escapes included, without the query. */
  readonly path: string;
  /**
   * The `draw_id` a `createDraw` request carried (made by the client when not given):
   * repeat the call with it. Unset for the other calls.
   */
  drawId?: string;
  /**
   * The `period` an `updateSeries` move was sent with (read by the client when not given):
   * repeat the call with it. Unset for the other calls.
   */
  period?: string;

  constructor(method: string, path: string, attempts: number, cause: unknown) {
    const timedOut = cause instanceof Error && cause.name === "TimeoutError";
    super(`${method} ${path}: no answer after ${attempts} attempt(s) (${timedOut ? "timed out" : "connection failed"})`, {
      cause,
    });
    this.name = "TransportError";
    this.method = method;
    this.path = path;
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

/**
 * The error an answer of `status` with `body` (its text, parsed when JSON) stands for,
 * without any of `secrets`, those the request carried.
 */
export function errorOf(response: Response, body: unknown, secrets: readonly string[] = []): TallyError {
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
      secrets,
    });
  }
  const hasMessage = typeof members.message === "string";
  const message = (hasMessage ? (members.message as string) : String(body ?? "")).replace(SIGNED_REQUEST_QUOTE, "");
  return new TallyError({
    status: response.status,
    code: GATEWAY_CODES[response.status] ?? GATEWAY_OTHER,
    detail: message,
    problem: hasMessage ? { ...members, message } : members,
    retryAfter,
    fromGateway: true,
    secrets,
  });
}
