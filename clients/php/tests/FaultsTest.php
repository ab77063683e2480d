<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\RetryPolicy;
use Tally\Client\Signing\Credentials;
use Tally\Client\TallyError;

/**
 * Repeats through real faults: Tally's own `503`s with `Retry-After` (DynamoDB throttled,
 * or a write committed whose answer was lost) and API Gateway's `429`s, each settled
 * exactly once; API Gateway's refusals as errors of their own; credentials from the
 * environment, a profile, a container endpoint and an instance's metadata service; a
 * bearer token for a stack with a JWT authorizer.
 */
final class FaultsTest extends TestCase
{
    public function testTallysServiceUnavailableAfterThrottlingIsRepeatedAndThePurchaseMadeOnce(): void
    {
        $tally = World::client();
        $drawId = World::unique('php-throttled');
        $tally->createDraw(['draw_id' => $drawId, 'total_tickets' => 100]);
        $before = World::counts();
        World::dynamodbFault(['operation' => 'TransactWriteItems', 'kind' => 'throttle', 'count' => 6]);
        $bought = $tally->purchase($drawId, ['payment_id' => 'slow', 'quantity' => 4]);
        self::assertGreaterThanOrEqual(1, World::grown($before)['tally.503'] ?? 0);
        self::assertCount(4, $bought['tickets']);
        self::assertSame(4, $tally->getDraw($drawId)['sold']);
    }

    public function testAWriteWhoseAnswerWasLostIsRepeatedIntoAReplayNeverASecondPurchase(): void
    {
        $tally = World::client();
        $drawId = World::unique('php-lost');
        $tally->createDraw(['draw_id' => $drawId, 'total_tickets' => 100]);
        $before = World::counts();
        World::dynamodbFault(['operation' => 'TransactWriteItems', 'kind' => 'error_after', 'count' => 6]);
        $bought = $tally->purchase($drawId, ['payment_id' => 'lost', 'quantity' => 3]);
        self::assertGreaterThanOrEqual(1, World::grown($before)['tally.503'] ?? 0);
        self::assertSame(3, $tally->getDraw($drawId)['sold']);
        $listed = iterator_to_array($tally->drawPurchases($drawId), false);
        self::assertSame([['lost', $bought['tickets']]], array_map(static fn (array $p): array => [$p['payment_id'], $p['tickets']], $listed));
    }

    public function testApiGatewaysTooManyRequestsIsRepeatedThenAGatewayThrottledError(): void
    {
        $tally = World::client();
        $drawId = World::unique('php-429');
        $tally->createDraw(['draw_id' => $drawId, 'total_tickets' => 10]);
        World::gatewayFault(['status' => 429, 'count' => 2, 'path_prefix' => "/draws/{$drawId}"]);
        $before = World::counts();
        self::assertSame($drawId, $tally->getDraw($drawId)['draw_id']);
        self::assertSame(2, World::grown($before)['gateway.injected.429']);
        World::gatewayFault(['status' => 429, 'count' => 2, 'path_prefix' => "/draws/{$drawId}"]);
        try {
            World::client(retry: new RetryPolicy(2, 1, 10))->getDraw($drawId);
            self::fail('a 429 past the attempts passed');
        } catch (TallyError $error) {
            self::assertSame([429, 'gateway_throttled', true, 'Too Many Requests'], [$error->status(), $error->code(), $error->fromGateway(), $error->detail()]);
        }
    }

    /** The refusal quotes the request it expected, session token included: the error keeps neither. */
    public function testApiGatewaysRefusalOfABadSignatureIsAGatewayForbiddenErrorWithoutTheSessionToken(): void
    {
        $token = World::env('TALLY_TEST_SESSION_TOKEN');
        $forged = World::client(new Credentials(World::env('TALLY_TEST_SESSION_KEY'), 'not-the-secret', $token));
        try {
            $forged->getDraw('any');
            self::fail('a forged signature passed');
        } catch (TallyError $error) {
            self::assertSame([403, 'gateway_forbidden', true], [$error->status(), $error->code(), $error->fromGateway()]);
            self::assertStringContainsString('signature', $error->detail());
            foreach ([$error->getMessage(), print_r($error->problem(), true)] as $text) {
                self::assertStringNotContainsString($token, $text);
                self::assertStringNotContainsString('Canonical String', $text);
            }
        }
    }

