/**
 * Repeats what Tally and API Gateway ask to be repeated: `503` (Tally's `Retry-After`
 * says when), `429` and API Gateway's `502`/`504`, and a connection that failed (not a
 * credential or token provider that failed: `CredentialsError`, thrown at once). Every
 * call carries its idempotency key, so a repeat can never do a thing twice. A wait is
 * `Retry-After` plus exponential backoff with full jitter, never longer than
 * `maxDelayMs` (a longer `Retry-After` is cut to it). A connection that still fails on
 * the last attempt is a `TransportError`; the caller's abort ends the call at once.
 */
import { CredentialsError, TransportError, retryAfterSeconds } from "./errors.js";

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

/** Waits `ms` milliseconds, or rejects with `signal`'s reason as soon as it is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    signal?.throwIfAborted();
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", abort, { once: true });
  });
}

/**
 * One attempt of `send`, aborted after `timeoutMs` or as soon as `signal` is, its answer
 * read whole meanwhile. The attempt has an `AbortController` of its own, tied to `signal`
 * by a listener taken off when the attempt ends: Node keeps every signal of
 * `AbortSignal.any` attached to a source that lives long (a process's shutdown signal),
 * one more for each attempt.
 */
async function sendAttempt(
  send: (request: Request) => Promise<Response>,
  request: Request,
  body: Uint8Array<ArrayBuffer> | undefined,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Response> {
  const controller = new AbortController();
  const tooLong = new DOMException(`the attempt took longer than ${timeoutMs} ms`, "TimeoutError");
  // Unreferenced, as `AbortSignal.timeout`'s: the request in flight keeps Node running.
  const timer = setTimeout(() => controller.abort(tooLong), timeoutMs).unref();
  const abort = () => controller.abort(signal!.reason);
  signal?.addEventListener("abort", abort, { once: true });
  try {
    const { method, headers, url } = request;
    const response = await send(new Request(url, { method, headers, body, signal: controller.signal }));
    return await arrivedWhole(response);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", abort);
  }
}

/**
 * `response` once its body arrived whole (a copy of it read), so that the body too comes
 * within the attempt; the same `Response`, which redaction.ts knows by its identity.
 */
async function arrivedWhole(response: Response): Promise<Response> {
  await response.clone().arrayBuffer();
  return response;
}

/**
 * `send`, repeated as the policy says; each attempt is a fresh request (signed anew),
 * aborted after `attemptTimeoutMs` or as soon as `signal` is. An abort of `signal`, during
 * an attempt or a wait, rejects with its reason and repeats nothing; nothing stays
 * attached to `signal` once a call ended.
 */
export function retrying(
  send: (request: Request) => Promise<Response>,
  policy: RetryPolicy,
  signal?: AbortSignal,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      let response: Response;
      try {
        response = await sendAttempt(send, request, body, policy.attemptTimeoutMs, signal);
      } catch (failure) {
        if (signal?.aborted) {
          throw signal.reason;
        }
        if (failure instanceof CredentialsError) {
          throw failure;
        }
        if (attempt >= policy.maxAttempts) {
          throw new TransportError(request.method, new URL(request.url).pathname, attempt, failure);
        }
        await sleep(waitBefore(attempt, null, policy), signal);
        continue;
      }
      if (!REPEATED.has(response.status) || attempt >= policy.maxAttempts) {
        return response;
      }
      await response.body?.cancel();
      await sleep(waitBefore(attempt, retryAfterSeconds(response), policy), signal);
    }
  };
}
