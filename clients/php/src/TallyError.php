<?php

declare(strict_types=1);

namespace Tally\Client;

/**
 * Every answer that is not a success: Tally's problem documents (RFC 9457) with their
 * `code` and members, and API Gateway's own answers, which are not problem documents
 * (`{"message": "Forbidden"}`), with a `gateway_*` code of their own. (PHP's own
 * `getCode()` is an integer: the problem's code is `code()`.)
 *
 * Errors end up in logs and alerts, so they keep no secret of the request (`Redaction`):
 * API Gateway's refusal of a signature goes on to quote the request as it should have
 * been signed, and the message keeps only what comes before that quote; every secret the
 * request carried, and any secret after a name that carries one, is replaced by
 * `<redacted>` in the detail, the message and the problem's members.
 */
final class TallyError extends \RuntimeException
{
    /** The code of an API Gateway answer, by its status (docs/api.md, "API Gateway's own answers"). */
    public const GATEWAY_CODES = [
        401 => 'gateway_unauthorized',
        403 => 'gateway_forbidden',
        404 => 'gateway_not_found',
        413 => 'gateway_body_too_large',
        429 => 'gateway_throttled',
        500 => 'gateway_error',
        502 => 'gateway_error',
        503 => 'gateway_unavailable',
        504 => 'gateway_timeout',
    ];
    /** The code of an API Gateway answer whose status the table does not list. */
    public const GATEWAY_OTHER = 'gateway_error';

    /** Where API Gateway's refusal of a signature starts quoting the request it expected. */
    private const SIGNED_REQUEST_QUOTE = '/\s*The (?:Canonical String|String-to-Sign)\b.*/is';

    private ?string $drawId = null;
    private ?string $period = null;

    /** @param array<string, mixed> $problem */
    private function __construct(
        private readonly int $status,
        private readonly string $problemCode,
        private readonly string $detail,
        private readonly array $problem,
        private readonly ?int $retryAfter,
        private readonly bool $fromGateway,
    ) {
        parent::__construct("{$status} {$problemCode}: {$detail}");
    }

    /**
     * The error an answer that is not a success stands for, without the secrets of the
     * headers its request carried. Both stay out of exception traces' arguments: the
     * answer may quote the request.
     *
     * @param array<string, string> $sentHeaders
     */
    public static function of(
        #[\SensitiveParameter] Http\Response $response,
        #[\SensitiveParameter] array $sentHeaders = [],
    ): self {
        $secrets = Redaction::sentSecrets($sentHeaders);
        $body = json_decode($response->body, true);
        $members = is_array($body) ? Redaction::redacted($body, $secrets) : [];
        if (isset($members['code']) && is_string($members['code'])) {
            $detail = is_string($members['detail'] ?? null) ? $members['detail'] : '';
            return new self($response->status, $members['code'], $detail, $members, $response->retryAfter(), false);
        }
        $hasMessage = is_string($members['message'] ?? null);
        $message = preg_replace(
            self::SIGNED_REQUEST_QUOTE,
            '',
            $hasMessage ? $members['message'] : Redaction::redacted($response->body, $secrets),
        );
        if ($hasMessage) {
            $members['message'] = $message;
        }
        $code = self::GATEWAY_CODES[$response->status] ?? self::GATEWAY_OTHER;
        return new self($response->status, $code, $message, $members, $response->retryAfter(), true);
    }

    /** Tally's problem `code`, or a `gateway_*` code for API Gateway's own answers. */
    public function code(): string
    {
        return $this->problemCode;
    }

    /** The HTTP status. */
    public function status(): int
    {
        return $this->status;
    }

    /** What went wrong, for people: the problem's `detail`, or API Gateway's `message`. */
    public function detail(): string
    {
        return $this->detail;
    }

    /** @return array<string, mixed> Every member of the problem (`remaining`, `numbers`, `left`, ...). */
    public function problem(): array
    {
        return $this->problem;
    }

    /** Seconds the answer asked to wait before a repeat (`Retry-After`), if it did. */
    public function retryAfter(): ?int
    {
        return $this->retryAfter;
    }

    /** Whether API Gateway answered this itself, before Tally saw the request. */
    public function fromGateway(): bool
    {
        return $this->fromGateway;
    }

    /**
     * The `draw_id` a `createDraw` request carried (made by the client when not given):
     * repeat the call with it. Null for the other calls.
     */
    public function drawId(): ?string
    {
        return $this->drawId;
    }

    /** The same error, carrying the `draw_id` of the `createDraw` request it answers. */
    public function forDraw(string $drawId): self
    {
        $error = $this->copy();
        $error->drawId = $drawId;
        return $error;
    }

    /**
     * The `period` an `updateSeries` move was sent with (read by the client when not
     * given): repeat the call with it. Null for the other calls.
     */
    public function period(): ?string
    {
        return $this->period;
    }

    /** The same error, carrying the `period` of the `updateSeries` move it answers. */
    public function forPeriod(string $period): self
    {
        $error = $this->copy();
        $error->period = $period;
        return $error;
    }

    private function copy(): self
    {
        return new self($this->status, $this->problemCode, $this->detail, $this->problem, $this->retryAfter, $this->fromGateway);
    }
}
