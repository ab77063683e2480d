<?php

declare(strict_types=1);

namespace Tally\Client;

use Tally\Client\Http\TransportError;

/**
 * Series and orders. (`source`, `external_ref`) is an order's idempotency key, so a
 * repeat is safe; a batch's items answered `contention` are posted again alone.
 */
trait OrderRoutes
{
    /** @param array<string, mixed> $body the same definition again is a repeat */
    public function defineSeries(string $seriesId, #[\SensitiveParameter] array $body): array
    {
        return $this->call('defineSeries', ['series_id' => $seriesId], body: $body);
    }

    public function getSeries(string $seriesId): array
    {
        return $this->call('getSeries', ['series_id' => $seriesId]);
    }

    /**
     * A move (`next`) without `period` is sent with the current period, read first
     * (`getSeries`, so the caller needs `GET /series/*` too): a repeat of it that arrives
     * after that period ended then answers the move made in it instead of moving the new
     * period too (and is `409 period_not_current` if none was made). A `TallyError` or
     * `TransportError` of the move carries the period it was sent with (`period()`): a call
     * made again once the repeats here ran out passes it, since the current period may be
     * another by then. A caller refused that read (`403`) sends the move without `period`:
     * repeated safely only within its period.
     *
     * @param array<string, mixed> $body
     */
    public function updateSeries(string $seriesId, #[\SensitiveParameter] array $body): array
    {
        if (isset($body['next']) && !isset($body['period'])) {
            $body += $this->currentPeriod($seriesId);
        }
        try {
            return $this->call('updateSeries', ['series_id' => $seriesId], body: $body);
        } catch (TallyError|TransportError $failure) {
            // A period that is no string was refused as such: the error carries none.
            throw is_string($body['period'] ?? null) ? $failure->forPeriod($body['period']) : $failure;
        }
    }

    /** @return array{period?: string|null} the series' current period; none when the caller may not read the series (`403`) */
    private function currentPeriod(string $seriesId): array
    {
        try {
            return ['period' => $this->getSeries($seriesId)['period'] ?? null];
        } catch (TallyError $refusal) {
            if ($refusal->status() === 403) {
                return [];
            }
            throw $refusal;
        }
    }

    /** @param array<string, mixed> $body `series`, `source`, `external_ref` and the rest */
    public function createOrder(#[\SensitiveParameter] array $body): array
    {
        return $this->call('createOrder', body: self::order($body));
    }

    /** @param array<string, mixed> $body `source`, `external_ref` and the rest */
    public function createSeriesOrder(string $seriesId, #[\SensitiveParameter] array $body): array
    {
        return $this->call('createSeriesOrder', ['series_id' => $seriesId], body: self::order($body));
    }

    /** @param array<string, mixed> $body `series`, `source` and `orders` */
    public function createBatch(#[\SensitiveParameter] array $body): array
    {
        return Batches::settle(
            array_map(self::order(...), $body['orders']),
            fn (#[\SensitiveParameter] array $orders): array => $this->call('createBatch', body: ['orders' => $orders] + $body),
            $this->retry,
        );
    }

    /** @param array<string, mixed> $body `source` and `orders` */
    public function createSeriesBatch(string $seriesId, #[\SensitiveParameter] array $body): array
    {
        return Batches::settle(
            array_map(self::order(...), $body['orders']),
            fn (#[\SensitiveParameter] array $orders): array => $this->call('createSeriesBatch', ['series_id' => $seriesId], body: ['orders' => $orders] + $body),
            $this->retry,
        );
    }

    /** An order by its number, in whichever series has it. */
    public function findOrder(string $orderNumber): array
    {
        return $this->call('findOrder', ['order_number' => $orderNumber]);
    }

    public function getSeriesOrder(string $seriesId, string $orderNumber): array
    {
        return $this->call('getSeriesOrder', ['series_id' => $seriesId, 'order_number' => $orderNumber]);
    }

    public function orderByRef(string $source, string $externalRef): array
    {
        return $this->call('orderByRef', ['source' => $source, 'external_ref' => $externalRef]);
    }

    public function voidOrder(string $seriesId, string $orderNumber, string $reason): array
    {
        return $this->call('voidOrder', ['series_id' => $seriesId, 'order_number' => $orderNumber], body: ['reason' => $reason]);
    }

    /**
     * @return \Generator<int, array<string, mixed>> the pages of a period's orders, with the moves
     *         among them; without `$period`, of the period current at the first page
     */
    public function listOrders(string $seriesId, ?string $period = null, ?int $limit = null): \Generator
    {
        $query = ['period' => $period, 'limit' => $limit];
        return $this->pages('listOrders', ['series_id' => $seriesId], $query, 'next_cursor', ['period']);
    }

    /**
     * @return \Generator<int, array<string, mixed>> the parts of a period's audit, until `complete`;
     *         without `$period`, of the period current at the first part
     */
    public function audit(string $seriesId, ?string $period = null): \Generator
    {
        return $this->pages('audit', ['series_id' => $seriesId], ['period' => $period], 'next_cursor', ['period']);
    }

    /**
     * An order with its `data` sent as a JSON object even when it is an empty array.
     *
     * @param array<string, mixed> $order
     * @return array<string, mixed>
     */
    private static function order(array $order): array
    {
        if (is_array($order['data'] ?? null)) {
            $order['data'] = self::object($order['data']);
        }
        return $order;
    }
}