    public function testWithATokenProviderRequestsCarryItsBearerTokenInsteadOfASignatureAskedForEachAttempt(): void
    {
        $asked = 0;
        $token = static function () use (&$asked): string {
            $asked++;
            return World::env('TALLY_TOKEN');
        };
        $tally = World::client(token: $token);
        $drawId = World::unique('php-token');
        $before = World::counts();
        self::assertSame($drawId, $tally->createDraw(['draw_id' => $drawId, 'total_tickets' => 5])['draw_id']);
        World::gatewayFault(['status' => 429, 'count' => 1, 'path_prefix' => "/draws/{$drawId}"]);
        self::assertSame($drawId, $tally->getDraw($drawId)['draw_id']);
        $seen = World::grown($before);
        self::assertSame([3, 0, 3], [$seen['gateway.token'] ?? 0, $seen['gateway.signed'] ?? 0, $asked]);

        $stranger = World::client(token: static fn (): string => 'not-a-token-of-the-issuer');
        try {
            $stranger->getDraw($drawId);
            self::fail('an unknown token passed');
        } catch (TallyError $error) {
            self::assertSame([401, 'gateway_unauthorized', true], [$error->status(), $error->code(), $error->fromGateway()]);
        }
        $this->expectException(\InvalidArgumentException::class);
        World::client(new Credentials('AKID', 'secret'), token: $token);
    }

    /** @return iterable<string, array{array<string, string>, string|null}> */
    public static function credentialSources(): iterable
    {
        $home = sys_get_temp_dir() . '/tally-aws-' . bin2hex(random_bytes(4));
        @mkdir($home);
        file_put_contents("{$home}/credentials", sprintf(
            "[tally-test]\naws_access_key_id = %s\naws_secret_access_key = %s\naws_session_token = %s\n",
            getenv('TALLY_TEST_SESSION_KEY'),
            getenv('TALLY_TEST_SESSION_SECRET'),
            getenv('TALLY_TEST_SESSION_TOKEN'),
        ));
        $harness = (string) getenv('TALLY_HARNESS');
        yield 'a profile' => [['AWS_PROFILE' => 'tally-test', 'AWS_SHARED_CREDENTIALS_FILE' => "{$home}/credentials"], null];
        yield 'a container endpoint' => [[
            'AWS_CONTAINER_CREDENTIALS_FULL_URI' => "{$harness}/container-credentials",
            'AWS_CONTAINER_AUTHORIZATION_TOKEN' => (string) getenv('HARNESS_CONTAINER_TOKEN'),
        ], 'credentials.container'];
        yield 'an instance role' => [['AWS_EC2_METADATA_SERVICE_ENDPOINT' => $harness], 'credentials.instance'];
        // A container that names a profile no file holds, as `AWS_PROFILE=default` without ~/.aws.
        yield 'a container endpoint past a profile no file holds' => [[
            'AWS_PROFILE' => 'default',
            'AWS_SHARED_CREDENTIALS_FILE' => '/nonexistent',
            'AWS_CONTAINER_CREDENTIALS_FULL_URI' => "{$harness}/container-credentials",
            'AWS_CONTAINER_AUTHORIZATION_TOKEN' => (string) getenv('HARNESS_CONTAINER_TOKEN'),
        ], 'credentials.container'];
    }

    /**
     * @dataProvider credentialSources
     * @param array<string, string> $environment
     */
    public function testCredentialsComeFromTheChain(array $environment, ?string $counted): void
    {
        $saved = getenv();
        foreach (['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] as $name) {
            putenv($name);
        }
        foreach ($environment + ['AWS_CONFIG_FILE' => '/nonexistent'] as $name => $value) {
            putenv("{$name}={$value}");
        }
        try {
            $before = World::counts();
            $drawId = World::unique('php-chain');
            self::assertSame($drawId, World::client()->createDraw(['draw_id' => $drawId, 'total_tickets' => 3])['draw_id']);
            if ($counted !== null) {
                self::assertSame(1, World::grown($before)[$counted] ?? 0);
            }
        } finally {
            foreach (array_keys($environment) as $name) {
                putenv($name);
            }
            foreach ($saved as $name => $value) {
                putenv("{$name}={$value}");
            }
        }
    }
}
