/**
 * The order-numbering seed flow, migrated: instead of `MAX(number) + 1`, several order
 * systems (OS processes) number their orders in one gapless series at once, in batches
 * and one by one, and post some of them again as retries do. Then an independent check
 * reads the period back and compares it with what each system was told.
 *
 *   node dist/examples/order-systems.js [SYSTEMS] [ORDERS_PER_SYSTEM]
 *
 * TALLY_URL, AWS_REGION and AWS credentials as for any client.
 */
import { fileURLToPath } from "node:url";

import { TallyClient } from "../src/index.js";
import { runProcesses } from "./processes.js";

const tally = new TallyClient({ baseUrl: process.env.TALLY_URL ?? "http://127.0.0.1:3000" });
const BATCH = 25;

/** What a system was told: its reference and the number it got. */
type Told = [string, string];

/** One order system: its orders in batches, every fifth batch posted twice, then one by one. */
async function system(seriesId: string, source: string, orders: number): Promise<void> {
  const told: Told[] = [];
  const refs = Array.from({ length: orders }, (_, i) => `${source}-order-${i}`);
  const batched = refs.slice(0, Math.floor((orders * 3) / 4));
  for (let at = 0; at < batched.length; at += BATCH) {
    const chunk = batched.slice(at, at + BATCH).map((external_ref) => ({ external_ref }));
    const posts = at % (5 * BATCH) === 0 ? 2 : 1;
    for (let post = 0; post < posts; post++) {
      const answer = await tally.createSeriesBatch(seriesId, { source, orders: chunk });
      for (const result of answer.results) {
        if (result.status === "rejected" || result.order_number === undefined) {
          throw new Error(`${result.external_ref}: ${result.code} ${result.detail}`);
        }
        told.push([result.external_ref!, result.order_number]);
      }
    }
  }
  for (const external_ref of refs.slice(batched.length)) {
    const order = await tally.createSeriesOrder(seriesId, { source, external_ref });
    told.push([external_ref, order.order_number]);
  }
  process.stdout.write(JSON.stringify(told));
}

async function main(systems: number, orders: number): Promise<void> {
  const seriesId = `EX${Date.now().toString(36).toUpperCase()}`;
  await tally.defineSeries(seriesId, { format: `${seriesId}-{yy}-{seq:6}`, reset: "yearly", gapless: true });
  const runs = Array.from({ length: systems }, (_, i) => ["system", seriesId, `${seriesId}-system${i}`, String(orders)]);
  const told = (await runProcesses(fileURLToPath(import.meta.url), runs)).map((out) => JSON.parse(out) as Told[]);
  await check(seriesId, systems * orders, told.flat());
  console.log(`${seriesId}: ${systems} systems numbered ${systems * orders} orders without a gap; check passed`);
}

/** Every order once with its own number, counters 1..n without a gap, the chain intact. */
async function check(seriesId: string, expected: number, told: Told[]): Promise<void> {
  const byNumber = new Map<string, string>();
  const counters: number[] = [];
  for await (const page of tally.listOrders(seriesId, { limit: 1000 })) {
    for (const order of page.orders) {
      const key = `${order.source}/${order.external_ref}`;
      if (byNumber.has(order.order_number)) {
        throw new Error(`${order.order_number} is given twice`);
      }
      byNumber.set(order.order_number, key);
      counters.push(order.counter);
    }
  }
  counters.sort((a, b) => a - b);
  if (counters.length !== expected || counters.some((counter, i) => counter !== i + 1)) {
    throw new Error(`${counters.length} orders of ${expected}, counters not 1..${expected} without a gap`);
  }
  const refs = new Map<string, string>();
  for (const [ref, number] of told) {
    const source = ref.slice(0, ref.indexOf("-order-"));
    if (byNumber.get(number) !== `${source}/${ref}` || (refs.has(ref) && refs.get(ref) !== number)) {
      throw new Error(`${ref} was told ${number}, which the series does not give it`);
    }
    refs.set(ref, number);
  }
  if (refs.size !== expected) {
    throw new Error(`${refs.size} references were told a number, ${expected} were posted`);
  }
  for await (const part of tally.audit(seriesId)) {
    if (part.complete && (part.gaps.length !== 0 || !part.chain?.intact)) {
      throw new Error(`the audit finds gaps or a broken chain: ${JSON.stringify(part)}`);
    }
  }
}

if (process.argv[2] === "system") {
  await system(process.argv[3]!, process.argv[4]!, Number(process.argv[5]));
} else {
  await main(Number(process.argv[2] ?? 3), Number(process.argv[3] ?? 200));
}
