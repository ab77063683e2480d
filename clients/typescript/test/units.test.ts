/**
 * Pure logic, without a server: how answers become errors, how long a repeat waits, and
 * how a batch's contended items are posted again.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { settleBatch } from "../src/batches.js";
import { errorOf } from "../src/errors.js";
import { CredentialsError, DEFAULT_RETRY, GATEWAY_CODES, GATEWAY_OTHER, TallyClient, waitBefore } from "../src/index.js";
import { REPEATED } from "../src/retry.js";
import { recording } from "./recording.js";

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

test("a gateway refusal of a signature keeps the sentence before its quote of the request, and no session token", () => {
  const sentence =
    "The request signature we calculated does not match the signature you provided. " +
    "Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";
  const quote =
    "\n\nThe Canonical String for this request should have been\n'POST\n/draws/d/purchases\n\n" +
    "host:abc.execute-api.eu-west-1.amazonaws.com\nx-amz-date:20260101T000000Z\n" +
    "x-amz-security-token:IQoJb3JpZ2luX2VjEPa//secret+token=\n\nhost;x-amz-date;x-amz-security-token\n" +
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'\n\n" +
    "The String-to-Sign should have been\n'AWS4-HMAC-SHA256\n20260101T000000Z\n" +
    "20260101/eu-west-1/execute-api/aws4_request\n2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881'\n";
  const refusal = errorOf(new Response(null, { status: 403 }), { message: sentence + quote });
  assert.deepEqual([refusal.detail, refusal.problem], [sentence, { message: sentence }]);
  assert.equal(refusal.message, `403 gateway_forbidden: ${sentence}`);

  const unreadable = errorOf(
    new Response(null, { status: 502 }),
    "x-amz-security-token: IQoJb3JpZ2luX2VjEPa//secret+token=\nbad gateway",
  );
  assert.equal(unreadable.detail, "x-amz-security-token: <redacted>\nbad gateway");
  const problem = errorOf(new Response(null, { status: 400 }), {
    code: "invalid_body",
    detail: "got x-amz-security-token:IQoJb3JpZ2luX2VjEPa//secret+token=",
    seen: { headers: ["X-Amz-Security-Token:IQoJb3JpZ2luX2VjEPa//secret+token="] },
  });
  assert.equal(problem.detail, "got x-amz-security-token:<redacted>");
  assert.deepEqual(problem.problem.seen, { headers: ["X-Amz-Security-Token:<redacted>"] });
  for (const error of [refusal, unreadable, problem]) {
    assert.doesNotMatch(error.message + JSON.stringify(error.problem), /secret\+token/);
  }
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

test("a path parameter of `.` or `..` is refused before any request: a URL would drop it", async () => {
  const { tally, paths } = recording({ purchases: [], cursor: null });
  await assert.rejects(tally.payerPurchases("d", "..").next(), /payer_id cannot be "\.\."/);
  await assert.rejects(tally.getLimits(".."), /payer_id cannot be "\.\."/);
  await assert.rejects(tally.getDraw("."), /draw_id cannot be "\."/);
  await assert.rejects(tally.getSeriesOrder("..", "N-1"), /series_id cannot be "\.\."/);
  assert.deepEqual(paths(), []);
  await tally.getLimits("...");
  await tally.payerPurchases("d", "..x").next();
  assert.deepEqual(paths(), ["/payers/.../limits", "/draws/d/payers/..x/purchases"]);
});

test("an empty path parameter is refused before any request: the path would have an empty segment", async () => {
  const { tally, paths } = recording({ purchases: [], cursor: null });
  await assert.rejects(tally.payerPurchases("d", "").next(), /payer_id cannot be empty/);
  await assert.rejects(tally.getDraw(""), /draw_id cannot be empty/);
  await assert.rejects(tally.orderByRef("webshop", ""), /external_ref cannot be empty/);
  assert.deepEqual(paths(), []);
  await tally.payerPurchases("d", " ").next();
  assert.deepEqual(paths(), ["/draws/d/payers/%20/purchases"]);
});

test("a credential or token provider that fails is asked once, and nothing is sent", async () => {
  const sent: string[] = [];
  const fetch = async (request: Request) => {
    sent.push(request.url);
    return Response.json({});
  };
  let asked = 0;
  const failing = () => {
    asked += 1;
    throw new Error("no profile named tally");
  };
  const signed = new TallyClient({ baseUrl: "http://tally.test", region: "eu-west-1", credentials: failing, fetch });
  await assert.rejects(signed.getDraw("d"), (e: unknown) => {
    assert.ok(e instanceof CredentialsError);
    assert.match(String((e as CredentialsError).cause), /no profile named tally/);
    return true;
  });
  const bearer = new TallyClient({ baseUrl: "http://tally.test", token: failing, fetch });
  await assert.rejects(bearer.getDraw("d"), CredentialsError);
  assert.deepEqual([asked, sent], [2, []]);
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

test("API Gateway's answers get the codes and repeats docs/api.md gives them", () => {
  const page = readFileSync(new URL("../../../../docs/api.md", import.meta.url), "utf8");
  const section = page.split("### API Gateway's own answers")[1]!.split("\n#")[0]!;
  const codes: Record<number, string> = {};
  const repeated: number[] = [];
  for (const row of section.split("\n").filter((line) => /^\| (`\d{3}`|any other)/.test(line))) {
    const [, status, , , code, repeat] = row.split("|").map((cell) => cell.trim());
    const gatewayCode = /`(gateway_\w+)`/.exec(code!)![1]!;
    if (status!.includes("any other")) {
      assert.equal(GATEWAY_OTHER, gatewayCode);
      continue;
    }
    const number = Number(/`(\d{3})`/.exec(status!)![1]);
    codes[number] = gatewayCode;
    if (repeat!.startsWith("yes")) {
      repeated.push(number);
    }
  }
  assert.deepEqual(GATEWAY_CODES, codes);
  assert.deepEqual([...REPEATED].filter((s) => s in codes).sort(), repeated.sort());
});
