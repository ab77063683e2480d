<?php

declare(strict_types=1);

namespace Tally\Client\Signing;

/** Signs a request for API Gateway's IAM auth (SigV4, service `execute-api`). */
interface Signer
{
    /**
     * @param array<string, string> $headers
     * @return array<string, string> the headers to send, signature included
     */
    public function sign(
        string $method,
        string $url,
        #[\SensitiveParameter] array $headers,
        #[\SensitiveParameter] string $body,
        Credentials $credentials,
    ): array;
}
