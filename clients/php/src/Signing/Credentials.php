<?php

declare(strict_types=1);

namespace Tally\Client\Signing;

/** An access key, its secret, and the session token of temporary credentials. */
final class Credentials
{
    public function __construct(
        public readonly string $accessKeyId,
        public readonly string $secretAccessKey,
        public readonly ?string $sessionToken = null,
        /** When temporary credentials expire; null for long-term ones. */
        public readonly ?\DateTimeImmutable $expiration = null,
    ) {
    }

    /** Whether they expire within `$seconds`. */
    public function expiresWithin(int $seconds): bool
    {
        return $this->expiration !== null
            && $this->expiration->getTimestamp() - time() < $seconds;
    }

    public function __debugInfo(): array
    {
        return ['accessKeyId' => $this->accessKeyId, 'secretAccessKey' => '<secret>', 'sessionToken' => '<secret>'];
    }
}
