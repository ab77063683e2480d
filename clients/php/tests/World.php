<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use Tally\Client\RetryPolicy;
use Tally\Client\Signing\Credentials;
use Tally\Client\TallyClient;

/**
 * What the tests against a running Tally share: the stand-in for API Gateway
 * (clients/harness/run.sh starts it and sets TALLY_URL, TALLY_HARNESS, AWS_REGION and
 * test credentials), its control endpoint, and ids of their own for each run.
 */
final class World
{
    public static function env(string $name): string
    {
        $value = getenv($name);
        if ($value === false || $value === '') {
            throw new \RuntimeException("{$name} is not set: run the tests through clients/harness/run.sh");
        }
        return $value;
    }

    /** A client of the stand-in, with quick repeats. */
    public static function client(
        Credentials|callable|null $credentials = null,
        RetryPolicy $retry = new RetryPolicy(6, 20, 2_000),
        ?callable $token = null,
    ): TallyClient {
        return new TallyClient(self::env('TALLY_URL'), credentials: $credentials, retry: $retry, token: $token);
    }

    /** An id no other run or test uses. */
    public static function unique(string $prefix): string
    {
        return $prefix . '-' . bin2hex(random_bytes(5));
    }

    /** @return array<string, int> */
    private static function control(string $method, string $path, ?array $body = null): array
    {
        $context = stream_context_create(['http' => [
            'method' => $method,
            'header' => "content-type: application/json\r\n",
            'content' => $body === null ? '' : json_encode($body),
        ]]);
        $answer = file_get_contents(self::env('TALLY_HARNESS') . $path, false, $context);
        return json_decode((string) $answer, true, 512, JSON_THROW_ON_ERROR);
    }

    /** API Gateway answers `status` itself to the next `count` matching requests. */
    public static function gatewayFault(array $fault): void
    {
        self::control('POST', '/faults/gateway', $fault);
    }

    /**
     * DynamoDB throttles (`throttle`), commits then fails (`error_after`) or answers without
     * its last item, as an index moments behind (`hide_last`), the next `count` calls of an
     * `operation` whose request holds `holding`.
     */
    public static function dynamodbFault(array $fault): void
    {
        self::control('POST', '/faults/dynamodb', $fault);
    }

    /** @return array<string, int> what the stand-in and the fault proxy counted so far */
    public static function counts(): array
    {
        return self::control('GET', '/counts');
    }

    /** @return array<string, int> the growth of each count since `$before` */
    public static function grown(array $before): array
    {
        $grown = [];
        foreach (self::counts() as $name => $n) {
            $grown[$name] = $n - ($before[$name] ?? 0);
        }
        return $grown;
    }
}
