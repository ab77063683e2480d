/**
 * What a repeat or a later page is sent with, without a server: a move of the counter
 * names its period before its first attempt (none when the caller may not read the
 * series), each page of a period's listing asks for the period of the first, and a draw
 * whose creation failed tells the id it was sent with, a move the period.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { TallyClient, TallyError, TransportError } from "../src/index.js";

const OUTCOME_UNKNOWN = { status: 503, code: "outcome_unknown", detail: "try again" };

/** What a fake fetch saw of a request: method, path, query and body. */
type Sent = [string, string, Record<string, string>, string];

/**
 * A client whose every request is answered by the next of `answers` (a body and a status,
 * or a failure to throw), each recorded in `sent`.
 */
function scripted(answers: Array<[unknown, number] | Error>, maxAttempts = 6) {
  const sent: Sent[] = [];
  const tally = new TallyClient({
    baseUrl: "http://tally.test",
    credentials: null,
    retry: { maxAttempts, baseDelayMs: 1, maxDelayMs: 1 },
    fetch: async (request) => {
      const url = new URL(request.url);
      sent.push([request.method, url.pathname, Object.fromEntries(url.searchParams), await request.text()]);
      const answer = answers.shift();
      if (answer === undefined) {
        throw new Error(`no answer left for ${request.method} ${url.pathname}`);
      }
      if (answer instanceof Error) {
        throw answer;
      }
      return Response.json(answer[0], { status: answer[1] });
    },
  });
  return { tally, sent };
}

test("a move without a period is sent with the current one, read first, on every attempt", async () => {
  const { tally, sent } = scripted([
    [{ series_id: "INV", period: "2026-05-31" }, 200],
    [OUTCOME_UNKNOWN, 503],
    [{ series_id: "INV", period: "2026-05-31", last_counter: 4999 }, 200],
  ]);
  const series = await tally.updateSeries("INV", { next: 5000, reason: "paper invoices" });
  assert.equal(series.last_counter, 4999);
  const move = JSON.stringify({ next: 5000, reason: "paper invoices", period: "2026-05-31" });
  assert.deepEqual(sent, [
    ["GET", "/series/INV", {}, ""],
    ["PATCH", "/series/INV", {}, move],
    ["PATCH", "/series/INV", {}, move],
  ]);
});

test("a move whose series the caller may not read is sent without a period, with the usual repeats", async () => {
  for (const refusal of [{ message: "Forbidden" }, { status: 403, code: "series_not_allowed", detail: "not yours" }]) {
    const { tally, sent } = scripted([
      [refusal, 403],
      [OUTCOME_UNKNOWN, 503],
      [{ series_id: "INV", period: "2026-05-31", last_counter: 4999 }, 200],
    ]);
    const series = await tally.updateSeries("INV", { next: 5000, reason: "paper invoices" });
    assert.equal(series.last_counter, 4999);
    const move = JSON.stringify({ next: 5000, reason: "paper invoices" });
    assert.deepEqual(sent, [
      ["GET", "/series/INV", {}, ""],
      ["PATCH", "/series/INV", {}, move],
      ["PATCH", "/series/INV", {}, move],
    ]);
  }
});

test("a move whose series cannot be read for another reason is not sent", async () => {
  const { tally, sent } = scripted([[{ status: 404, code: "series_not_found", detail: "no such series" }, 404]]);
  await assert.rejects(tally.updateSeries("INV", { next: 5000, reason: "paper invoices" }), { code: "series_not_found" });
  assert.deepEqual(sent, [["GET", "/series/INV", {}, ""]]);
});

test("a move that names its period, and a change that is no move, are sent as given", async () => {
  const { tally, sent } = scripted([
    [{}, 200],
    [{}, 200],
  ]);
  await tally.updateSeries("INV", { next: 5000, reason: "paper invoices", period: "2026-05-30" });
  await tally.updateSeries("INV", { format: "INV{yy}-{seq:6}" });
  assert.deepEqual(sent, [
    ["PATCH", "/series/INV", {}, JSON.stringify({ next: 5000, reason: "paper invoices", period: "2026-05-30" })],
    ["PATCH", "/series/INV", {}, JSON.stringify({ format: "INV{yy}-{seq:6}" })],
  ]);
});

