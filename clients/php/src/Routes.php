<?php

declare(strict_types=1);

namespace Tally\Client;

/**
 * Every route of Tally's API, by the client method that calls it: the one declaration
 * the methods take their paths from. A test compares it with openapi.json's paths and
 * methods, so that a route without a method fails it.
 */
final class Routes
{
    public const ROUTES = [
        'createDraw' => ['POST', '/draws'],
        'listDraws' => ['GET', '/draws'],
        'getDraw' => ['GET', '/draws/{draw_id}'],
        'updateDraw' => ['PATCH', '/draws/{draw_id}'],
        'availability' => ['GET', '/draws/{draw_id}/availability'],
        'facts' => ['GET', '/draws/{draw_id}/facts'],
        'closeDraw' => ['POST', '/draws/{draw_id}/close'],
        'eligible' => ['GET', '/draws/{draw_id}/eligible'],
        'createHold' => ['POST', '/draws/{draw_id}/holds'],
        'getHold' => ['GET', '/draws/{draw_id}/holds/{hold_id}'],
        'releaseHold' => ['DELETE', '/draws/{draw_id}/holds/{hold_id}'],
        'instantWins' => ['GET', '/draws/{draw_id}/instant-wins'],
        'payerPurchases' => ['GET', '/draws/{draw_id}/payers/{payer_id}/purchases'],
        'drawPurchases' => ['GET', '/draws/{draw_id}/purchases'],
        'purchase' => ['POST', '/draws/{draw_id}/purchases'],
        'getPurchase' => ['GET', '/draws/{draw_id}/purchases/{payment_id}'],
        'voidPurchase' => ['POST', '/draws/{draw_id}/purchases/{payment_id}/void'],
        'getTicket' => ['GET', '/draws/{draw_id}/tickets/{number}'],
        'getWinners' => ['GET', '/draws/{draw_id}/winners'],
        'drawWinners' => ['POST', '/draws/{draw_id}/winners'],
        'redraw' => ['POST', '/draws/{draw_id}/winners/{prize}/redraw'],
        'journal' => ['GET', '/journal'],
        'getLimits' => ['GET', '/payers/{payer_id}/limits'],
        'setLimits' => ['PUT', '/payers/{payer_id}/limits'],
        'setExclusion' => ['PUT', '/payers/{payer_id}/exclusion'],
        'createOrder' => ['POST', '/orders'],
        'createBatch' => ['POST', '/orders/batch'],
        'findOrder' => ['GET', '/orders/{order_number}'],
        'getSeries' => ['GET', '/series/{series_id}'],
        'defineSeries' => ['PUT', '/series/{series_id}'],
        'updateSeries' => ['PATCH', '/series/{series_id}'],
        'audit' => ['GET', '/series/{series_id}/audit'],
        'listOrders' => ['GET', '/series/{series_id}/orders'],
        'createSeriesOrder' => ['POST', '/series/{series_id}/orders'],
        'createSeriesBatch' => ['POST', '/series/{series_id}/orders/batch'],
        'getSeriesOrder' => ['GET', '/series/{series_id}/orders/{order_number}'],
        'voidOrder' => ['POST', '/series/{series_id}/orders/{order_number}/void'],
        'orderByRef' => ['GET', '/sources/{source}/orders/{external_ref}'],
    ];
}
