<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\Batches;
use Tally\Client\Http\Response;
use Tally\Client\Http\Transport;
use Tally\Client\RetryPolicy;
use Tally\Client\Signing\Credentials;
use Tally\Client\Signing\SignatureV4;
use Tally\Client\TallyClient;
use Tally\Client\TallyError;

/**
 * Pure logic, without a server: errors, waits, batches, paths and bodies as they would be
 * sent, credentials in dumps, and the signer on AWS's own test vector.
 */
final class UnitsTest extends TestCase
{
    /** A transport that records each request (method, URL, body) and answers `$answer` with `200`. */
    private static function recorder(string $answer): Transport
    {
        return new class ($answer) extends Transport {
            /** @var list<array{string, string, string}> */
            public array $sent = [];

            public function __construct(private readonly string $answer)
            {
                parent::__construct();
            }

            public function send(string $method, string $url, array $headers, string $body): Response
            {
                $this->sent[] = [$method, $url, $body];
                return new Response(200, [], $this->answer);
            }
        };
    }

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

    public function testAPathParameterOfDotsIsRefusedBeforeAnyRequest(): void
    {
        $transport = self::recorder('{"purchases": [], "cursor": null}');
        $tally = new TallyClient('http://tally.test', credentials: false, transport: $transport);
        $calls = [
            ['payer_id', static fn () => iterator_to_array($tally->payerPurchases('d', '..'))],
            ['payer_id', static fn () => $tally->getLimits('..')],
            ['draw_id', static fn () => $tally->getDraw('.')],
            ['series_id', static fn () => $tally->getSeriesOrder('..', 'N-1')],
        ];
        foreach ($calls as [$name, $call]) {
            try {
                $call();
                self::fail("{$name}: no refusal");
            } catch (\InvalidArgumentException $refusal) {
                self::assertStringStartsWith("{$name} cannot be", $refusal->getMessage());
            }
        }
        self::assertSame([], $transport->sent);
        $tally->getLimits('...');
        iterator_to_array($tally->payerPurchases('d', '..x'));
        self::assertSame(
            ['http://tally.test/payers/.../limits', 'http://tally.test/draws/d/payers/..x/purchases'],
            array_column($transport->sent, 1),
        );
    }

    public function testABodyThatIsAnEmptyArrayIsSentAsAnEmptyObject(): void
    {
        $transport = self::recorder('{}');
        $tally = new TallyClient('http://tally.test', credentials: false, transport: $transport);
        $tally->defineSeries('X', []);
        $tally->updateSeries('X', []);
        $tally->createSeriesOrder('X', ['source' => 's', 'external_ref' => 'r', 'data' => ['tags' => []]]);
        $tally->getSeries('X');
        self::assertSame(
            ['{}', '{}', '{"source":"s","external_ref":"r","data":{"tags":[]}}', ''],
            array_column($transport->sent, 2),
        );
    }

    public function testCredentialsShowTheirSecretAndTokenInNoDump(): void
    {
        $credentials = new Credentials('AKIDEXAMPLE', 'the-secret-key', 'the-session-token');
        self::assertSame(['the-secret-key', 'the-session-token'], [$credentials->secretAccessKey(), $credentials->sessionToken()]);
        ob_start();
        var_dump($credentials);
        $dumps = [
            'var_dump' => (string) ob_get_clean(),
            'print_r' => print_r($credentials, true),
            'var_export' => var_export($credentials, true),
            '(array) var_export' => var_export((array) $credentials, true),
            '(array) print_r' => print_r((array) $credentials, true),
            'json_encode' => json_encode($credentials, JSON_THROW_ON_ERROR),
        ];
        foreach ($dumps as $how => $dump) {
            self::assertStringContainsString('AKIDEXAMPLE', $dump, $how);
            self::assertStringNotContainsString('the-secret-key', $dump, $how);
            self::assertStringNotContainsString('the-session-token', $dump, $how);
        }
        try {
            $serialized = serialize($credentials);
        } catch (\LogicException) {
            $serialized = '';
        }
        self::assertStringNotContainsString('the-secret-key', $serialized);
        self::assertStringNotContainsString('the-session-token', $serialized);
    }

    /**
     * The signed host is the `Host` curl sends: without the scheme's default port, with
     * any other (the signatures are botocore's for these URLs).
     */
    public function testTheSignerSignsTheHostAsSent(): void
    {
        $signer = new SignatureV4('service', 'us-east-1');
        $credentials = new Credentials('AKIDEXAMPLE', 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY');
        $vanilla = '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31';
        $expected = [
            'https://example.amazonaws.com:443/' => $vanilla,
            'http://example.amazonaws.com:80/' => $vanilla,
            'http://example.amazonaws.com:8080/' => 'deb1c41e2d1db9d99891d2c51ade16eb7c54a1df3cb055dc274bc8a854d23cbe',
            'http://example.amazonaws.com:443/' => 'fd5a2ac302647754a4f7a0b30d8871340c1101a19642ebba6ef8c5e72d4a0253',
        ];
        $signed = [];
        foreach (array_keys($expected) as $url) {
            $headers = $signer->sign('GET', $url, [], '', $credentials, new \DateTimeImmutable('2015-08-30T12:36:00Z'));
            $signed[$url] = explode('Signature=', $headers['authorization'])[1];
        }
        self::assertSame($expected, $signed);
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
