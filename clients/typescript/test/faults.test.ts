/**
 * Repeats through real faults: Tally's own `503`s with `Retry-After` (DynamoDB throttled,
 * or a write committed whose answer was lost) and API Gateway's `429`s, each settled
 * exactly once; API Gateway's refusals as errors of their own; credentials from the
 * environment, a profile, a container's endpoint and an instance's metadata service; a
 * bearer token for a stack with a JWT authorizer.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { TallyError } from "../src/index.js";
import { client, collect, counts, dynamodbFault, gatewayFault, grown, unique } from "./world.js";

test("Tally's 503 after throttling is repeated and the purchase is made once", async () => {
  const tally = client();
  const drawId = unique("ts-throttled");
  await tally.createDraw({ draw_id: drawId, total_tickets: 100 });
  const before = await counts();
  await dynamodbFault({ operation: "TransactWriteItems", kind: "throttle", count: 6 });
  const bought = await tally.purchase(drawId, { payment_id: "slow", quantity: 4 });
  const seen = grown(before, await counts());
  assert.ok((seen["tally.503"] ?? 0) >= 1, JSON.stringify(seen));
  assert.equal(bought.tickets.length, 4);
  assert.equal((await tally.getDraw(drawId)).sold, 4);
});

test("a write whose answer was lost is repeated into a replay, never a second purchase", async () => {
  const tally = client();
  const drawId = unique("ts-lost");
  await tally.createDraw({ draw_id: drawId, total_tickets: 100 });
  const before = await counts();
  await dynamodbFault({ operation: "TransactWriteItems", kind: "error_after", count: 6 });
  const bought = await tally.purchase(drawId, { payment_id: "lost", quantity: 3 });
  const seen = grown(before, await counts());
  assert.ok((seen["tally.503"] ?? 0) >= 1, JSON.stringify(seen));
  assert.equal((await tally.getDraw(drawId)).sold, 3);
  const listed = await collect(tally.drawPurchases(drawId));
  assert.deepEqual(listed.map((p) => [p.payment_id, p.tickets]), [["lost", bought.tickets]]);
});

test("API Gateway's 429s are repeated with backoff; past the attempts they are a gateway_throttled error", async () => {
  const tally = client();
  const drawId = unique("ts-429");
  await tally.createDraw({ draw_id: drawId, total_tickets: 10 });
  await gatewayFault({ status: 429, count: 2, path_prefix: `/draws/${drawId}` });
  const before = await counts();
  assert.equal((await tally.getDraw(drawId)).draw_id, drawId);
  assert.equal(grown(before, await counts())["gateway.injected.429"], 2);

  const impatient = client({ retry: { maxAttempts: 2, baseDelayMs: 1 } });
  await gatewayFault({ status: 429, count: 2, path_prefix: `/draws/${drawId}` });
  await assert.rejects(impatient.getDraw(drawId), (error: unknown) => {
    assert.ok(error instanceof TallyError);
    assert.deepEqual([error.status, error.code, error.fromGateway], [429, "gateway_throttled", true]);
    assert.equal(error.detail, "Too Many Requests");
    return true;
  });
});

// The refusal quotes the request it expected, session token included: the error keeps neither.
test("API Gateway's refusal of a bad signature is a gateway_forbidden error without the session token", async () => {
  const sessionToken = process.env.TALLY_TEST_SESSION_TOKEN!;
  const forged = client({
    credentials: { accessKeyId: process.env.TALLY_TEST_SESSION_KEY!, secretAccessKey: "not-the-secret", sessionToken },
  });
  await assert.rejects(forged.getDraw("any"), (error: unknown) => {
    assert.ok(error instanceof TallyError);
    assert.deepEqual([error.status, error.code, error.fromGateway], [403, "gateway_forbidden", true]);
    assert.match(error.detail, /signature/);
    for (const text of [error.message, JSON.stringify(error.problem)]) {
      assert.ok(!text.includes(sessionToken), text);
      assert.ok(!text.includes("Canonical String"), text);
    }
    return true;
  });
});

test("with a token provider, requests carry its bearer token instead of a signature, asked for each attempt", async () => {
  let asked = 0;
  const token = async () => {
    asked += 1;
    return process.env.TALLY_TOKEN!;
  };
  const tally = client({ token });
  const drawId = unique("ts-token");
  const before = await counts();
  assert.equal((await tally.createDraw({ draw_id: drawId, total_tickets: 5 })).draw_id, drawId);
  await gatewayFault({ status: 429, count: 1, path_prefix: `/draws/${drawId}` });
  assert.equal((await tally.getDraw(drawId)).draw_id, drawId);
  const seen = grown(before, await counts());
  assert.equal(seen["gateway.token"], 3, JSON.stringify(seen));
  assert.equal(seen["gateway.signed"] ?? 0, 0, JSON.stringify(seen));
  assert.equal(asked, 3);

  const stranger = client({ token: () => "not-a-token-of-the-issuer" });
  await assert.rejects(stranger.getDraw(drawId), (error: unknown) => {
    assert.ok(error instanceof TallyError);
    assert.deepEqual([error.status, error.code, error.fromGateway], [401, "gateway_unauthorized", true]);
    return true;
  });
  const credentials = { accessKeyId: "AKID", secretAccessKey: "secret" };
  assert.throws(() => client({ token, credentials }), /not both/);
});

/** Runs `body` with the environment's credentials replaced by `environment`. */
async function withEnvironment(environment: Record<string, string>, body: () => Promise<void>): Promise<void> {
  const saved = { ...process.env };
  delete process.env.AWS_ACCESS_KEY_ID;
  delete process.env.AWS_SECRET_ACCESS_KEY;
  const home = mkdtempSync(join(tmpdir(), "tally-aws-"));
  Object.assign(process.env, {
    AWS_SHARED_CREDENTIALS_FILE: join(home, "credentials"),
    AWS_CONFIG_FILE: join(home, "config"),
    ...environment,
  });
  try {
    await body();
  } finally {
    process.env = saved;
  }
}

