<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\Batches;
use Tally\Client\Http\Response;
use Tally\Client\RetryPolicy;
use Tally\Client\Signing\Credentials;
use Tally\Client\Signing\SignatureV4;
use Tally\Client\TallyError;

/** Pure logic, without a server: errors, waits, batches, and the signer on AWS's own test vector. */
final class UnitsTest extends TestCase
{
    public function testAProblemKeepsItsCodeAndAGatewayAnswerGetsOneOfItsOwn(): void
    {
        $problem = TallyError::of(new Response(503, ['retry-after' => '2'], '{"status": 503, "code": "throttled", "detail": "again"}'));
        self::assertSame(['throttled', 503, 2, false], [$problem->code(), $problem->status(), $problem->retryAfter(), $problem->fromGateway()]);
        $gateway = TallyError::of(new Response(403, [], '{"message": "Forbidden"}'));
        self::assertSame(['gateway_forbidden', 'Forbidden', true], [$gateway->code(), $gateway->detail(), $gateway->fromGateway()]);
        $odd = TallyError::of(new Response(418, [], 'teapot'));
        self::assertSame(['gateway_error', 'teapot'], [$odd->code(), $odd->detail()]);
    }

    public function testAWaitIsRetryAfterPlusFullJitterUnderADoublingCeilingNeverPastTheCap(): void
    {
        $policy = new RetryPolicy(6, 100, 1_000);
        self::assertSame(0, $policy->waitBefore(1, null, static fn (): float => 0.0));
        self::assertSame(100, $policy->waitBefore(1, null, static fn (): float => 1.0));
        self::assertSame(400, $policy->waitBefore(3, null, static fn (): float => 1.0));
        self::assertSame(1_000, $policy->waitBefore(9, null, static fn (): float => 1.0));
        self::assertSame(1_000, $policy->waitBefore(1, 2, static fn (): float => 0.0));
        self::assertSame(550, $policy->waitBefore(1, 0.5, static fn (): float => 0.5));
    }

    public function testABatchPostsItsContendedItemsAgainAloneAndKeepsTheFirstIndexes(): void
    {
        $posted = [];
        $answer = Batches::settle(
            [['external_ref' => 'a'], ['external_ref' => 'b'], ['external_ref' => 'c']],
            static function (array $orders) use (&$posted): array {
                $posted[] = array_column($orders, 'external_ref');
                $results = [];
                foreach ($orders as $index => $order) {
                    $ref = $order['external_ref'];
                    $results[] = count($posted) === 1 && $ref !== 'a'
                        ? ['index' => $index, 'external_ref' => $ref, 'status' => 'rejected', 'code' => 'contention', 'retry_after' => 0]
                        : ['index' => $index, 'external_ref' => $ref, 'status' => 'created', 'order_number' => "N-{$ref}"];
                }
                return ['results' => $results];
            },
            new RetryPolicy(6, 1, 10),
        );
        self::assertSame([['a', 'b', 'c'], ['b', 'c']], $posted);
        self::assertSame(
            [[0, 'a', 'created'], [1, 'b', 'created'], [2, 'c', 'created']],
            array_map(static fn (array $r): array => [$r['index'], $r['external_ref'], $r['status']], $answer['results']),
        );
    }

    /** `get-vanilla` of AWS's published SigV4 test suite (botocore signs it alike). */
    public function testTheSignerSignsAwsPublishedVector(): void
    {
        $signer = new SignatureV4('service', 'us-east-1');
        $headers = $signer->sign(
            'GET',
            'https://example.amazonaws.com/',
            [],
            '',
            new Credentials('AKIDEXAMPLE', 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'),
            new \DateTimeImmutable('2015-08-30T12:36:00Z'),
        );
        self::assertSame(
            'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, '
            . 'SignedHeaders=host;x-amz-date, '
            . 'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
            $headers['authorization'],
        );
        self::assertSame('20150830T123600Z', $headers['x-amz-date']);
    }

    public function testApiGatewaysAnswersGetTheCodesAndRepeatsDocsApiGivesThem(): void
    {
        $page = (string) file_get_contents(__DIR__ . '/../../../docs/api.md');
        $section = explode("\n#", explode("### API Gateway's own answers", $page)[1])[0];
        $codes = [];
        $repeated = [];
        foreach (explode("\n", $section) as $row) {
            if (preg_match('/^\| (`\d{3}`|any other)/', $row) !== 1) {
                continue;
            }
            [, $status, , , $code, $repeat] = array_map('trim', explode('|', $row));
            preg_match('/`(gateway_\w+)`/', $code, $gatewayCode);
            if ($status === 'any other') {
                self::assertSame(TallyError::GATEWAY_OTHER, $gatewayCode[1]);
                continue;
            }
            $number = (int) trim($status, '`');
            $codes[$number] = $gatewayCode[1];
            if (str_starts_with($repeat, 'yes')) {
                $repeated[] = $number;
            }
        }
        ksort($codes);
        self::assertSame($codes, TallyError::GATEWAY_CODES);
        self::assertSame($repeated, array_values(array_intersect(RetryPolicy::REPEATED, array_keys($codes))));
    }
}
