/**
 * What the tests against a running Tally share: the stand-in for API Gateway
 * (clients/harness/run.sh starts it and sets TALLY_URL, TALLY_HARNESS, AWS_REGION and
 * test credentials), its control endpoint, and ids of their own for each run.
 */
import { TallyClient, type TallyOptions } from "../src/index.js";

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run the tests through clients/harness/run.sh`);
  }
  return value;
}

export const TALLY_URL = required("TALLY_URL");
const HARNESS = required("TALLY_HARNESS");

/** A client of the stand-in with the environment's credentials and quick repeats. */
export function client(options: Partial<TallyOptions> = {}): TallyClient {
  return new TallyClient({ baseUrl: TALLY_URL, retry: { baseDelayMs: 20, maxDelayMs: 2_000 }, ...options });
}

/** An id no other run or test uses. */
export function unique(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

async function control(method: string, path: string, body?: unknown): Promise<Record<string, number>> {
  const response = await fetch(`${HARNESS}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    throw new Error(`harness ${path}: ${response.status}`);
  }
  return (await response.json()) as Record<string, number>;
}

/** API Gateway answers `status` itself to the next `count` matching requests. */
export const gatewayFault = (fault: { status: number; count: number; method?: string; path_prefix?: string }) =>
  control("POST", "/faults/gateway", fault);

/**
 * DynamoDB throttles (`throttle`), commits then fails (`error_after`) or answers without
 * its last item, as an index moments behind (`hide_last`), the next `count` calls of
 * `operation` whose request holds `holding`.
 */
export const dynamodbFault = (fault: {
  operation: string;
  kind: "throttle" | "error_after" | "hide_last";
  count: number;
  holding?: string;
}) => control("POST", "/faults/dynamodb", fault);

/** What the stand-in and the fault proxy counted so far. */
export const counts = () => control("GET", "/counts");

/** The growth of each count between two readings. */
export function grown(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([name, n]) => [name, n - (before[name] ?? 0)]));
}

/** Every item an async iterator yields. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) {
    all.push(item);
  }
  return all;
}
