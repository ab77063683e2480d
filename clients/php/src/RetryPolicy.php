<?php

declare(strict_types=1);

namespace Tally\Client;

/**
 * How `503`s (Tally's, with `Retry-After`), `429`s, API Gateway's `502`/`504` and failed
 * connections are repeated. A wait is `Retry-After` plus exponential backoff with full
 * jitter, never longer than `maxDelayMs` (a longer `Retry-After` is cut to it). Every
 * call carries its idempotency key, so a repeat is safe.
 */
final class RetryPolicy
{
    /** The statuses that are repeated. */
    public const REPEATED = [429, 502, 503, 504];

    /**
     * @param int $maxAttempts attempts in all, the first included (1 repeats nothing)
     * @param int $baseDelayMs the first backoff ceiling, doubled on each repeat
     * @param int $maxDelayMs the longest single wait, `Retry-After` included
     */
    public function __construct(
        public readonly int $maxAttempts = 6,
        public readonly int $baseDelayMs = 200,
        public readonly int $maxDelayMs = 20_000,
    ) {
    }

    /**
     * Milliseconds to wait before repeat number `$attempt` (1 for the first repeat).
     *
     * @param (callable(): float)|null $random a number in [0, 1]
     */
    public function waitBefore(int $attempt, ?float $retryAfterSeconds, ?callable $random = null): int
    {
        $random ??= static fn (): float => mt_rand() / mt_getrandmax();
        $ceiling = min($this->maxDelayMs, $this->baseDelayMs * 2 ** ($attempt - 1));
        $wait = ($retryAfterSeconds ?? 0) * 1000 + $random() * $ceiling;
        return (int) min($this->maxDelayMs, $wait);
    }

    public function sleep(int $milliseconds): void
    {
        usleep($milliseconds * 1000);
    }
}
