/**
 * What an error may not show. Errors end up in logs and alerts, and API Gateway quotes
 * back what a request carried: a refusal of a signature quotes the request it expected,
 * its `x-amz-security-token` header included; an Authorization header it cannot read
 * (a bearer token sent to an IAM-authorised API) is quoted whole, and its parts that are
 * not `key=value` pairs one by one. So every string of an error is cleaned twice:
 *
 * - each secret the request carried (`sentSecrets`: the bearer token, the session token,
 *   the signature, the whole Authorization header) is replaced wherever it appears;
 * - what follows the names that carry secrets (`SECRET_AFTER`) is replaced, for a secret
 *   of another request or one API Gateway quotes cut or changed.
 */

/** What stands in for a secret. */
export const REDACTED = "<redacted>";

/** The names after which a secret follows, each with the secret's pattern. */
const SECRET_AFTER: ReadonlyArray<readonly [RegExp, string]> = [
  // A session token, as a signature refusal's quote of the request carries it.
  [/(x-amz-security-token\s*:\s*)[^\s'"\\]+/gi, `$1${REDACTED}`],
  // A bearer token, as in `Authorization=Bearer ...` or a quote of the header.
  [/(\bBearer\s+)[^\s'"\\]+/gi, `$1${REDACTED}`],
  // A SigV4 signature and its credential scope.
  [/(\b(?:Signature|Credential)=)[^\s'",\\]+/gi, `$1${REDACTED}`],
  // API Gateway's quote of an Authorization header it cannot read, to the end.
  [/(\bAuthorization header\b[^:'"\n]*:)[\s\S]*/gi, `$1 ${REDACTED}`],
  // A part of that header it quotes as not a `key=value` pair.
  [/'[^']*'(?=\s*not a valid key=value pair)/gi, `'${REDACTED}'`],
];

/** The headers whose values are secrets. */
const SECRET_HEADERS = ["authorization", "x-amz-security-token"];
/** The secrets inside an Authorization header's value. */
const AUTHORIZATION_PARTS = /(?:\bBearer\s+|\bSignature=|\bCredential=)([^\s,]+)/gi;

/** The secrets a request carried in `headers`, longest first (a secret may hold another). */
export function sentSecrets(headers: Headers): string[] {
  const secrets: string[] = [];
  for (const name of SECRET_HEADERS) {
    const value = headers.get(name);
    if (value !== null) {
      secrets.push(value, ...Array.from(value.matchAll(AUTHORIZATION_PARTS), (part) => part[1]!));
    }
  }
  return secrets.filter((secret) => secret !== "").sort((a, b) => b.length - a.length);
}

/** `text` without any of `secrets` nor any secret after a name that carries one. */
export function redactedText(text: string, secrets: readonly string[] = []): string {
  const withoutSent = secrets.reduce((cleaned, secret) => cleaned.replaceAll(secret, REDACTED), text);
  return SECRET_AFTER.reduce((cleaned, [pattern, replacement]) => cleaned.replace(pattern, replacement), withoutSent);
}

/** Strings, and those of arrays and objects at any depth, redacted as `redactedText` does. */
export function redacted(value: unknown, secrets: readonly string[] = []): unknown {
  if (typeof value === "string") {
    return redactedText(value, secrets);
  }
  if (Array.isArray(value)) {
    return value.map((member) => redacted(member, secrets));
  }
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([name, member]) => [redactedText(name, secrets), redacted(member, secrets)]),
    );
  }
  return value;
}

/** The headers of the request each answer answers, kept only as long as the answer is. */
const SENT = new WeakMap<Response, Headers>();

/** `send`, remembering the headers of each request with its answer (`sentWith`). */
export function remembering(send: (request: Request) => Promise<Response>): (request: Request) => Promise<Response> {
  return async (request) => {
    const response = await send(request);
    SENT.set(response, request.headers);
    return response;
  };
}

/** The secrets the request that `response` answers carried, if `remembering` saw it. */
export function secretsSentFor(response: Response): string[] {
  const headers = SENT.get(response);
  return headers === undefined ? [] : sentSecrets(headers);
}