test("a move whose repeats ran out tells the period it was sent with", async () => {
  const current: [unknown, number] = [{ series_id: "INV", period: "2026-05-31" }, 200];
  const failures: Record<string, Array<[unknown, number] | Error>> = {
    "an answer": [current, [OUTCOME_UNKNOWN, 503], [OUTCOME_UNKNOWN, 503]],
    "no answer": [current, new TypeError("fetch failed"), new TypeError("fetch failed")],
  };
  for (const [what, answers] of Object.entries(failures)) {
    const { tally, sent } = scripted(answers, 2);
    await assert.rejects(tally.updateSeries("INV", { next: 5000, reason: "paper invoices" }), (failure: unknown) => {
      assert.ok(failure instanceof TallyError || failure instanceof TransportError, what);
      assert.equal(failure.period, "2026-05-31", what);
      // Both attempts carried the period the error tells.
      const periods = sent.filter(([method]) => method === "PATCH").map(([, , , body]) => JSON.parse(body).period);
      assert.deepEqual(periods, ["2026-05-31", "2026-05-31"], what);
      return true;
    });
  }
  const given = scripted([[OUTCOME_UNKNOWN, 503]], 1);
  await assert.rejects(given.tally.updateSeries("INV", { next: 5000, reason: "paper invoices", period: "2026-05-30" }), {
    code: "outcome_unknown",
    period: "2026-05-30",
  });
  const noMove = scripted([[OUTCOME_UNKNOWN, 503]], 1);
  await assert.rejects(noMove.tally.updateSeries("INV", { format: "INV{yy}-{seq:6}" }), (failure: unknown) => {
    assert.ok(failure instanceof TallyError);
    assert.equal(failure.period, undefined);
    return true;
  });
});

test("every page of a listing or an audit after the first asks for the period of the first", async () => {
  const page = (next_cursor: string | null): [unknown, number] => [
    { series_id: "INV", period: "2026-05-31", next_cursor },
    200,
  ];
  const { tally, sent } = scripted([page("c1"), page("c2"), page(null), page("a1"), page(null)]);
  const counted = async (pages: AsyncIterable<unknown>) => {
    let n = 0;
    for await (const _ of pages) {
      n += 1;
    }
    return n;
  };
  assert.equal(await counted(tally.listOrders("INV", { limit: 2 })), 3);
  assert.equal(await counted(tally.audit("INV")), 2);
  assert.deepEqual(
    sent.map(([, path, query]) => [path, query]),
    [
      ["/series/INV/orders", { limit: "2" }],
      ["/series/INV/orders", { limit: "2", period: "2026-05-31", cursor: "c1" }],
      ["/series/INV/orders", { limit: "2", period: "2026-05-31", cursor: "c2" }],
      ["/series/INV/audit", {}],
      ["/series/INV/audit", { period: "2026-05-31", cursor: "a1" }],
    ],
  );
});

test("a draw whose creation failed tells the id it was sent with", async () => {
  const failures: Record<string, Array<[unknown, number] | Error>> = {
    "an answer": [
      [OUTCOME_UNKNOWN, 503],
      [OUTCOME_UNKNOWN, 503],
    ],
    "no answer": [new TypeError("fetch failed"), new TypeError("fetch failed")],
  };
  for (const [what, answers] of Object.entries(failures)) {
    const { tally, sent } = scripted(answers, 2);
    await assert.rejects(tally.createDraw({ total_tickets: 10 }), (failure: unknown) => {
      assert.ok(failure instanceof TallyError || failure instanceof TransportError, what);
      const drawId = failure.drawId;
      assert.match(drawId ?? "", /^d-[a-z0-9]{16}$/, what);
      // Both attempts carried the id the error tells.
      assert.deepEqual(
        sent.map(([, , , body]) => JSON.parse(body).draw_id),
        [drawId, drawId],
        what,
      );
      return true;
    });
  }
  const given = scripted([[OUTCOME_UNKNOWN, 503]], 1);
  await assert.rejects(given.tally.createDraw({ draw_id: "spring", total_tickets: 10 }), {
    code: "outcome_unknown",
    drawId: "spring",
  });
});
