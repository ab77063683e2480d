/**
 * `TallyClient`: one method per route of Tally's API (the route table is `ROUTES`),
 * typed from openapi.json through `openapi-typescript` and called with `openapi-fetch`.
 * Requests are signed (SigV4), or carry a bearer token where the stack takes an OpenID
 * Connect issuer's tokens, and are repeated after `503`s and `429`s; lists are async
 * iterators; batches post their `contention` items again alone.
 */
import createClient, { type Client, defaultPathSerializer } from "openapi-fetch";

import { settleBatch } from "./batches.js";
import { TallyError, TransportError, errorOf } from "./errors.js";
import { inOnePeriod, pages } from "./pages.js";
import { remembering, secretsSentFor } from "./redaction.js";
import { DEFAULT_RETRY, type RetryPolicy, retrying } from "./retry.js";
import { ROUTES } from "./routes.js";
import type { components, paths } from "./schema.js";
import { type Credentials, type TokenProvider, bearing, signer, signing } from "./signing.js";

export type Schemas = components["schemas"];
export type Draw = Schemas["DrawBody"];
export type Purchase = Schemas["PurchaseResponse"];
export type Hold = Schemas["HoldResponse"];
export type Order = Schemas["OrderResponse"];
export type Series = Schemas["SeriesResponse"];
export type BatchResult = Schemas["BatchResult"];
export type AuditPart = Schemas["AuditResponse"];
export type OrdersPage = Schemas["ListResponse"];

export interface TallyOptions {
  /** The API's base URL: `https://API_ID.execute-api.REGION.amazonaws.com`, or `tally serve`'s. */
  baseUrl: string;
  /** The deployment's region; by default `AWS_REGION`, else `AWS_DEFAULT_REGION`. */
  region?: string;
  /**
   * Credentials, or a provider of them; by default the AWS SDK's chain. `null` sends
   * requests unsigned, for `tally serve` on your own machine.
   */
  credentials?: Credentials | null;
  /**
   * For a stack that takes an OpenID Connect issuer's tokens instead of SigV4
   * (`OidcIssuer`): gives the token each request carries (`Authorization: Bearer`),
   * asked again before every attempt. Requests are then not signed.
   */
  token?: TokenProvider;
  /** How `503`s, `429`s and failed connections are repeated. */
  retry?: Partial<RetryPolicy>;
  /**
   * Aborts every call of the client in flight, and any it makes after: the attempt or
   * the wait before a repeat stops, and the call rejects with the signal's reason.
   */
  signal?: AbortSignal;
  /** The fetch that sends each attempt (by default the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * The path with its parameters put in, each first refused when it is empty, `.` or `..`:
 * an empty one leaves an empty segment (`/payers//purchases`), and URL parsing drops a
 * `.` or `..` (`/payers/../purchases` becomes `/purchases`), so the request would reach
 * another route or none. Every character outside `A-Za-z0-9-._~` travels escaped, as the
 * PHP client and botocore send it: `encodeURIComponent` leaves `!'()*` as they are (the
 * routes' own text holds none of them).
 */
function pathOf(path: string, params: Record<string, unknown>): string {
  for (const [name, value] of Object.entries(params)) {
    if (value === "") {
      throw new Error(`${name} cannot be empty: the path would have an empty segment`);
    }
    if (value === "." || value === "..") {
      throw new Error(`${name} cannot be "${value}": a URL drops it from the path`);
    }
  }
  return defaultPathSerializer(path, params).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** A call's answer: its data, or a `TallyError` thrown, without the secrets its request carried. */
async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) {
    throw errorOf(response, error, secretsSentFor(response));
  }
  return data as T;
}

export class TallyClient {
  readonly retry: RetryPolicy;
  private readonly http: Client<paths>;
  private readonly signal?: AbortSignal;

  constructor(options: TallyOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.signal = options.signal;
    let send = remembering(options.fetch ?? ((request: Request) => globalThis.fetch(request)));
    if (options.token !== undefined) {
      if (options.credentials !== undefined && options.credentials !== null) {
        throw new Error("TallyClient takes `credentials` or `token`, not both");
      }
      send = bearing(options.token, send);
    } else if (options.credentials !== null) {
      const region = options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
      if (!region) {
        throw new Error("TallyClient needs a region: pass `region` or set AWS_REGION");
      }
      send = signing(signer(region, options.credentials), send);
    }
    this.http = createClient<paths>({
      baseUrl: options.baseUrl,
      fetch: retrying(send, this.retry, this.signal),
      pathSerializer: pathOf,
    });
  }

