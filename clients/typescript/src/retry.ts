/**
 * Repeats what Tally and API Gateway ask to be repeated: `503` (Tally's `Retry-After`
 * says when), `429` and API Gateway's `502`/`504`, and a connection that failed (not a
 * credential or token provider that failed: `CredentialsError`, thrown at once). Every
 * call carries its idempotency key, so a repeat can never do a thing twice. A wait is
 * `Retry-After` plus exponential backoff with full jitter, never longer than
 * `maxDelayMs` (a longer `Retry-After` is cut to it).
 */
import { CredentialsError, retryAfterSeconds } from "./errors.js";

export interface RetryPolicy {
  /** Attempts in all, the first included (default 6; 1 repeats nothing). */
  maxAttempts: number;
  /** The first backoff ceiling in milliseconds (default 200), doubled on each repeat. */
  baseDelayMs: number;
  /** The longest single wait in milliseconds, `Retry-After` included (default 20,000). */
  maxDelayMs: number;
  /**
   * How long one attempt may take in milliseconds (default 30,000, the PHP client's
   * too): a slower one is aborted and repeated like a failed connection.
   */
  attemptTimeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 200,
  maxDelayMs: 20_000,
  attemptTimeoutMs: 30_000,
};

/** The statuses that are repeated. */
export const REPEATED: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** Milliseconds to wait before repeat number `attempt` (1 for the first repeat). */
export function waitBefore(
  attempt: number,
  retryAfter: number | null,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.min(policy.maxDelayMs, (retryAfter ?? 0) * 1000 + random() * ceiling);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `send`, repeated as the policy says; each attempt is a fresh request (signed anew). */
export function retrying(
  send: (request: Request) => Promise<Response>,
  policy: RetryPolicy,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
    for (let attempt = 1; ; attempt++) {
      const copy = new Request(request.url, {
        method: request.method,
        headers: request.headers,
        body,
        signal: AbortSignal.timeout(policy.attemptTimeoutMs),
      });
      let response: Response;
      try {
        response = await send(copy);
      } catch (failure) {
        if (failure instanceof CredentialsError || attempt >= policy.maxAttempts) {
          throw failure;
        }
        await sleep(waitBefore(attempt, null, policy));
        continue;
      }
      if (!REPEATED.has(response.status) || attempt >= policy.maxAttempts) {
        return response;
      }
      await response.body?.cancel();
      await sleep(waitBefore(attempt, retryAfterSeconds(response), policy));
    }
  };
}
