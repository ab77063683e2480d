/**
 * How attempts are sent, without a server: credentials kept only while they last long,
 * a request that never got an answer as a `TransportError` without secrets, the caller's
 * abort (of an attempt, a wait, a batch's wait) and nothing left attached to its signal,
 * and path characters escaped as the other clients escape them.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";

import { TallyClient, TransportError } from "../src/index.js";
import { recording } from "./recording.js";

const SESSION_TOKEN = "IQoJb3JpZ2luX2VjEPa//transport+session=";
const OUTCOME_UNKNOWN = { status: 503, code: "outcome_unknown", detail: "try again" };

/**
 * `settling`, with a timer that keeps Node running meanwhile (an attempt's timeout does
 * not, a socket in flight would) and fails it after `ms`.
 */
async function within<T>(ms: number, settling: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([settling, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A credentials provider that counts its calls, giving credentials that expire in `minutes`. */
function counting(minutes: number) {
  const provider = async () => {
    provider.calls += 1;
    return {
      accessKeyId: "ASIAFAKE",
      secretAccessKey: "fake-secret",
      sessionToken: SESSION_TOKEN,
      expiration: new Date(Date.now() + minutes * 60_000),
    };
  };
  provider.calls = 0;
  return provider;
}

test("a credentials provider is asked once while its credentials last, again shortly before they expire", async () => {
  const fetch = async () => Response.json({ draw_id: "d" });
  const lasting = counting(60);
  const tally = new TallyClient({ baseUrl: "http://tally.test", region: "eu-west-1", credentials: lasting, fetch });
  for (let call = 0; call < 5; call++) {
    await tally.getDraw("d");
  }
  assert.equal(lasting.calls, 1);

  // Within five minutes of their end, credentials are asked for again at each call.
  const ending = counting(4);
  const soon = new TallyClient({ baseUrl: "http://tally.test", region: "eu-west-1", credentials: ending, fetch });
  for (let call = 0; call < 3; call++) {
    await soon.getDraw("d");
  }
  assert.equal(ending.calls, 3);
});

test("a credentials provider whose credentials carry no expiration is asked for every call: rotated keys sign", async () => {
  let rotations = 0;
  const rotating = async () => ({ accessKeyId: `AKIDROTATED${++rotations}`, secretAccessKey: `secret-${rotations}` });
  const signedWith: string[] = [];
  const fetch = async (request: Request) => {
    signedWith.push(/Credential=(\w+)\//.exec(request.headers.get("authorization") ?? "")?.[1] ?? "unsigned");
    return Response.json({ draw_id: "d" });
  };
  const tally = new TallyClient({ baseUrl: "http://tally.test", region: "eu-west-1", credentials: rotating, fetch });
  for (let call = 0; call < 3; call++) {
    await tally.getDraw("d");
  }
  assert.deepEqual(signedWith, ["AKIDROTATED1", "AKIDROTATED2", "AKIDROTATED3"]);
});

test("a request that got no answer after every attempt is a TransportError naming it, without secrets", async () => {
  const tally = new TallyClient({
    // Nothing listens on port 1: each attempt's connection is refused.
    baseUrl: "http://127.0.0.1:1",
    region: "eu-west-1",
    credentials: { accessKeyId: "ASIAFAKE", secretAccessKey: "fake-secret", sessionToken: SESSION_TOKEN },
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
  });
  await assert.rejects(tally.purchase("d", { payment_id: "pi_1", quantity: 1, token: "tok_transport_card" }), (error) => {
    assert.ok(error instanceof TransportError);
    assert.deepEqual([error.method, error.path], ["POST", "/draws/d/purchases"]);
    assert.match(error.message, /^POST \/draws\/d\/purchases: no answer after 2 attempt\(s\) \(connection failed\)$/);
    const printed = [error.message, error.stack, inspect(error, { depth: 10 }), JSON.stringify(error)].join("\n");
    for (const secret of [SESSION_TOKEN, "AWS4-HMAC-SHA256", "Signature=", "tok_transport_card"]) {
      assert.ok(!printed.includes(secret), `${secret} in ${printed}`);
    }
    return true;
  });
});

test("an attempt that takes too long is aborted and repeated, and the last one is a TransportError", async () => {
  let attempts = 0;
  const tally = new TallyClient({
    baseUrl: "http://tally.test",
    credentials: null,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, attemptTimeoutMs: 50 },
    // Answers nothing until the attempt is aborted.
    fetch: (request) =>
      new Promise<Response>((_, reject) => {
        attempts += 1;
        request.signal.addEventListener("abort", () => reject(request.signal.reason));
      }),
  });
  await assert.rejects(within(2_000, tally.getDraw("d")), (error) => {
    assert.ok(error instanceof TransportError);
    assert.match(error.message, /^GET \/draws\/d: no answer after 2 attempt\(s\) \(timed out\)$/);
    assert.equal((error.cause as Error).name, "TimeoutError");
    return true;
  });
  assert.equal(attempts, 2);
});

test("the caller's signal aborts an attempt or a wait at once, and nothing is repeated", async () => {
  const sent: string[] = [];
  const stop = new AbortController();
  const tally = new TallyClient({
    baseUrl: "http://tally.test",
    credentials: null,
    signal: stop.signal,
    retry: { maxAttempts: 6, baseDelayMs: 1, maxDelayMs: 60_000 },
    fetch: (request) =>
      new Promise<Response>((resolve, reject) => {
        sent.push(new URL(request.url).pathname);
        if (request.url.endsWith("/waits")) {
          // A 503 asking for a wait of a minute before the repeat.
          resolve(Response.json(OUTCOME_UNKNOWN, { status: 503, headers: { "retry-after": "60" } }));
        }
        request.signal.addEventListener("abort", () => reject(request.signal.reason));
      }),
  });
  const inAttempt = tally.getDraw("hangs");
  const inWait = tally.getDraw("waits");
  setTimeout(() => stop.abort(new Error("shutting down")), 50);
  await assert.rejects(within(2_000, inAttempt), { message: "shutting down" });
  await assert.rejects(within(2_000, inWait), { message: "shutting down" });
  await assert.rejects(within(2_000, tally.getDraw("after")), { message: "shutting down" });
  assert.deepEqual(sent.sort(), ["/draws/hangs", "/draws/waits"]);
});

test("the caller's signal stops the wait before a batch's contended items are posted again", async () => {
  const stop = new AbortController();
  let posts = 0;
  const tally = new TallyClient({
    baseUrl: "http://tally.test",
    credentials: null,
    signal: stop.signal,
    fetch: async (request) => {
      posts += 1;
      const { orders } = (await request.json()) as { orders: Array<{ external_ref: string }> };
      // Every item lost a race and may pass in 20 s.
      const results = orders.map((order, index) => ({
        index,
        external_ref: order.external_ref,
        status: "rejected",
        code: "contention",
        retry_after: 20,
      }));
      return Response.json({ results });
    },
  });
  setTimeout(() => stop.abort(new Error("shutting down")), 10);
  const batch = tally.createSeriesBatch("INV", { source: "erp", orders: [{ external_ref: "PO-1" }] });
  await assert.rejects(within(500, batch), { message: "shutting down" });
  assert.equal(posts, 1);
});

test("a call leaves nothing attached to the caller's signal, whatever its attempts and waits", async () => {
  const stop = new AbortController();
  // The abort listeners the client keeps on the caller's signal, counted as added and removed.
  const listening = new Set<unknown>();
  const { addEventListener, removeEventListener } = stop.signal;
  stop.signal.addEventListener = (type: string, listener: unknown, options?: unknown) => {
    listening.add(listener);
    Reflect.apply(addEventListener, stop.signal, [type, listener, options]);
  };
  stop.signal.removeEventListener = (type: string, listener: unknown, options?: unknown) => {
    listening.delete(listener);
    Reflect.apply(removeEventListener, stop.signal, [type, listener, options]);
  };
  const attempts: Request[] = [];
  const tally = new TallyClient({
    baseUrl: "http://tally.test",
    credentials: null,
    signal: stop.signal,
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1, attemptTimeoutMs: 50 },
    // Each call's first attempt gets a 503, its second none in time, its third an answer.
    fetch: (request) =>
      new Promise<Response>((resolve, reject) => {
        attempts.push(request);
        request.signal.addEventListener("abort", () => reject(request.signal.reason));
        if (attempts.length % 3 === 1) {
          resolve(Response.json(OUTCOME_UNKNOWN, { status: 503 }));
        } else if (attempts.length % 3 === 0) {
          resolve(Response.json({ draw_id: "d" }));
        }
      }),
  });
  for (let call = 0; call < 20; call++) {
    assert.equal((await within(2_000, tally.getDraw("d"))).draw_id, "d");
  }
  assert.equal(attempts.length, 60);
  assert.equal(listening.size, 0);
  // Neither the caller's abort nor an attempt's timer reaches an attempt that ended: only
  // the attempts that got no answer in time were aborted, by their own timer.
  stop.abort(new Error("shutting down"));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const aborted = attempts.map((request) => (request.signal.aborted ? request.signal.reason.name : "answered"));
  assert.deepEqual(aborted, Array.from({ length: 20 }, () => ["answered", "TimeoutError", "answered"]).flat());
});

test("every path character outside A-Za-z0-9-._~ travels escaped, as the PHP client and botocore send it", async () => {
  const { tally, paths } = recording();
  await tally.getLimits("ann(1)!'*@example.com");
  await tally.orderByRef("erp", "SO/2026 0001~a_b-c.d");
  assert.deepEqual(paths(), [
    "/payers/ann%281%29%21%27%2A%40example.com/limits",
    "/sources/erp/orders/SO%2F2026%200001~a_b-c.d",
  ]);
});
