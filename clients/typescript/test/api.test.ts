/**
 * Every method once against `tally serve` on DynamoDB Local, behind the stand-in for API
 * Gateway that checks each signature with botocore: a raffle from its creation to a
 * redraw, and a series from its definition to its audit.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { ROUTES, TallyClient, TallyError } from "../src/index.js";
import { client, collect, unique } from "./world.js";

const called = new Set<string>();

/** The client, recording each method called. */
const tally = new Proxy(client(), {
  get(target, name, receiver) {
    const value = Reflect.get(target, name, receiver);
    if (typeof value === "function" && typeof name === "string") {
      called.add(name);
      return value.bind(target);
    }
    return value;
  },
}) as TallyClient;

after(() => {
  const missed = Object.keys(ROUTES).filter((name) => !called.has(name));
  assert.deepEqual(missed, [], "methods these tests never called");
});

test("a raffle: draws, holds, purchases, lists, the close and the winners", async () => {
  const drawId = unique("ts-raffle");
  const draw = await tally.createDraw({ draw_id: drawId, total_tickets: 60, max_per_purchase: 10, stripes: 4 });
  assert.equal(draw.draw_id, drawId);
  assert.equal((await tally.createDraw({ draw_id: drawId, total_tickets: 60, max_per_purchase: 10, stripes: 4 })).draw_id, drawId);
  const generated = await tally.createDraw({ total_tickets: 5 });
  assert.match(generated.draw_id, /^d-[a-z0-9]{16}$/);
  assert.equal((await tally.getDraw(drawId)).remaining, 60);
  assert.equal((await tally.updateDraw(drawId, { beacon: null })).beacon, null);
  const open = await collect(tally.listDraws({ status: "open", limit: 1 }));
  assert.ok(open.some((d) => d.draw_id === drawId));

  const hold = await tally.createHold(drawId, { hold_id: "basket-1", numbers: [7, 8], payer_id: "ann@example.com" });
  assert.deepEqual(hold.tickets, [7, 8]);
  assert.equal((await tally.getHold(drawId, "basket-1")).status, "held");
  const paid = await tally.purchase(drawId, { payment_id: "pay-hold", hold_id: "basket-1" });
  assert.deepEqual(paid.tickets, [7, 8]);
  await tally.createHold(drawId, { hold_id: "basket-2", quantity: 2, payer_id: "bob@example.com" });
  assert.equal((await tally.releaseHold(drawId, "basket-2")).status, "released");

  const bought = await tally.purchase(drawId, { payment_id: "pay-1", quantity: 3, payer_id: "ann@example.com" });
  assert.equal(bought.tickets.length, 3);
  const replay = await tally.purchase(drawId, { payment_id: "pay-1", quantity: 3, payer_id: "ann@example.com" });
  assert.deepEqual(replay.tickets, bought.tickets);
  await tally.purchase(drawId, { payment_id: "pay-2", quantity: 1, channel: "postal" });
  assert.equal((await tally.getPurchase(drawId, "pay-1")).status, "active");
  const ticket = bought.tickets[0]!;
  assert.equal((await tally.getTicket(drawId, ticket)).payment_id, "pay-1");
  // `@` travels escaped in the path, and is signed escaped once more, as API Gateway checks.
  const anns = await collect(tally.payerPurchases(drawId, "ann@example.com", { limit: 1 }));
  assert.deepEqual(anns.map((p) => p.payment_id).sort(), ["pay-1", "pay-hold"]);
  assert.equal((await tally.voidPurchase(drawId, "pay-2", "refunded")).status, "void");
  const all = await collect(tally.drawPurchases(drawId, { limit: 2 }));
  assert.deepEqual(all.map((p) => p.payment_id).sort(), ["pay-1", "pay-2", "pay-hold"]);
  const voided = await collect(tally.drawPurchases(drawId, { status: "void" }));
  assert.deepEqual(voided.map((p) => p.payment_id), ["pay-2"]);
  const grid = await tally.availability(drawId);
  assert.equal(grid.sold, 6);
  const facts = await tally.facts(drawId);
  assert.deepEqual([facts.sold, facts.entries.online + facts.entries.postal], [6, 5]);
  const payer = `cy-${drawId}`;
  const limited = await tally.setLimits(payer, { limits: { GBP: { day: 0 } } });
  assert.ok("GBP" in limited.limits);
  assert.equal((await tally.getLimits(payer)).excluded, false);
  assert.equal((await tally.setExclusion(payer, {})).excluded, true);

  const closed = await tally.closeDraw(drawId, { prizes: 2 });
  assert.deepEqual([closed.status, closed.prizes], ["closed", 2]);
  assert.equal((await tally.eligible(drawId)).eligible_count, 5);
  const winners = await tally.drawWinners(drawId, {});
  assert.equal(winners.prizes.length, 2);
  assert.equal((await tally.getWinners(drawId)).prizes.length, 2);
  const redrawn = await tally.redraw(drawId, 1, { reason: "not claimed within 14 days" });
  assert.equal(redrawn.history.length, 1);
  // The void, the close, the winners and the redraw are operators' actions: journalled.
  const journal = await tally.journal({ limit: 1000 });
  const actions = journal.entries.map((e) => e.action);
  for (const action of ["purchase_voided", "draw_closed", "winners_drawn", "redraw"]) {
    assert.ok(actions.includes(action as never), `${action} in ${actions.join(", ")}`);
  }
});

