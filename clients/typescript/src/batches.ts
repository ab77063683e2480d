/**
 * A batch's items that lost a race (`rejected` with `contention`) may pass when posted
 * again: they are posted again alone, after their `retry_after`, until none is left or
 * the retry policy's attempts are spent. Their (`source`, `external_ref`) keys make the
 * repeat safe; the results keep the indexes of the request as it was first posted. An
 * abort of `signal` ends a wait at once, rejecting with its reason.
 */
import { type RetryPolicy, sleep, waitBefore } from "./retry.js";
import type { components } from "./schema.js";

type BatchItem = components["schemas"]["BatchItem"];
type BatchResponse = components["schemas"]["BatchResponse"];
type BatchResult = components["schemas"]["BatchResult"];

export async function settleBatch(
  orders: BatchItem[],
  post: (orders: BatchItem[]) => Promise<BatchResponse>,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<BatchResponse> {
  const results: BatchResult[] = [];
  let pending = orders.map((order, index) => ({ order, index }));
  for (let attempt = 1; ; attempt++) {
    const answered = await post(pending.map((p) => p.order));
    const again: typeof pending = [];
    let retryAfter = 0;
    for (const result of answered.results) {
      const first = pending[result.index];
      if (first === undefined) {
        throw new Error(`the batch answered an index it was not sent: ${result.index}`);
      }
      results[first.index] = { ...result, index: first.index };
      if (result.status === "rejected" && result.code === "contention") {
        again.push(first);
        retryAfter = Math.max(retryAfter, result.retry_after ?? 0);
      }
    }
    if (again.length === 0 || attempt >= policy.maxAttempts) {
      return { results };
    }
    await sleep(waitBefore(attempt, retryAfter, policy), signal);
    pending = again;
  }
}
