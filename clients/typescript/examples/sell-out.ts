/**
 * The raffle seed flow, migrated: several OS processes sell a draw out at once. Each
 * checkout holds numbers (`hold_id`: the basket), and the payment webhook pays the
 * hold (`payment_id`: the provider's payment), delivered twice as providers do; some
 * baskets are abandoned and released. Then an independent check reads the whole draw
 * back and compares it with what each process was told.
 *
 *   node dist/examples/sell-out.js [PROCESSES] [TICKETS]
 *
 * TALLY_URL, AWS_REGION and AWS credentials as for any client.
 */
import { fileURLToPath } from "node:url";

import { type Purchase, TallyClient, TallyError } from "../src/index.js";
import { runProcesses } from "./processes.js";

const tally = new TallyClient({ baseUrl: process.env.TALLY_URL ?? "http://127.0.0.1:3000" });

interface Sale {
  payment_id: string;
  tickets: number[];
}

/** One process of the shop: checkouts until the draw is sold out; prints its sales as JSON. */
async function shop(drawId: string, name: string): Promise<void> {
  const sales: Sale[] = [];
  for (let basket = 0; ; basket++) {
    const holdId = `${name}-basket-${basket}`;
    const quantity = 1 + Math.floor(Math.random() * 5);
    let hold;
    try {
      hold = await tally.createHold(drawId, { hold_id: holdId, quantity, payer_id: `${name}-customer-${basket % 7}` });
    } catch (error) {
      if (error instanceof TallyError && error.code === "sold_out") {
        const left = Number(error.problem.remaining);
        if (left === 0) {
          break;
        }
        continue;
      }
      // The numbers left are held by other checkouts, or the draw's share for holds is
      // taken: they come back when those holds end, so the shop tries again.
      if (error instanceof TallyError && (error.code === "tickets_held" || error.code === "holds_full")) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      throw error;
    }
    if (basket % 5 === 4) {
      await tally.releaseHold(drawId, holdId);
      continue;
    }
    // The payment provider delivers its webhook, then delivers it again.
    const paymentId = `${name}-pay-${basket}`;
    const paid = await tally.purchase(drawId, { payment_id: paymentId, hold_id: holdId });
    const again = await tally.purchase(drawId, { payment_id: paymentId, hold_id: holdId });
    if (again.tickets.join() !== paid.tickets.join() || paid.tickets.length !== hold.tickets.length) {
      throw new Error(`${paymentId}: the repeated webhook got other tickets`);
    }
    sales.push({ payment_id: paymentId, tickets: paid.tickets });
  }
  process.stdout.write(JSON.stringify(sales));
}

/** Runs `processes` shops at once on a new draw, then checks the draw independently. */
async function main(processes: number, total: number): Promise<void> {
  const drawId = `sell-out-${Date.now().toString(36)}`;
  await tally.createDraw({ draw_id: drawId, total_tickets: total, max_per_purchase: 5, stripes: 8 });
  const shops = Array.from({ length: processes }, (_, i) => ["shop", drawId, `shop${i}`]);
  const told = (await runProcesses(fileURLToPath(import.meta.url), shops)).map((out) => JSON.parse(out) as Sale[]);
  check(total, told.flat(), await stored(drawId, told.flat()), await tally.getDraw(drawId));
  console.log(`${drawId}: ${processes} processes sold ${total} tickets in ${told.flat().length} purchases; check passed`);
}

/**
 * Every purchase of the draw: the listing, and each sale it does not show read on its
 * own. The listing comes from an index moments behind, so a purchase made just before
 * may be missing from it; a read by payment id is strongly consistent.
 */
async function stored(drawId: string, told: Sale[]): Promise<Sale[]> {
  const purchases: Purchase[] = [];
  for await (const purchase of tally.drawPurchases(drawId, { limit: 100 })) {
    purchases.push(purchase);
  }
  const listed = new Set(purchases.map((p) => p.payment_id));
  for (const sale of told.filter((s) => !listed.has(s.payment_id))) {
    purchases.push(await tally.getPurchase(drawId, sale.payment_id));
  }
  return purchases.map((purchase) => {
    if (purchase.tickets.length !== purchase.quantity) {
      throw new Error(`${purchase.payment_id}: ${purchase.tickets.length} tickets for a quantity of ${purchase.quantity}`);
    }
    return { payment_id: purchase.payment_id, tickets: purchase.tickets };
  });
}

/** No number twice, every number in range, the draw sold out, each sale as it was told. */
function check(total: number, told: Sale[], stored: Sale[], draw: { sold: number; remaining: number }): void {
  const owner = new Map<number, string>();
  for (const sale of stored) {
    for (const ticket of sale.tickets) {
      if (!Number.isInteger(ticket) || ticket < 1 || ticket > total) {
        throw new Error(`ticket ${ticket} is outside 1..${total}`);
      }
      if (owner.has(ticket)) {
        throw new Error(`ticket ${ticket} is sold twice: ${owner.get(ticket)} and ${sale.payment_id}`);
      }
      owner.set(ticket, sale.payment_id);
    }
  }
  if (owner.size !== total || draw.sold !== total || draw.remaining !== 0) {
    throw new Error(`${owner.size} tickets stored, ${draw.sold} sold, ${draw.remaining} left of ${total}`);
  }
  const byPayment = new Map(stored.map((s) => [s.payment_id, s.tickets.join()]));
  if (byPayment.size !== told.length) {
    throw new Error(`${byPayment.size} purchases stored, ${told.length} made`);
  }
  for (const sale of told) {
    if (byPayment.get(sale.payment_id) !== sale.tickets.join()) {
      throw new Error(`${sale.payment_id} is stored with other tickets than it was told`);
    }
  }
}

if (process.argv[2] === "shop") {
  await shop(process.argv[3]!, process.argv[4]!);
} else {
  await main(Number(process.argv[2] ?? 4), Number(process.argv[3] ?? 300));
}

