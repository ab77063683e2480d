/**
 * Secrets kept out of errors, without a server: what API Gateway quotes back of a
 * request's bearer token or signature, and a token or credentials no header may carry.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";

import { errorOf } from "../src/errors.js";
import { CredentialsError, TallyClient, TallyError } from "../src/index.js";
import { recording } from "./recording.js";

const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzaG9wIn0.ZmFrZS1zaWduYXR1cmU";
const SESSION_TOKEN = "IQoJb3JpZ2luX2VjEPa//fake+session=";

/** Every way an error reaches a log: its message, stack, members, JSON, printout and cause. */
function printed(error: unknown): string {
  const e = error as Error & { detail?: string; problem?: unknown };
  return [e.message, e.stack, e.detail, JSON.stringify(e.problem), JSON.stringify(e), inspect(e), String(e.cause)].join("\n");
}

/** A client whose every request API Gateway answers `status` with `message(request)`. */
function answeredBy(status: number, message: (request: Request) => string, options: object) {
  const sent: Request[] = [];
  const tally = new TallyClient({
    baseUrl: "https://abc.execute-api.eu-west-1.amazonaws.com",
    retry: { maxAttempts: 1 },
    fetch: async (request) => {
      sent.push(request);
      return Response.json({ message: message(request), echo: [{ seen: message(request) }] }, { status });
    },
    ...options,
  });
  return { tally, sent };
}

test("an IAM API's refusal of a bearer token leaves the token nowhere in the error", async () => {
  const refusal = `'${JWT}' not a valid key=value pair (missing equal-sign) in Authorization header: 'Bearer ${JWT}'.`;
  const { tally, sent } = answeredBy(403, () => refusal, { token: () => JWT });
  await assert.rejects(tally.getDraw("d"), (error: unknown) => {
    assert.ok(error instanceof TallyError);
    assert.deepEqual([error.status, error.code, error.fromGateway], [403, "gateway_forbidden", true]);
    assert.match(error.detail, /not a valid key=value pair/);
    assert.ok(!printed(error).includes(JWT), printed(error));
    return true;
  });
  assert.equal(sent[0]!.headers.get("authorization"), `Bearer ${JWT}`);
});

test("a token, signature or session token echoed back bare is still left out", async () => {
  const bearer = answeredBy(401, () => `unknown ${JWT}`, { token: () => JWT });
  await assert.rejects(bearer.tally.getDraw("d"), (error: unknown) => !printed(error).includes(JWT));

  const credentials = { accessKeyId: "ASIAFAKE", secretAccessKey: "fake-secret", sessionToken: SESSION_TOKEN };
  const signature = (request: Request) => /Signature=(\w+)/.exec(request.headers.get("authorization")!)![1]!;
  const signed = answeredBy(403, (r) => `got ${signature(r)} and ${r.headers.get("x-amz-security-token")}`, {
    region: "eu-west-1",
    credentials,
  });
  await assert.rejects(signed.tally.getDraw("d"), (error: unknown) => {
    const text = printed(error);
    for (const secret of [signature(signed.sent[0]!), SESSION_TOKEN]) {
      assert.ok(!text.includes(secret), text);
    }
    return true;
  });
});

test("what follows a name that carries a secret is redacted in any answer", () => {
  const messages = {
    "Authorization=Bearer abc.def.ghi": "Authorization=Bearer <redacted>",
    "Credential=ASIAFAKE/20260101/eu-west-1/execute-api/aws4_request, Signature=0a1b2c":
      "Credential=<redacted>, Signature=<redacted>",
    "'abc.def' not a valid key=value pair (missing equal-sign) in Authorization header: 'Bearer abc.def'.":
      "'<redacted>' not a valid key=value pair (missing equal-sign) in Authorization header: <redacted>",
    "Invalid key=value pair in Authorization header (hashed with SHA-256 and encoded with Base64): 'q83v'.":
      "Invalid key=value pair in Authorization header (hashed with SHA-256 and encoded with Base64): <redacted>",
    "Authorization header requires 'Credential' parameter.": "Authorization header requires 'Credential' parameter.",
  };
  for (const [message, kept] of Object.entries(messages)) {
    const error = errorOf(new Response(null, { status: 403 }), { message, seen: [message] });
    assert.deepEqual([error.detail, error.problem], [kept, { message: kept, seen: [kept] }]);
  }
});

test("a token no header may carry is refused at once as a CredentialsError that does not quote it", async () => {
  for (const token of ["first-line\nsecond-line", "first-line\r\nsecond-line", "first-line\0second-line", "first-lineĀ"]) {
    let asked = 0;
    const { tally, sent } = answeredBy(200, () => "", {
      token: () => {
        asked += 1;
        return token;
      },
      retry: { maxAttempts: 6, baseDelayMs: 1 },
    });
    await assert.rejects(tally.getDraw("d"), (error: unknown) => {
      assert.ok(error instanceof CredentialsError, String(error));
      assert.ok(!/first-line|second-line/.test(printed(error)), printed(error));
      return true;
    });
    assert.deepEqual([asked, sent.length], [1, 0], JSON.stringify(token));
  }
});

test("credentials no header may carry are refused at once as a CredentialsError that does not quote them", async () => {
  const sessionToken = "first-line\r\nx-injected: yes";
  const { tally, sent } = answeredBy(200, () => "", {
    region: "eu-west-1",
    credentials: { accessKeyId: "ASIAFAKE", secretAccessKey: "fake-secret", sessionToken },
    retry: { maxAttempts: 6, baseDelayMs: 1 },
  });
  await assert.rejects(tally.getDraw("d"), (error: unknown) => {
    assert.ok(error instanceof CredentialsError, String(error));
    assert.ok(!/first-line|x-injected/.test(printed(error)), printed(error));
    return true;
  });
  assert.equal(sent.length, 0);
});

test("the whitespace around a token, such as a token file's last line break, is left out", async () => {
  const { tally, sent } = answeredBy(200, () => "", { token: () => ` ${JWT}\r\n` });
  await tally.getDraw("d");
  assert.equal(sent[0]!.headers.get("authorization"), `Bearer ${JWT}`);
});

test("a body JSON cannot carry (a BigInt, a cycle) is refused by an error that holds nothing of it", async () => {
  const { tally, sent } = recording();
  const cyclic: Record<string, unknown> = { payment_id: "pi_1", quantity: 1, token: "tok_json_card" };
  cyclic.again = cyclic;
  const bodies = [{ payment_id: "pi_1", quantity: 1n, token: "tok_json_card" }, cyclic];
  for (const body of bodies) {
    await assert.rejects(tally.purchase("d", body as never), (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.ok(!printed(error).includes("tok_json_card"), printed(error));
      return true;
    });
  }
  assert.deepEqual(sent, []);
});
