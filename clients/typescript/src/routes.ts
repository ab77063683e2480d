/**
 * Every route of Tally's API, by the client method that calls it: the one declaration
 * the methods take their paths from. A test compares it with openapi.json's paths and
 * methods, so that a route without a method fails it.
 */
export const ROUTES = {
  createDraw: { method: "POST", path: "/draws" },
  listDraws: { method: "GET", path: "/draws" },
  getDraw: { method: "GET", path: "/draws/{draw_id}" },
  updateDraw: { method: "PATCH", path: "/draws/{draw_id}" },
  availability: { method: "GET", path: "/draws/{draw_id}/availability" },
  facts: { method: "GET", path: "/draws/{draw_id}/facts" },
  closeDraw: { method: "POST", path: "/draws/{draw_id}/close" },
  eligible: { method: "GET", path: "/draws/{draw_id}/eligible" },
  createHold: { method: "POST", path: "/draws/{draw_id}/holds" },
  getHold: { method: "GET", path: "/draws/{draw_id}/holds/{hold_id}" },
  releaseHold: { method: "DELETE", path: "/draws/{draw_id}/holds/{hold_id}" },
  instantWins: { method: "GET", path: "/draws/{draw_id}/instant-wins" },
  payerPurchases: { method: "GET", path: "/draws/{draw_id}/payers/{payer_id}/purchases" },
  drawPurchases: { method: "GET", path: "/draws/{draw_id}/purchases" },
  purchase: { method: "POST", path: "/draws/{draw_id}/purchases" },
  getPurchase: { method: "GET", path: "/draws/{draw_id}/purchases/{payment_id}" },
  voidPurchase: { method: "POST", path: "/draws/{draw_id}/purchases/{payment_id}/void" },
  getTicket: { method: "GET", path: "/draws/{draw_id}/tickets/{number}" },
  getWinners: { method: "GET", path: "/draws/{draw_id}/winners" },
  drawWinners: { method: "POST", path: "/draws/{draw_id}/winners" },
  redraw: { method: "POST", path: "/draws/{draw_id}/winners/{prize}/redraw" },
  journal: { method: "GET", path: "/journal" },
  getLimits: { method: "GET", path: "/payers/{payer_id}/limits" },
  setLimits: { method: "PUT", path: "/payers/{payer_id}/limits" },
  setExclusion: { method: "PUT", path: "/payers/{payer_id}/exclusion" },
  createOrder: { method: "POST", path: "/orders" },
  createBatch: { method: "POST", path: "/orders/batch" },
  findOrder: { method: "GET", path: "/orders/{order_number}" },
  getSeries: { method: "GET", path: "/series/{series_id}" },
  defineSeries: { method: "PUT", path: "/series/{series_id}" },
  updateSeries: { method: "PATCH", path: "/series/{series_id}" },
  audit: { method: "GET", path: "/series/{series_id}/audit" },
  listOrders: { method: "GET", path: "/series/{series_id}/orders" },
  createSeriesOrder: { method: "POST", path: "/series/{series_id}/orders" },
  createSeriesBatch: { method: "POST", path: "/series/{series_id}/orders/batch" },
  getSeriesOrder: { method: "GET", path: "/series/{series_id}/orders/{order_number}" },
  voidOrder: { method: "POST", path: "/series/{series_id}/orders/{order_number}/void" },
  orderByRef: { method: "GET", path: "/sources/{source}/orders/{external_ref}" },
} as const;

export type RouteName = keyof typeof ROUTES;