  // Draws.

  /**
   * Creates a draw; without a `draw_id` one is made here first, so a repeat is safe. A
   * `TallyError` or `TransportError` carries the id the request was sent with (`drawId`),
   * to repeat the call with once the repeats here ran out.
   */
  async createDraw(body: Schemas["CreateDrawBody"]): Promise<Draw> {
    const draw_id = body.draw_id ?? `d-${randomId()}`;
    try {
      return await answer(this.http.POST(ROUTES.createDraw.path, { body: { ...body, draw_id } }));
    } catch (failure) {
      if (failure instanceof TallyError || failure instanceof TransportError) {
        failure.drawId = draw_id;
      }
      throw failure;
    }
  }

  /** Every draw (of one status), newest first. */
  async *listDraws(query: { status?: Schemas["DrawStatus"]; limit?: number } = {}) {
    for await (const page of pages(
      (cursor) => answer(this.http.GET(ROUTES.listDraws.path, { params: { query: { ...query, cursor } } })),
      (page) => page.cursor,
    )) {
      yield* page.draws;
    }
  }

  getDraw(drawId: string): Promise<Draw> {
    return answer(this.http.GET(ROUTES.getDraw.path, { params: { path: { draw_id: drawId } } }));
  }

  updateDraw(drawId: string, body: Schemas["PatchDrawBody"]): Promise<Draw> {
    return answer(this.http.PATCH(ROUTES.updateDraw.path, { params: { path: { draw_id: drawId } }, body }));
  }

  availability(drawId: string): Promise<Schemas["AvailabilityBody"]> {
    return answer(this.http.GET(ROUTES.availability.path, { params: { path: { draw_id: drawId } } }));
  }

  /** The draw's public facts: entries by channel, numbers left, odds, instant prizes left. */
  facts(drawId: string): Promise<Schemas["FactsBody"]> {
    return answer(this.http.GET(ROUTES.facts.path, { params: { path: { draw_id: drawId } } }));
  }

  /** Closes the draw; `prizes` fixes how many prizes its winners draw, before the round is out. */
  closeDraw(drawId: string, body?: Schemas["CloseDrawBody"]): Promise<Draw> {
    return answer(this.http.POST(ROUTES.closeDraw.path, { params: { path: { draw_id: drawId } }, body }));
  }

  eligible(drawId: string): Promise<Schemas["EligibleBody"]> {
    return answer(this.http.GET(ROUTES.eligible.path, { params: { path: { draw_id: drawId } } }));
  }

  // Holds and purchases.

  /** Holds numbers for a buyer; `hold_id` is the idempotency key. */
  createHold(drawId: string, body: Schemas["HoldBody"]): Promise<Hold> {
    return answer(this.http.POST(ROUTES.createHold.path, { params: { path: { draw_id: drawId } }, body }));
  }

  getHold(drawId: string, holdId: string): Promise<Hold> {
    return answer(this.http.GET(ROUTES.getHold.path, { params: { path: { draw_id: drawId, hold_id: holdId } } }));
  }

  releaseHold(drawId: string, holdId: string): Promise<Hold> {
    const path = { draw_id: drawId, hold_id: holdId };
    return answer(this.http.DELETE(ROUTES.releaseHold.path, { params: { path } }));
  }

  /** Buys tickets, or pays a hold (`hold_id`); `payment_id` is the idempotency key. */
  purchase(drawId: string, body: Schemas["PurchaseBody"]): Promise<Schemas["PurchaseAnswer"]> {
    return answer(this.http.POST(ROUTES.purchase.path, { params: { path: { draw_id: drawId } }, body }));
  }

  getPurchase(drawId: string, paymentId: string): Promise<Purchase> {
    const path = { draw_id: drawId, payment_id: paymentId };
    return answer(this.http.GET(ROUTES.getPurchase.path, { params: { path } }));
  }

  voidPurchase(drawId: string, paymentId: string, reason: string): Promise<Purchase> {
    const path = { draw_id: drawId, payment_id: paymentId };
    return answer(this.http.POST(ROUTES.voidPurchase.path, { params: { path }, body: { reason } }));
  }

