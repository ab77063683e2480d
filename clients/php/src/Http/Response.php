<?php

declare(strict_types=1);

namespace Tally\Client\Http;

/** An HTTP answer: its status, headers (names in lowercase) and body. */
final class Response
{
    /** @param array<string, string> $headers */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
    ) {
    }

    public function ok(): bool
    {
        return $this->status >= 200 && $this->status < 300;
    }

    /** Seconds of a `Retry-After` given in seconds; null when absent or a date. */
    public function retryAfter(): ?int
    {
        $value = trim($this->headers['retry-after'] ?? '');
        return ctype_digit($value) ? (int) $value : null;
    }

    /** @return mixed The body as JSON, objects as arrays. */
    public function json(): mixed
    {
        return json_decode($this->body, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
    }
}
