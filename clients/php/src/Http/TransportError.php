<?php

declare(strict_types=1);

namespace Tally\Client\Http;

/** The request got no answer: the connection failed or timed out. */
final class TransportError extends \RuntimeException
{
    private ?string $drawId = null;
    private ?string $period = null;

    /**
     * The `draw_id` a `createDraw` request carried (made by the client when not given):
     * repeat the call with it. Null for the other calls.
     */
    public function drawId(): ?string
    {
        return $this->drawId;
    }

    /** The same failure, carrying the `draw_id` of the `createDraw` request that got no answer. */
    public function forDraw(string $drawId): self
    {
        $failure = new self($this->getMessage(), 0, $this);
        $failure->drawId = $drawId;
        return $failure;
    }

    /**
     * The `period` an `updateSeries` move was sent with (read by the client when not
     * given): repeat the call with it. Null for the other calls.
     */
    public function period(): ?string
    {
        return $this->period;
    }

    /** The same failure, carrying the `period` of the `updateSeries` move that got no answer. */
    public function forPeriod(string $period): self
    {
        $failure = new self($this->getMessage(), 0, $this);
        $failure->period = $period;
        return $failure;
    }
}
