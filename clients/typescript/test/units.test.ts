/**
 * Pure logic, without a server: how answers become errors, how long a repeat waits, and
 * how a batch's contended items are posted again.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { settleBatch } from "../src/batches.js";
import { errorOf } from "../src/errors.js";
import { DEFAULT_RETRY, waitBefore } from "../src/index.js";

test("a problem keeps its code and members; a gateway answer gets a code of its own", () => {
  const problem = errorOf(
    new Response(null, { status: 503, headers: { "retry-after": "2" } }),
    { type: "about:blank", title: "Service Unavailable", status: 503, code: "throttled", detail: "try again" },
  );
  assert.deepEqual([problem.code, problem.retryAfter, problem.fromGateway], ["throttled", 2, false]);
  const gateway = errorOf(new Response(null, { status: 403 }), { message: "Forbidden" });
  assert.deepEqual([gateway.code, gateway.detail, gateway.fromGateway], ["gateway_forbidden", "Forbidden", true]);
  const odd = errorOf(new Response(null, { status: 418 }), "teapot");
  assert.deepEqual([odd.code, odd.detail], ["gateway_error", "teapot"]);
});

test("a wait is Retry-After plus full jitter under a doubling ceiling, never past the cap", () => {
  const policy = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1_000 };
  assert.equal(waitBefore(1, null, policy, () => 0), 0);
  assert.equal(waitBefore(1, null, policy, () => 1), 100);
  assert.equal(waitBefore(3, null, policy, () => 1), 400);
  assert.equal(waitBefore(9, null, policy, () => 1), 1_000);
  assert.equal(waitBefore(1, 2, policy, () => 0), 1_000);
  assert.equal(waitBefore(1, 0.5, policy, () => 0.5), 550);
});

test("a batch posts its contended items again alone and keeps the first indexes", async () => {
  const posted: string[][] = [];
  const answer = await settleBatch(
    [{ external_ref: "a" }, { external_ref: "b" }, { external_ref: "c" }],
    async (orders) => {
      posted.push(orders.map((o) => o.external_ref));
      return {
        results: orders.map((o, index) =>
          posted.length === 1 && o.external_ref !== "a"
            ? { index, external_ref: o.external_ref, status: "rejected" as const, code: "contention", retry_after: 0 }
            : { index, external_ref: o.external_ref, status: "created" as const, order_number: `N-${o.external_ref}` },
        ),
      };
    },
    { ...DEFAULT_RETRY, baseDelayMs: 1 },
  );
  assert.deepEqual(posted, [["a", "b", "c"], ["b", "c"]]);
  assert.deepEqual(
    answer.results.map((r) => [r.index, r.external_ref, r.status]),
    [[0, "a", "created"], [1, "b", "created"], [2, "c", "created"]],
  );
});
