<?php

declare(strict_types=1);

namespace Tally\Client;

use Tally\Client\Http\TransportError;

/**
 * Draws, holds, purchases, lists and winners. Bodies and answers are arrays shaped as
 * openapi.json describes them; every call that changes something carries its
 * idempotency key (`draw_id`, `hold_id`, `payment_id`), so a repeat is safe.
 */
trait RaffleRoutes
{
    /**
     * Without `draw_id` in `$body`, one is made here first, so a repeat is safe; a
     * `TallyError` or `TransportError` carries the id the request was sent with
     * (`drawId()`), to repeat the call with once the repeats here ran out.
     *
     * @param array<string, mixed> $body
     */
    public function createDraw(#[\SensitiveParameter] array $body): array
    {
        $body['draw_id'] ??= 'd-' . substr(bin2hex(random_bytes(8)), 0, 16);
        try {
            return $this->call('createDraw', body: $body);
        } catch (TallyError|TransportError $failure) {
            // An id that is no string was refused as such: the error carries none.
            throw is_string($body['draw_id']) ? $failure->forDraw($body['draw_id']) : $failure;
        }
    }

    /** @return \Generator<int, array<string, mixed>> every draw (of one `status`), newest first */
    public function listDraws(?string $status = null, ?int $limit = null): \Generator
    {
        return $this->items('listDraws', [], ['status' => $status, 'limit' => $limit], 'draws');
    }

    public function getDraw(string $drawId): array
    {
        return $this->call('getDraw', ['draw_id' => $drawId]);
    }

    /** @param array<string, mixed> $body */
    public function updateDraw(string $drawId, #[\SensitiveParameter] array $body): array
    {
        return $this->call('updateDraw', ['draw_id' => $drawId], body: $body);
    }

    public function availability(string $drawId): array
    {
        return $this->call('availability', ['draw_id' => $drawId]);
    }

    /** The draw's public facts: entries by channel, numbers left, odds, instant prizes left. */
    public function facts(string $drawId): array
    {
        return $this->call('facts', ['draw_id' => $drawId]);
    }

    /**
     * Closes the draw; `prizes` in $body fixes how many prizes its winners draw, before the round is out.
     *
     * @param array<string, mixed>|null $body
     */
    public function closeDraw(string $drawId, ?array $body = null): array
    {
        return $this->call('closeDraw', ['draw_id' => $drawId], body: $body);
    }

    public function eligible(string $drawId): array
    {
        return $this->call('eligible', ['draw_id' => $drawId]);
    }

    /** @param array<string, mixed> $body with its `hold_id`, the idempotency key */
    public function createHold(string $drawId, #[\SensitiveParameter] array $body): array
    {
        return $this->call('createHold', ['draw_id' => $drawId], body: $body);
    }

    public function getHold(string $drawId, string $holdId): array
    {
        return $this->call('getHold', ['draw_id' => $drawId, 'hold_id' => $holdId]);
    }

    public function releaseHold(string $drawId, string $holdId): array
    {
        return $this->call('releaseHold', ['draw_id' => $drawId, 'hold_id' => $holdId]);
    }

    /** @param array<string, mixed> $body with its `payment_id`, the idempotency key; `hold_id` pays a hold */
    public function purchase(string $drawId, #[\SensitiveParameter] array $body): array
    {
        return $this->call('purchase', ['draw_id' => $drawId], body: $body);
    }

    public function getPurchase(string $drawId, string $paymentId): array
    {
        return $this->call('getPurchase', ['draw_id' => $drawId, 'payment_id' => $paymentId]);
    }

    public function voidPurchase(string $drawId, string $paymentId, string $reason): array
    {
        return $this->call('voidPurchase', ['draw_id' => $drawId, 'payment_id' => $paymentId], body: ['reason' => $reason]);
    }

    /** @return \Generator<int, array<string, mixed>> a payer's purchases of a draw, newest first */
    public function payerPurchases(string $drawId, string $payerId, ?int $limit = null): \Generator
    {
        return $this->items('payerPurchases', ['draw_id' => $drawId, 'payer_id' => $payerId], ['limit' => $limit], 'purchases');
    }

    /** @return \Generator<int, array<string, mixed>> every purchase of a draw (of one status, one channel) */
    public function drawPurchases(string $drawId, ?string $status = null, ?string $channel = null, ?int $limit = null): \Generator
    {
        $query = ['status' => $status, 'channel' => $channel, 'limit' => $limit];
        return $this->items('drawPurchases', ['draw_id' => $drawId], $query, 'purchases');
    }

    public function getTicket(string $drawId, int $number): array
    {
        return $this->call('getTicket', ['draw_id' => $drawId, 'number' => $number]);
    }

    public function getWinners(string $drawId): array
    {
        return $this->call('getWinners', ['draw_id' => $drawId]);
    }

    /** @param array<string, mixed> $body */
    public function drawWinners(string $drawId, #[\SensitiveParameter] array $body): array
    {
        return $this->call('drawWinners', ['draw_id' => $drawId], body: $body);
    }

    /** @param array<string, mixed> $body with its `reason`, which tells a repeat from a new redraw */
    public function redraw(string $drawId, int $prize, #[\SensitiveParameter] array $body): array
    {
        return $this->call('redraw', ['draw_id' => $drawId, 'prize' => $prize], body: $body);
    }

    public function instantWins(string $drawId): array
    {
        return $this->call('instantWins', ['draw_id' => $drawId]);
    }

    /** A page of the operator journal from entry `$from` (1 by default); `next_from` names the next. */
    public function journal(?int $from = null, ?int $limit = null): array
    {
        return $this->call('journal', [], ['from' => $from, 'limit' => $limit]);
    }

    /** A payer's limits, exclusion and spend in the windows running now. */
    public function getLimits(string $payerId): array
    {
        return $this->call('getLimits', ['payer_id' => $payerId]);
    }

    /**
     * Lower limits apply at once; higher ones after the cooling-off (`raise.applies_at`).
     * The map and each currency's spans are sent as JSON objects even when empty (`{}`:
     * no change, or no limit in that currency).
     * @param array<string, array<string, int|null>> $limits amounts per currency and span
     */
    public function setLimits(string $payerId, array $limits): array
    {
        $spans = array_map(static fn ($amounts) => is_array($amounts) ? self::object($amounts) : $amounts, $limits);
        return $this->call('setLimits', ['payer_id' => $payerId], body: ['limits' => self::object($spans)]);
    }

    /** Excludes the payer from every sale until `$until` (RFC 3339; never, without it). */
    public function setExclusion(string $payerId, ?string $until = null): array
    {
        return $this->call('setExclusion', ['payer_id' => $payerId], body: ['excluded_until' => $until]);
    }
}
