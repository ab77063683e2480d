<?php

declare(strict_types=1);

/*
 * Stand-ins for the parts of the AWS SDK for PHP that `Signing\AwsSdkCredentials` calls
 * (the SDK is not installed where these tests run): a credential provider chain and what
 * it resolves. Not autoloaded: a test requires this file in a process of its own, since
 * once `Aws\Credentials\CredentialProvider` exists every client without credentials uses it.
 */

namespace GuzzleHttp\Promise {
    /** A promise already resolved, as the SDK's providers answer with. */
    final class FulfilledPromise
    {
        public function __construct(private readonly mixed $value)
        {
        }

        public function wait(): mixed
        {
            return $this->value;
        }
    }
}

namespace Aws\Credentials {
    /** As the SDK's: `$expires` is a Unix time, null for long-term credentials. */
    final class Credentials
    {
        public function __construct(
            private readonly string $key,
            private readonly string $secret,
            private readonly ?string $token = null,
            public ?int $expires = null,
        ) {
        }

        public function getAccessKeyId(): string
        {
            return $this->key;
        }

        public function getSecretKey(): string
        {
            return $this->secret;
        }

        public function getSecurityToken(): ?string
        {
            return $this->token;
        }

        public function getExpiration(): ?int
        {
            return $this->expires;
        }

        public function isExpired(): bool
        {
            return $this->expires !== null && time() >= $this->expires;
        }
    }

    /**
     * The SDK's default chain as the client sees it: memoized, it resolves the same
     * credentials until they expire, then the next that the chain finds (`$found`, which
     * a test fills; `$resolved` counts the resolutions).
     */
    final class CredentialProvider
    {
        /** @var list<Credentials> */
        public static array $found = [];
        public static int $resolved = 0;

        public static function defaultProvider(array $config = []): callable
        {
            $current = null;
            return static function () use (&$current): \GuzzleHttp\Promise\FulfilledPromise {
                if ($current === null || $current->isExpired()) {
                    $current = array_shift(self::$found) ?? throw new \RuntimeException('the chain found no credentials');
                    self::$resolved++;
                }
                return new \GuzzleHttp\Promise\FulfilledPromise($current);
            };
        }
    }
}