async function createsADraw(counted?: string): Promise<void> {
  const before = await counts();
  const drawId = unique("ts-chain");
  assert.equal((await client().createDraw({ draw_id: drawId, total_tickets: 3 })).draw_id, drawId);
  if (counted !== undefined) {
    assert.equal(grown(before, await counts())[counted], 1);
  }
}

test("credentials come from a profile, and temporary ones carry their session token", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "tally-aws-")), "credentials");
  writeFileSync(
    file,
    `[tally-test]\naws_access_key_id = ${process.env.TALLY_TEST_SESSION_KEY}\n` +
      `aws_secret_access_key = ${process.env.TALLY_TEST_SESSION_SECRET}\n` +
      `aws_session_token = ${process.env.TALLY_TEST_SESSION_TOKEN}\n`,
  );
  await withEnvironment(
    { AWS_PROFILE: "tally-test", AWS_SHARED_CREDENTIALS_FILE: file, AWS_EC2_METADATA_DISABLED: "true" },
    () => createsADraw(),
  );
});

test("credentials come from a container's endpoint", async () => {
  const environment = {
    AWS_CONTAINER_CREDENTIALS_FULL_URI: `${process.env.TALLY_HARNESS}/container-credentials`,
    AWS_CONTAINER_AUTHORIZATION_TOKEN: process.env.HARNESS_CONTAINER_TOKEN!,
  };
  await withEnvironment(environment, () => createsADraw("credentials.container"));
});

test("credentials come from an instance's role", async () => {
  const environment = { AWS_EC2_METADATA_SERVICE_ENDPOINT: process.env.TALLY_HARNESS! };
  await withEnvironment(environment, () => createsADraw("credentials.instance"));
});
