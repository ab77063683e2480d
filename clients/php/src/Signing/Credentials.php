<?php

declare(strict_types=1);

namespace Tally\Client\Signing;

/**
 * An access key, its secret, and the session token of temporary credentials. The secret
 * and the token are read through `secretAccessKey()` and `sessionToken()` only: they are
 * kept off the object, so that no dump of it (`var_dump`, `print_r`, `var_export`, an
 * `(array)` cast, `json_encode`) shows them, and it cannot be serialized; nor do exception
 * traces show them among the constructor's arguments.
 */
final class Credentials implements \JsonSerializable
{
    /** @var \WeakMap<self, array{string, ?string}>|null each object's secret and token */
    private static ?\WeakMap $secrets = null;

    public function __construct(
        public readonly string $accessKeyId,
        #[\SensitiveParameter] string $secretAccessKey,
        #[\SensitiveParameter] ?string $sessionToken = null,
        /** When temporary credentials expire; null for long-term ones. */
        public readonly ?\DateTimeImmutable $expiration = null,
    ) {
        self::$secrets ??= new \WeakMap();
        self::$secrets[$this] = [$secretAccessKey, $sessionToken];
    }

    public function secretAccessKey(): string
    {
        return $this->secrets()[0];
    }

    public function sessionToken(): ?string
    {
        return $this->secrets()[1];
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

    /** The access key id, the secrets masked. */
    public function jsonSerialize(): array
    {
        return $this->__debugInfo();
    }

    public function __serialize(): array
    {
        throw new \LogicException('Credentials are not serialized: they hold a secret');
    }

    public function __unserialize(array $data): void
    {
        throw new \LogicException('Credentials are not serialized: they hold a secret');
    }

    /** Not cloned: a clone would not have the secret. */
    private function __clone()
    {
    }

    /** @return array{string, ?string} */
    private function secrets(): array
    {
        return self::$secrets[$this];
    }
}