  /** A payer's purchases of a draw, newest first. */
  async *payerPurchases(drawId: string, payerId: string, query: { limit?: number } = {}) {
    const path = { draw_id: drawId, payer_id: payerId };
    for await (const page of pages(
      (cursor) => answer(this.http.GET(ROUTES.payerPurchases.path, { params: { path, query: { ...query, cursor } } })),
      (page) => page.cursor,
    )) {
      yield* page.purchases;
    }
  }

  /** Every purchase of a draw (of one status, one channel), for reconciliation. */
  async *drawPurchases(
    drawId: string,
    query: { status?: Schemas["PurchaseStatus"]; channel?: Schemas["Channel"]; limit?: number } = {},
  ) {
    const path = { draw_id: drawId };
    for await (const page of pages(
      (cursor) => answer(this.http.GET(ROUTES.drawPurchases.path, { params: { path, query: { ...query, cursor } } })),
      (page) => page.cursor,
    )) {
      yield* page.purchases;
    }
  }

  getTicket(drawId: string, number: number): Promise<Schemas["TicketBody"]> {
    const path = { draw_id: drawId, number };
    return answer(this.http.GET(ROUTES.getTicket.path, { params: { path } }));
  }

  // Winners.

  getWinners(drawId: string): Promise<Schemas["WinnersBody"]> {
    return answer(this.http.GET(ROUTES.getWinners.path, { params: { path: { draw_id: drawId } } }));
  }

  drawWinners(drawId: string, body: Schemas["DrawWinnersBody"]): Promise<Schemas["WinnersBody"]> {
    return answer(this.http.POST(ROUTES.drawWinners.path, { params: { path: { draw_id: drawId } }, body }));
  }

  redraw(drawId: string, prize: number, body: Schemas["RedrawBody"]): Promise<Schemas["WinnersBody"]> {
    const path = { draw_id: drawId, prize };
    return answer(this.http.POST(ROUTES.redraw.path, { params: { path }, body }));
  }

  instantWins(drawId: string): Promise<Schemas["InstantWinsBody"]> {
    return answer(this.http.GET(ROUTES.instantWins.path, { params: { path: { draw_id: drawId } } }));
  }

  /** A page of the operator journal from entry `from` (1 by default); `next_from` names the next. */
  journal(query: { from?: number; limit?: number } = {}): Promise<Schemas["JournalPageResponse"]> {
    return answer(this.http.GET(ROUTES.journal.path, { params: { query } }));
  }

  // A payer's spend limits and self-exclusion, across every draw.

  getLimits(payerId: string): Promise<Schemas["PayerTermsBody"]> {
    return answer(this.http.GET(ROUTES.getLimits.path, { params: { path: { payer_id: payerId } } }));
  }

  /** Lower limits apply at once; higher ones after the cooling-off (`raise.applies_at`). */
  setLimits(payerId: string, body: Schemas["LimitsBody"]): Promise<Schemas["PayerTermsBody"]> {
    const path = { payer_id: payerId };
    return answer(this.http.PUT(ROUTES.setLimits.path, { params: { path }, body }));
  }

  /** Excludes the payer from every sale until `excluded_until` (never, without it). */
  setExclusion(payerId: string, body: Schemas["ExclusionBody"]): Promise<Schemas["PayerTermsBody"]> {
    const path = { payer_id: payerId };
    return answer(this.http.PUT(ROUTES.setExclusion.path, { params: { path }, body }));
  }

  // Series and orders.

  /** Defines a series; the same definition again is a repeat. */
  defineSeries(seriesId: string, body: Schemas["SeriesBody"]): Promise<Series> {
    const path = { series_id: seriesId };
    return answer(this.http.PUT(ROUTES.defineSeries.path, { params: { path }, body }));
  }

  getSeries(seriesId: string): Promise<Series> {
    return answer(this.http.GET(ROUTES.getSeries.path, { params: { path: { series_id: seriesId } } }));
  }

  /**
   * Changes a series. A move (`next`) without `period` is sent with the current period,
   * read first (`getSeries`, so the caller needs `GET /series/*` too): a repeat of it that
   * arrives after that period ended then answers the move made in it instead of moving the
   * new period too (and is `409 period_not_current` if none was made). A `TallyError` or
   * `TransportError` of the move carries the period it was sent with (`period`): a call
   * made again once the repeats here ran out passes it, since the current period may be
   * another by then. A caller refused that read (`403`) sends the move without `period`:
   * repeated safely only within its period.
   */
  async updateSeries(seriesId: string, body: Schemas["ChangeBody"]): Promise<Series> {
    const path = { series_id: seriesId };
    const moveWithoutPeriod = body.next != null && body.period == null;
    const sent = moveWithoutPeriod ? { ...body, ...(await this.currentPeriod(seriesId)) } : body;
    try {
      return await answer(this.http.PATCH(ROUTES.updateSeries.path, { params: { path }, body: sent }));
    } catch (failure) {
      if ((failure instanceof TallyError || failure instanceof TransportError) && sent.period != null) {
        failure.period = sent.period;
      }
      throw failure;
    }
  }

