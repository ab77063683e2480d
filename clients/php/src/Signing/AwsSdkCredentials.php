<?php

declare(strict_types=1);

namespace Tally\Client\Signing;

/**
 * The AWS SDK for PHP's default credential provider chain, used when the SDK is installed
 * and no credentials are given: besides what `CredentialChain` reads, it takes SSO,
 * `credential_process` (IAM Roles Anywhere), web identity and role assumption. The SDK's
 * provider is memoized: it answers the same credentials until they expire, then resolves
 * new ones. Each answer is made a `Credentials` for the signer.
 */
final class AwsSdkCredentials
{
    /** @var \Closure(): \GuzzleHttp\Promise\PromiseInterface the SDK's memoized default provider */
    private readonly \Closure $provider;

    public function __construct()
    {
        $this->provider = \Closure::fromCallable(\Aws\Credentials\CredentialProvider::defaultProvider());
    }

    public static function available(): bool
    {
        return class_exists(\Aws\Credentials\CredentialProvider::class);
    }

    public function __invoke(): Credentials
    {
        /** @var \Aws\Credentials\CredentialsInterface $resolved */
        $resolved = ($this->provider)()->wait();
        $expiration = $resolved->getExpiration();
        return new Credentials(
            $resolved->getAccessKeyId(),
            $resolved->getSecretKey(),
            $resolved->getSecurityToken(),
            $expiration === null ? null : (new \DateTimeImmutable())->setTimestamp($expiration),
        );
    }
}
