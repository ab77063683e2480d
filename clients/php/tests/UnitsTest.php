<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\Batches;
use Tally\Client\Http\Response;
use Tally\Client\Http\Transport;
use Tally\Client\Http\TransportError;
use Tally\Client\RetryPolicy;
use Tally\Client\Signing\CredentialChain;
use Tally\Client\Signing\Credentials;
use Tally\Client\Signing\SignatureV4;
use Tally\Client\Signing\Signer;
use Tally\Client\TallyClient;
use Tally\Client\TallyError;

/**
 * Pure logic, without a server: errors, waits, batches, paths and bodies as they would be
 * sent, credentials in dumps and exception traces, the AWS SDK's credential chain (a
 * stand-in of it), and the signer on AWS's own test vector.
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

    /**
     * API Gateway's refusal of a signature quotes the request it expected, session token
     * included: the error keeps the sentence before the quote, and no token anywhere.
     */
    public function testAGatewayRefusalOfASignatureKeepsNoSessionToken(): void
    {
        $sentence = 'The request signature we calculated does not match the signature you provided. '
            . 'Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';
        $quote = "\n\nThe Canonical String for this request should have been\n'POST\n/draws/d/purchases\n\n"
            . "host:abc.execute-api.eu-west-1.amazonaws.com\nx-amz-date:20260101T000000Z\n"
            . "x-amz-security-token:IQoJb3JpZ2luX2VjEPa//secret+token=\n\nhost;x-amz-date;x-amz-security-token\n"
            . hash('sha256', '') . "'\n\nThe String-to-Sign should have been\n'AWS4-HMAC-SHA256\n20260101T000000Z\n"
            . "20260101/eu-west-1/execute-api/aws4_request\n" . hash('sha256', 'x') . "'\n";
        $refusal = TallyError::of(new Response(403, [], json_encode(['message' => $sentence . $quote])));
        self::assertSame([$sentence, ['message' => $sentence]], [$refusal->detail(), $refusal->problem()]);
        self::assertSame("403 gateway_forbidden: {$sentence}", $refusal->getMessage());

        $unreadable = TallyError::of(new Response(502, [], "x-amz-security-token: IQoJb3JpZ2luX2VjEPa//secret+token=\nbad gateway"));
        self::assertSame("x-amz-security-token: <redacted>\nbad gateway", $unreadable->detail());
        $problem = TallyError::of(new Response(400, [], json_encode([
            'code' => 'invalid_body',
            'detail' => 'got x-amz-security-token:IQoJb3JpZ2luX2VjEPa//secret+token=',
            'seen' => ['headers' => ["X-Amz-Security-Token:IQoJb3JpZ2luX2VjEPa//secret+token="]],
        ])));
        self::assertSame('got x-amz-security-token:<redacted>', $problem->detail());
        self::assertSame(['headers' => ['X-Amz-Security-Token:<redacted>']], $problem->problem()['seen']);
        foreach ([$refusal, $unreadable, $problem] as $error) {
            self::assertStringNotContainsString('secret+token', $error->getMessage() . print_r($error->problem(), true));
        }
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

    public function testAPathParameterThatIsEmptyOrDotsIsRefusedBeforeAnyRequest(): void
    {
        $transport = self::recorder('{"purchases": [], "cursor": null}');
        $tally = new TallyClient('http://tally.test', credentials: false, transport: $transport);
        $calls = [
            ['payer_id', static fn () => iterator_to_array($tally->payerPurchases('d', '..'))],
            ['payer_id', static fn () => $tally->getLimits('..')],
            ['draw_id', static fn () => $tally->getDraw('.')],
            ['series_id', static fn () => $tally->getSeriesOrder('..', 'N-1')],
            ['payer_id', static fn () => iterator_to_array($tally->payerPurchases('d', ''))],
            ['draw_id', static fn () => $tally->getDraw('')],
            ['external_ref', static fn () => $tally->orderByRef('webshop', '')],
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

    public function testEmptyMapsAndDataAreSentAsTheObjectsTheApiTakes(): void
    {
        $transport = self::recorder('{"results": []}');
        $tally = new TallyClient('http://tally.test', credentials: false, transport: $transport);
        $tally->setLimits('p', []);
        $tally->setLimits('p', ['EUR' => [], 'USD' => ['day' => 100]]);
        $tally->createOrder(['series' => 'X', 'source' => 's', 'external_ref' => 'r', 'data' => []]);
        $tally->createSeriesOrder('X', ['source' => 's', 'external_ref' => 'r', 'data' => []]);
        $tally->createBatch(['series' => 'X', 'source' => 's', 'orders' => [['external_ref' => 'r', 'data' => []]]]);
        $tally->createSeriesBatch('X', ['source' => 's', 'orders' => [['external_ref' => 'r', 'data' => []], ['external_ref' => 'q']]]);
        self::assertSame(
            [
                '{"limits":{}}',
                '{"limits":{"EUR":{},"USD":{"day":100}}}',
                '{"series":"X","source":"s","external_ref":"r","data":{}}',
                '{"source":"s","external_ref":"r","data":{}}',
                '{"orders":[{"external_ref":"r","data":{}}],"series":"X","source":"s"}',
                '{"orders":[{"external_ref":"r","data":{}},{"external_ref":"q"}],"source":"s"}',
            ],
            array_column($transport->sent, 2),
        );
    }

    /**
     * With the AWS SDK installed (a stand-in of its provider chain here) and no
     * credentials given, the SDK's memoized default chain gives them, each set it
     * resolves made a `Credentials`, the next set used once the first expires.
     *
     * @runInSeparateProcess
     * @preserveGlobalState disabled
     */
    public function testWithTheSdkInstalledItsCredentialChainGivesTheCredentials(): void
    {
        require __DIR__ . '/stand-ins/aws-sdk-credentials.php';
        $expires = time() + 3_600;
        $first = new \Aws\Credentials\Credentials('ASIAFIRST', 'first-secret', 'first-token', $expires);
        \Aws\Credentials\CredentialProvider::$found = [$first, new \Aws\Credentials\Credentials('AKIDSECOND', 'second-secret')];
        $signer = new class () implements Signer {
            /** @var list<Credentials> */
            public array $used = [];

            public function sign(string $method, string $url, array $headers, string $body, Credentials $credentials): array
            {
                $this->used[] = $credentials;
                return $headers;
            }
        };
        $tally = new TallyClient('http://tally.test', 'eu-west-1', signer: $signer, transport: self::recorder('{}'));
        $tally->getDraw('d');
        $tally->getDraw('d');
        $first->expires = time() - 1;
        $tally->getDraw('d');
        self::assertSame(2, \Aws\Credentials\CredentialProvider::$resolved);
        self::assertSame(
            [
                ['ASIAFIRST', 'first-secret', 'first-token', $expires],
                ['ASIAFIRST', 'first-secret', 'first-token', $expires],
                ['AKIDSECOND', 'second-secret', null, null],
            ],
            array_map(static fn (Credentials $c): array => [
                $c->accessKeyId,
                $c->secretAccessKey(),
                $c->sessionToken(),
                $c->expiration?->getTimestamp(),
            ], $signer->used),
        );
    }

    /**
     * What `$fails` throws, made with exception traces holding arguments (as where
     * `zend.exception_ignore_args` is Off), and the arguments of the frames it went
     * through before this test's, printed.
     *
     * @return array{\Throwable, string}
     */
    private static function failureWithArguments(callable $fails): array
    {
        $ignored = ini_set('zend.exception_ignore_args', '0');
        try {
            $fails();
        } catch (\Throwable $failure) {
            $frames = [];
            foreach ($failure->getTrace() as $frame) {
                if (($frame['class'] ?? null) === self::class) {
                    break;
                }
                $frames[] = $frame['args'] ?? [];
            }
            return [$failure, print_r($frames, true)];
        } finally {
            ini_set('zend.exception_ignore_args', (string) $ignored);
        }
        self::fail('nothing failed');
    }

    /** Exception traces keep no signed header, token or request body as an argument. */
    public function testATransportFailureLeavesNoSecretInTheTrace(): void
    {
        $tally = new TallyClient(
            'http://127.0.0.1:1',
            'eu-west-1',
            new Credentials('AKIDTRACE', 'trace-secret', 'trace-session-token'),
            new RetryPolicy(1),
            transport: new Transport(2),
        );
        $bearer = new TallyClient('http://127.0.0.1:1', retry: new RetryPolicy(1), transport: new Transport(2), token: static fn (): string => 'trace-bearer-token');
        $calls = [
            static fn () => $tally->purchase('d', ['payment_id' => 'pi_1', 'token' => 'tok_trace_card']),
            static fn () => $tally->createSeriesBatch('S', ['source' => 's', 'orders' => [['external_ref' => 'r', 'data' => ['card' => 'tok_trace_card']]]]),
            static fn () => $bearer->createOrder(['series' => 'S', 'source' => 's', 'external_ref' => 'r', 'data' => ['card' => 'tok_trace_card']]),
        ];
        foreach ($calls as $call) {
            [$failure, $arguments] = self::failureWithArguments($call);
            self::assertInstanceOf(TransportError::class, $failure);
            // The arguments are there (the URL), the secrets are not.
            self::assertStringContainsString('http://127.0.0.1:1/', $arguments);
            foreach (['AKIDTRACE', 'AWS4-HMAC-SHA256', 'trace-session-token', 'trace-bearer-token', 'tok_trace_card'] as $secret) {
                self::assertStringNotContainsString($secret, $arguments);
            }
        }
    }

    /** Nor does a trace keep a credential endpoint's answer, or the secret and token made of it. */
    public function testACredentialAnswerThatCannotBeReadLeavesNoSecretInTheTrace(): void
    {
        $answers = [
            'a bad expiration' => ['AccessKeyId' => 'ASIATRACE', 'Expiration' => 'not a date'],
            'a key that is no string' => ['AccessKeyId' => 7, 'Expiration' => '2030-01-01T00:00:00Z'],
        ];
        foreach ($answers as $what => $answer) {
            $json = json_encode($answer + ['SecretAccessKey' => 'answer-secret', 'Token' => 'answer-token']);
            $read = \Closure::bind(static fn () => CredentialChain::temporary($json, 'http://credentials.test'), null, CredentialChain::class);
            [, $arguments] = self::failureWithArguments($read);
            self::assertStringContainsString('http://credentials.test', $arguments, $what);
            self::assertStringNotContainsString('answer-secret', $arguments, $what);
            self::assertStringNotContainsString('answer-token', $arguments, $what);
        }
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