  /** The series' current `period`, or nothing when the caller may not read the series (`403`). */
  private async currentPeriod(seriesId: string): Promise<{ period?: string }> {
    try {
      return { period: (await this.getSeries(seriesId)).period };
    } catch (failure) {
      if (failure instanceof TallyError && failure.status === 403) {
        return {};
      }
      throw failure;
    }
  }

  /** Numbers one order; (`source`, `external_ref`) is the idempotency key. */
  createOrder(body: Schemas["SingleOrder"]): Promise<Order> {
    return answer(this.http.POST(ROUTES.createOrder.path, { body }));
  }

  createSeriesOrder(seriesId: string, body: Schemas["SeriesOrder"]): Promise<Order> {
    const path = { series_id: seriesId };
    return answer(this.http.POST(ROUTES.createSeriesOrder.path, { params: { path }, body }));
  }

  /** Numbers a batch; items answered `contention` are posted again alone. */
  createBatch(body: Schemas["OrderBatch"]): Promise<Schemas["BatchResponse"]> {
    return settleBatch(
      body.orders,
      (orders) => answer(this.http.POST(ROUTES.createBatch.path, { body: { ...body, orders } })),
      this.retry,
      this.signal,
    );
  }

  createSeriesBatch(seriesId: string, body: Schemas["SeriesOrderBatch"]): Promise<Schemas["BatchResponse"]> {
    const path = { series_id: seriesId };
    return settleBatch(
      body.orders,
      (orders) => answer(this.http.POST(ROUTES.createSeriesBatch.path, { params: { path }, body: { ...body, orders } })),
      this.retry,
      this.signal,
    );
  }

  /** An order by its number, in whichever series has it. */
  findOrder(orderNumber: string): Promise<Order> {
    const path = { order_number: orderNumber };
    return answer(this.http.GET(ROUTES.findOrder.path, { params: { path } }));
  }

  getSeriesOrder(seriesId: string, orderNumber: string): Promise<Order> {
    const path = { series_id: seriesId, order_number: orderNumber };
    return answer(this.http.GET(ROUTES.getSeriesOrder.path, { params: { path } }));
  }

  orderByRef(source: string, externalRef: string): Promise<Order> {
    const path = { source, external_ref: externalRef };
    return answer(this.http.GET(ROUTES.orderByRef.path, { params: { path } }));
  }

  voidOrder(seriesId: string, orderNumber: string, reason: string): Promise<Order> {
    const path = { series_id: seriesId, order_number: orderNumber };
    return answer(this.http.POST(ROUTES.voidOrder.path, { params: { path }, body: { reason } }));
  }

  /**
   * The pages of a period's orders, in counter order, with the moves among them; without
   * `period`, of the period current at the first page.
   */
  listOrders(seriesId: string, query: { period?: string; limit?: number } = {}): AsyncGenerator<OrdersPage> {
    const path = { series_id: seriesId };
    const fetchPage = (period: string | undefined, cursor: string | undefined) =>
      answer(this.http.GET(ROUTES.listOrders.path, { params: { path, query: { ...query, period, cursor } } }));
    return pages(inOnePeriod(query.period, fetchPage), (page) => page.next_cursor);
  }

  /** The parts of a period's audit, until `complete`; without `period`, of the period current at the first part. */
  audit(seriesId: string, query: { period?: string } = {}): AsyncGenerator<AuditPart> {
    const path = { series_id: seriesId };
    const fetchPart = (period: string | undefined, cursor: string | undefined) =>
      answer(this.http.GET(ROUTES.audit.path, { params: { path, query: { ...query, period, cursor } } }));
    return pages(inOnePeriod(query.period, fetchPart), (part) => part.next_cursor);
  }
}

/** 16 characters of `[a-z0-9]` from the platform's random source. */
function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => "abcdefghijklmnopqrstuvwxyz0123456789"[b % 36]).join("");
}
