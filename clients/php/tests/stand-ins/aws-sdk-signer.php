<?php

declare(strict_types=1);

/*
 * Stand-ins for the parts of the AWS SDK for PHP that `Signing\AwsSdkSigner` calls (the
 * SDK is not installed where these tests run): the SDK's signer, which builds a Guzzle
 * request of the headers it adds, and that request, which refuses a header value as
 * Guzzle's does, by an exception that quotes it. Not autoloaded: a test requires this
 * file (and aws-sdk-credentials.php, for `Aws\Credentials\Credentials`) in a process of
 * its own, since once these classes exist every client signs with them.
 */

namespace GuzzleHttp\Psr7 {
    /** A request whose headers hold only what Guzzle's take. */
    final class Request
    {
        /** @var array<string, list<string>> */
        private array $headers = [];

        /** @param array<string, string> $headers */
        public function __construct(
            private readonly string $method,
            private readonly string $uri,
            array $headers = [],
            private readonly string $body = '',
        ) {
            foreach ($headers as $name => $value) {
                $this->headers[$name] = [self::valid($value)];
            }
        }

        public function getMethod(): string
        {
            return $this->method;
        }

        public function getUri(): string
        {
            return $this->uri;
        }

        /** @return array<string, list<string>> */
        public function getHeaders(): array
        {
            return $this->headers;
        }

        public function getBody(): string
        {
            return $this->body;
        }

        /** As Guzzle's `MessageTrait::assertValue`, which quotes the value it refuses. */
        private static function valid(string $value): string
        {
            $value = trim($value, " \t");
            if (preg_match('/^[\x20\x09\x21-\x7E\x80-\xFF]*$/D', $value) !== 1) {
                throw new \InvalidArgumentException(sprintf('"%s" is not valid header value.', $value));
            }
            return $value;
        }
    }
}

namespace Aws\Signature {
    /**
     * As the SDK's `signRequest`: the request rebuilt with `X-Amz-Date`, the session token
     * and an `Authorization` header (its signature made up here); `$signed` counts the calls.
     */
    final class SignatureV4
    {
        public static int $signed = 0;

        public function __construct(private readonly string $service, private readonly string $region)
        {
        }

        public function signRequest(
            \GuzzleHttp\Psr7\Request $request,
            \Aws\Credentials\Credentials $credentials,
        ): \GuzzleHttp\Psr7\Request {
            self::$signed++;
            $headers = ['X-Amz-Date' => gmdate('Ymd\THis\Z')];
            if ($credentials->getSecurityToken() !== null) {
                $headers['X-Amz-Security-Token'] = $credentials->getSecurityToken();
            }
            $headers['Authorization'] = "AWS4-HMAC-SHA256 Credential={$credentials->getAccessKeyId()}/"
                . gmdate('Ymd') . "/{$this->region}/{$this->service}/aws4_request, SignedHeaders=host, Signature=0";
            return new \GuzzleHttp\Psr7\Request(
                $request->getMethod(),
                $request->getUri(),
                array_map(static fn (array $values): string => implode(', ', $values), $request->getHeaders()) + $headers,
                $request->getBody(),
            );
        }
    }
}