test("instant wins", async () => {
  const drawId = unique("ts-instant");
  await tally.createDraw({ draw_id: drawId, total_tickets: 10, instant_wins: [{ prize: "voucher", count: 2 }] });
  const bought = await tally.purchase(drawId, { payment_id: "all", quantity: 10 });
  assert.equal(bought.instant_wins?.length, 2);
  const wins = await tally.instantWins(drawId);
  assert.equal(wins.draw_id, drawId);
});

test("a series: orders, batches, look-ups, a void, the listing and the audit", async () => {
  const seriesId = unique("TS").replace(/[^A-Za-z0-9]/g, "").slice(0, 24);
  // (`source`, `external_ref`) is unique across series: sources of this run alone.
  const [erp, shop] = [unique("erp"), unique("shop")];
  const series = await tally.defineSeries(seriesId, { format: `${seriesId}-{seq:4}`, reset: "never" });
  assert.equal(series.series_id, seriesId);
  assert.equal(series.issuer, "default");
  // No two series of one issuer render the same text.
  const twin = `${seriesId.slice(0, 23)}Z`;
  await assert.rejects(tally.defineSeries(twin, { format: `${seriesId}-{seq:4}`, reset: "never" }), (error: unknown) => {
    assert.ok(error instanceof TallyError);
    assert.deepEqual([error.status, error.code, error.problem.series], [409, "format_overlaps", seriesId]);
    assert.equal(error.problem.example, `${seriesId}-0001`);
    return true;
  });
  assert.equal((await tally.getSeries(seriesId)).series_id, seriesId);
  const first = await tally.createOrder({ series: seriesId, source: erp, external_ref: "PO-1" });
  assert.equal(first.order_number, `${seriesId}-0001`);
  const again = await tally.createOrder({ series: seriesId, source: erp, external_ref: "PO-1" });
  assert.equal(again.order_number, first.order_number);
  const second = await tally.createSeriesOrder(seriesId, { source: erp, external_ref: "PO-2" });
  assert.equal(second.order_number, `${seriesId}-0002`);
  const batch = await tally.createBatch({
    series: seriesId,
    source: shop,
    orders: [{ external_ref: "w-1" }, { external_ref: "w-2", data: { total: "19.99" } }],
  });
  assert.deepEqual(batch.results.map((r) => [r.index, r.status]), [[0, "created"], [1, "created"]]);
  const own = await tally.createSeriesBatch(seriesId, { source: shop, orders: [{ external_ref: "w-1" }, { external_ref: "w-3" }] });
  assert.deepEqual(own.results.map((r) => r.status), ["existing", "created"]);
  assert.equal((await tally.findOrder(first.order_number)).external_ref, "PO-1");
  assert.equal((await tally.getSeriesOrder(seriesId, second.order_number)).external_ref, "PO-2");
  assert.equal((await tally.orderByRef(shop, "w-3")).order_number, `${seriesId}-0005`);
  assert.equal((await tally.voidOrder(seriesId, second.order_number, "cancelled")).status, "void");
  const moved = await tally.updateSeries(seriesId, { next: 100, reason: "continue the paper invoices" });
  assert.equal(moved.series_id, seriesId);
  const pages = await collect(tally.listOrders(seriesId, { limit: 2 }));
  assert.equal(pages.flatMap((p) => p.orders).length, 5);
  assert.ok(pages.length >= 3);
  const parts = await collect(tally.audit(seriesId));
  assert.equal(parts.at(-1)?.complete, true);
  assert.equal(parts.at(-1)?.chain?.intact, true);
  // A reference with `/` travels as %2F in the path.
  const odoo = await tally.createSeriesOrder(seriesId, { source: erp, external_ref: "SO/2026/0001" });
  assert.equal((await tally.orderByRef(erp, "SO/2026/0001")).order_number, odoo.order_number);
});

test("a problem is a TallyError with its code and members", async () => {
  const drawId = unique("ts-sold");
  await tally.createDraw({ draw_id: drawId, total_tickets: 2 });
  await assert.rejects(tally.purchase(drawId, { payment_id: "big", quantity: 3 }), (error: unknown) => {
    assert.ok(error instanceof TallyError);
    assert.equal(error.status, 409);
    assert.equal(error.code, "sold_out");
    assert.equal(error.problem.remaining, 2);
    assert.equal(error.fromGateway, false);
    return true;
  });
  // A payment id as providers write it; the last tickets make the draw read sold_out.
  assert.equal((await tally.purchase(drawId, { payment_id: "ch_1.2:3", quantity: 2 })).tickets.length, 2);
  assert.equal((await tally.getPurchase(drawId, "ch_1.2:3")).payment_id, "ch_1.2:3");
  assert.equal((await tally.getDraw(drawId)).status, "sold_out");
  await assert.rejects(tally.getDraw(unique("none")), (error: unknown) => {
    assert.ok(error instanceof TallyError);
    return error.status === 404 && error.code === "draw_not_found" && error.detail.length > 0;
  });
});
