/**
 * SigV4 for API Gateway's IAM auth, with the AWS SDK's own signer
 * (`@smithy/signature-v4`) and credential chain (`@aws-sdk/credential-provider-node`:
 * environment, shared config and credentials files with profiles, SSO, web identity,
 * ECS container credentials, EC2 instance roles). Credentials a provider gives with an
 * `expiration` are kept until five minutes before it, as the SDK's clients keep them;
 * without one the provider is asked again for every attempt, as the PHP client asks a
 * callable, so that keys it rotates are picked up.
 */
import { Sha256 } from "@aws-crypto/sha256-js";
import { defaultProvider } from "@aws-sdk/credential-provider-node";
import { SignatureV4 } from "@smithy/signature-v4";
import { CredentialsError } from "./errors.js";
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from "@smithy/types";

/** API Gateway's signing name. */
export const SERVICE = "execute-api";

/** How long before their `expiration` kept credentials are asked for again. */
const REFRESH_MS = 5 * 60_000;

export type Credentials = AwsCredentialIdentity | AwsCredentialIdentityProvider;

/**
 * What a header value may hold: tabs, visible ASCII and the bytes past it. `Headers`
 * refuses a NUL, CR or LF with a `TypeError` that quotes the value (a credential or a
 * token) and a character past U+00FF with another; a CR or LF would end the header.
 */
const HEADER_VALUE = /^[\t\x20-\x7E\x80-\xFF]*$/;
/** The whitespace `Headers` trims around a value, such as a token file's last line break. */
const SURROUNDING_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * `value`, or a `CredentialsError` that does not quote it when no header may carry it:
 * thrown before anything is sent, and never repeated.
 */
function headerValue(value: string, what: string): string {
  if (!HEADER_VALUE.test(value)) {
    const why = "a control character such as NUL, CR or LF, or one past U+00FF";
    throw new CredentialsError(new Error(`${what} holds a character no header may carry (${why})`));
  }
  return value;
}

/**
 * `provider`, its credentials kept while their `expiration` is more than `REFRESH_MS`
 * away; it is asked again for every call when they have none. Calls made while it is
 * being asked share its one answer.
 */
function keeping(provider: AwsCredentialIdentityProvider): AwsCredentialIdentityProvider {
  let kept: AwsCredentialIdentity | undefined;
  let asking: Promise<AwsCredentialIdentity> | undefined;
  const lasting = (credentials: AwsCredentialIdentity | undefined): credentials is AwsCredentialIdentity =>
    credentials?.expiration !== undefined && credentials.expiration.getTime() - REFRESH_MS > Date.now();
  return () => {
    if (lasting(kept)) {
      return Promise.resolve(kept);
    }
    asking ??= Promise.resolve()
      .then(() => provider())
      .then((credentials) => {
        kept = credentials;
        return credentials;
      })
      .finally(() => {
        asking = undefined;
      });
    return asking;
  };
}

/** A signer for `region`, with `credentials` or the SDK's default chain (`keeping`). */
export function signer(region: string, credentials?: Credentials): SignatureV4 {
  const given = credentials ?? defaultProvider();
  return new SignatureV4({
    service: SERVICE,
    region,
    credentials: typeof given === "function" ? keeping(given) : given,
    sha256: Sha256,
  });
}

/** `send` with each request signed first. */
export function signing(
  sigv4: SignatureV4,
  send: (request: Request) => Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
    const headers: Record<string, string> = { host: url.host };
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const query: Record<string, string | string[]> = {};
    for (const [name, value] of url.searchParams) {
      const before = query[name];
      query[name] = before === undefined ? value : [...[before].flat(), value];
    }
    const signed = await sigv4
      .sign({
        method: request.method,
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port === "" ? undefined : Number(url.port),
        // As sent, percent-escapes included: the signer escapes it once more, as API
        // Gateway does when it checks the signature.
        path: url.pathname,
        query,
        headers,
        body,
      })
      .catch((failure: unknown) => {
        throw new CredentialsError(failure);
      });
    const sent = new Headers();
    for (const [name, value] of Object.entries(signed.headers)) {
      // fetch sets the host from the URL, the same value that was signed.
      if (name !== "host") {
        sent.set(name, headerValue(value, `the credentials' ${name} header`));
      }
    }
    return send(new Request(request.url, { method: request.method, headers: sent, body, signal: request.signal }));
  };
}

/**
 * Gives the bearer token of a stack that takes an OpenID Connect issuer's tokens instead
 * of SigV4 (`OidcIssuer`): asked again before every attempt, so that it may renew it.
 */
export type TokenProvider = () => string | Promise<string>;

/**
 * `send` with each request carrying `Authorization: Bearer` and the provider's token,
 * the whitespace around it left out.
 */
export function bearing(
  token: TokenProvider,
  send: (request: Request) => Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const headers = new Headers(request.headers);
    const bearer = await Promise.resolve()
      .then(token)
      .catch((failure: unknown) => {
        throw new CredentialsError(failure);
      });
    const trimmed = String(bearer).replace(SURROUNDING_WHITESPACE, "");
    headers.set("authorization", headerValue(`Bearer ${trimmed}`, "the token"));
    const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
    return send(new Request(request.url, { method: request.method, headers, body, signal: request.signal }));
  };
}
