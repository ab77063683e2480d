<?php

declare(strict_types=1);

namespace Tally\Client\Signing;

/**
 * AWS Signature Version 4, as API Gateway's IAM auth checks it: used only when the AWS
 * SDK for PHP is not installed (then `AwsSdkSigner` signs). It follows AWS's published
 * procedure and is tested against its test suite and against botocore, which signs
 * every request of the client's tests again.
 */
final class SignatureV4 implements Signer
{
    public function __construct(private readonly string $service, private readonly string $region)
    {
    }

    /**
     * @param array<string, string> $headers
     * @return array<string, string> the headers, with `X-Amz-Date`, `Authorization` and,
     *                               for temporary credentials, `X-Amz-Security-Token`
     */
    public function sign(
        string $method,
        string $url,
        #[\SensitiveParameter] array $headers,
        #[\SensitiveParameter] string $body,
        Credentials $credentials,
        ?\DateTimeImmutable $now = null,
    ): array {
        $now = ($now ?? new \DateTimeImmutable())->setTimezone(new \DateTimeZone('UTC'));
        $amzDate = $now->format('Ymd\THis\Z');
        $date = $now->format('Ymd');
        $parts = parse_url($url);
        $headers = ['host' => self::host($parts)] + $headers + ['x-amz-date' => $amzDate];
        $headers['x-amz-date'] = $amzDate;
        if ($credentials->sessionToken() !== null) {
            $headers['x-amz-security-token'] = $credentials->sessionToken();
        }
        $canonicalHeaders = [];
        foreach ($headers as $name => $value) {
            $canonicalHeaders[strtolower($name)] = preg_replace('/\s+/', ' ', trim($value));
        }
        ksort($canonicalHeaders, SORT_STRING);
        $signedHeaders = implode(';', array_keys($canonicalHeaders));
        $canonicalRequest = implode("\n", [
            strtoupper($method),
            self::canonicalPath($parts['path'] ?? '/'),
            self::canonicalQuery($parts['query'] ?? ''),
            implode('', array_map(static fn ($n, $v) => "{$n}:{$v}\n", array_keys($canonicalHeaders), $canonicalHeaders)),
            $signedHeaders,
            hash('sha256', $body),
        ]);
        $scope = "{$date}/{$this->region}/{$this->service}/aws4_request";
        $stringToSign = implode("\n", ['AWS4-HMAC-SHA256', $amzDate, $scope, hash('sha256', $canonicalRequest)]);
        $key = 'AWS4' . $credentials->secretAccessKey();
        foreach ([$date, $this->region, $this->service, 'aws4_request'] as $part) {
            $key = hash_hmac('sha256', $part, $key, true);
        }
        $signature = hash_hmac('sha256', $stringToSign, $key);
        unset($headers['host']);
        $headers['authorization'] = "AWS4-HMAC-SHA256 Credential={$credentials->accessKeyId}/{$scope}, "
            . "SignedHeaders={$signedHeaders}, Signature={$signature}";
        return $headers;
    }

    /**
     * The `Host` header curl sends: the host, and the port unless it is the scheme's
     * default (`https://h:443` sends `Host: h`, `http://h:8080` sends `Host: h:8080`).
     *
     * @param array<string, int|string> $parts the URL, parsed
     */
    private static function host(array $parts): string
    {
        $port = $parts['port'] ?? null;
        $default = ['http' => 80, 'https' => 443][strtolower((string) ($parts['scheme'] ?? ''))] ?? null;
        return $parts['host'] . ($port === null || $port === $default ? '' : ":{$port}");
    }

    /**
     * The path as sent, each segment escaped once more: every AWS service but S3 signs
     * the escaped path (`ann%40example.com` is signed as `ann%2540example.com`).
     */
    private static function canonicalPath(string $path): string
    {
        $segments = [];
        foreach (explode('/', $path) as $segment) {
            if ($segment === '.') {
                continue;
            }
            if ($segment === '..') {
                array_pop($segments);
                continue;
            }
            $segments[] = rawurlencode($segment);
        }
        $canonical = implode('/', $segments);
        return $canonical === '' ? '/' : $canonical;
    }

    /** Each name and value escaped the AWS way, sorted by name, then value. */
    private static function canonicalQuery(string $query): string
    {
        if ($query === '') {
            return '';
        }
        $pairs = [];
        foreach (explode('&', $query) as $pair) {
            [$name, $value] = explode('=', $pair, 2) + [1 => ''];
            $pairs[] = [rawurlencode(rawurldecode($name)), rawurlencode(rawurldecode($value))];
        }
        usort($pairs, static fn (array $a, array $b): int => [$a[0], $a[1]] <=> [$b[0], $b[1]]);
        return implode('&', array_map(static fn (array $p): string => "{$p[0]}={$p[1]}", $pairs));
    }
}
