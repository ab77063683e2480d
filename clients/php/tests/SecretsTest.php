<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\Http\Response;
use Tally\Client\Http\Transport;
use Tally\Client\RetryPolicy;
use Tally\Client\Signing\Credentials;
use Tally\Client\TallyClient;
use Tally\Client\TallyError;

/**
 * Secrets kept out of errors, without a server: what API Gateway quotes back of a
 * request's bearer token or signature, and a token or credentials no header may carry.
 */
final class SecretsTest extends TestCase
{
    private const URL = 'https://abc.execute-api.eu-west-1.amazonaws.com';
    private const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzaG9wIn0.ZmFrZS1zaWduYXR1cmU';
    private const SESSION_TOKEN = 'IQoJb3JpZ2luX2VjEPa//fake+session=';

    /**
     * A transport that records each request's headers and answers `$status` with a body
     * whose `message` (and a nested member) is `$message` of those headers.
     *
     * @param \Closure(array<string, string>): string $message
     */
    private static function answering(int $status, \Closure $message): Transport
    {
        return new class ($status, $message) extends Transport {
            /** @var list<array<string, string>> */
            public array $sent = [];

            public function __construct(private readonly int $status, private readonly \Closure $message)
            {
                parent::__construct();
            }

            public function send(string $method, string $url, array $headers, string $body): Response
            {
                $this->sent[] = $headers;
                $message = ($this->message)($headers);
                return new Response($this->status, [], json_encode(['message' => $message, 'echo' => [['seen' => $message]]]));
            }
        };
    }

    /**
     * What `$call` throws, and every way it reaches a log: its message, its text, its
     * members, its cause, and the arguments of the frames of its trace before this test's
     * (as where `zend.exception_ignore_args` is Off; PHP leaves out those marked
     * `#[\SensitiveParameter]`).
     *
     * @return array{\Throwable, string}
     */
    private static function thrown(callable $call): array
    {
        $ignored = ini_set('zend.exception_ignore_args', '0');
        try {
            $call();
        } catch (\Throwable $error) {
            $frames = [];
            foreach ($error->getTrace() as $frame) {
                if (($frame['class'] ?? null) === self::class) {
                    break;
                }
                $frames[] = $frame['args'] ?? [];
            }
            $problem = $error instanceof TallyError ? [$error->detail(), $error->problem()] : [];
            return [$error, implode("\n", [
                $error->getMessage(),
                (string) $error,
                print_r($frames, true),
                var_export($problem, true),
                json_encode($problem),
                (string) $error->getPrevious(),
            ])];
        } finally {
            ini_set('zend.exception_ignore_args', (string) $ignored);
        }
        self::fail('nothing was thrown');
    }

    private static function bearer(Transport $transport, callable $token, int $attempts = 1): TallyClient
    {
        $retry = new RetryPolicy($attempts, 1, 10);
        return new TallyClient(self::URL, retry: $retry, transport: $transport, token: $token);
    }

    private static function signed(Transport $transport, Credentials $credentials): TallyClient
    {
        return new TallyClient(self::URL, 'eu-west-1', $credentials, new RetryPolicy(6, 1, 10), transport: $transport);
    }

    public function testAnIamApisRefusalOfABearerTokenLeavesTheTokenNowhereInTheError(): void
    {
        $jwt = self::JWT;
        $refusal = "'{$jwt}' not a valid key=value pair (missing equal-sign) in Authorization header: 'Bearer {$jwt}'.";
        $transport = self::answering(403, static fn (): string => $refusal);
        [$error, $printed] = self::thrown(static fn () => self::bearer($transport, static fn (): string => $jwt)->getDraw('d'));
        self::assertInstanceOf(TallyError::class, $error);
        self::assertSame([403, 'gateway_forbidden', true], [$error->status(), $error->code(), $error->fromGateway()]);
        self::assertStringContainsString('not a valid key=value pair', $error->detail());
        self::assertStringNotContainsString($jwt, $printed);
        self::assertSame("Bearer {$jwt}", $transport->sent[0]['authorization']);
    }

    public function testATokenSignatureOrSessionTokenEchoedBackBareIsStillLeftOut(): void
    {
        $jwt = self::JWT;
        $bearer = self::answering(401, static fn (): string => "unknown {$jwt}");
        [, $printed] = self::thrown(static fn () => self::bearer($bearer, static fn (): string => $jwt)->getDraw('d'));
        self::assertStringNotContainsString($jwt, $printed);

        $signature = static fn (array $headers): string => explode('Signature=', $headers['authorization'])[1];
        $signed = self::answering(403, static fn (array $h): string => "got {$signature($h)} and {$h['x-amz-security-token']}");
        $credentials = new Credentials('ASIAFAKE', 'fake-secret', self::SESSION_TOKEN);
        [, $printed] = self::thrown(static fn () => self::signed($signed, $credentials)->getDraw('d'));
        foreach ([$signature($signed->sent[0]), self::SESSION_TOKEN] as $secret) {
            self::assertStringNotContainsString($secret, $printed);
        }
    }

    public function testWhatFollowsANameThatCarriesASecretIsRedactedInAnyAnswer(): void
    {
        $messages = [
            'Authorization=Bearer abc.def.ghi' => 'Authorization=Bearer <redacted>',
            'Credential=ASIAFAKE/20260101/eu-west-1/execute-api/aws4_request, Signature=0a1b2c' => 'Credential=<redacted>, Signature=<redacted>',
            "'abc.def' not a valid key=value pair (missing equal-sign) in Authorization header: 'Bearer abc.def'."
                => "'<redacted>' not a valid key=value pair (missing equal-sign) in Authorization header: <redacted>",
            "Invalid key=value pair in Authorization header (hashed with SHA-256 and encoded with Base64): 'q83v'."
                => 'Invalid key=value pair in Authorization header (hashed with SHA-256 and encoded with Base64): <redacted>',
            "Authorization header requires 'Credential' parameter." => "Authorization header requires 'Credential' parameter.",
        ];
        foreach ($messages as $message => $kept) {
            $error = TallyError::of(new Response(403, [], json_encode(['message' => $message, 'seen' => [$message]])));
            self::assertSame([$kept, ['message' => $kept, 'seen' => [$kept]]], [$error->detail(), $error->problem()]);
        }
    }

    public function testATokenNoHeaderMayCarryIsRefusedBeforeAnythingIsSentWithoutBeingQuoted(): void
    {
        foreach (["first-line\nsecond-line", "first-line\r\nx-injected: yes", "first-line\0second-line"] as $token) {
            $asked = 0;
            $transport = self::answering(200, static fn (): string => '');
            $tally = self::bearer($transport, static function () use ($token, &$asked): string {
                $asked += 1;
                return $token;
            }, 6);
            [$error, $printed] = self::thrown(static fn () => $tally->getDraw('d'));
            self::assertInstanceOf(\UnexpectedValueException::class, $error);
            self::assertDoesNotMatchRegularExpression('/first-line|second-line|x-injected/', $printed);
            self::assertSame([1, []], [$asked, $transport->sent], json_encode($token));
        }
    }

    public function testCredentialsNoHeaderMayCarryAreRefusedBeforeAnythingIsSentWithoutBeingQuoted(): void
    {
        $credentials = [
            new Credentials('ASIAFAKE', 'fake-secret', "first-line\r\nx-injected: yes"),
            new Credentials("ASIAFAKE\r\nx-injected: yes", 'fake-secret'),
        ];
        foreach ($credentials as $each) {
            $transport = self::answering(200, static fn (): string => '');
            [$error, $printed] = self::thrown(static fn () => self::signed($transport, $each)->getDraw('d'));
            self::assertInstanceOf(\UnexpectedValueException::class, $error);
            self::assertDoesNotMatchRegularExpression('/first-line|x-injected/', $printed);
            self::assertSame([], $transport->sent);
        }
    }

    /**
     * With the AWS SDK installed (stand-ins of its signer and of the Guzzle request it
     * builds, which refuses a header value by quoting it), credentials no header may carry
     * are refused before the signer sees them, without being quoted.
     *
     * @runInSeparateProcess
     * @preserveGlobalState disabled
     */
    public function testWithTheSdkInstalledCredentialsNoHeaderMayCarryNeverReachItsSigner(): void
    {
        require __DIR__ . '/stand-ins/aws-sdk-credentials.php';
        require __DIR__ . '/stand-ins/aws-sdk-signer.php';
        $transport = self::answering(200, static fn (): string => '');
        self::signed($transport, new Credentials('ASIAFAKE', 'fake-secret', 'fake-session-token'))->getDraw('d');
        self::assertSame('fake-session-token', $transport->sent[0]['X-Amz-Security-Token']);
        $refused = [
            new Credentials('ASIAFAKE', 'fake-secret', "session-secret\r"),
            new Credentials('ASIAFAKE', 'fake-secret', "session-secret\nx-injected: yes"),
            new Credentials("ASIAFAKE\r\nsession-secret", 'fake-secret'),
        ];
        foreach ($refused as $credentials) {
            [$error, $printed] = self::thrown(static fn () => self::signed($transport, $credentials)->getDraw('d'));
            self::assertInstanceOf(\UnexpectedValueException::class, $error);
            self::assertStringNotContainsString('session-secret', $printed);
        }
        self::assertSame([1, 1], [\Aws\Signature\SignatureV4::$signed, count($transport->sent)]);
    }

    /**
     * A body `json_encode` refuses (invalid UTF-8 in a member) is refused by an exception
     * without a cause: `json_encode`'s own holds the whole body, payment token included,
     * among its trace's arguments.
     */
    public function testABodyThatCannotBeJsonIsRefusedWithoutItsPaymentTokenInTheError(): void
    {
        $transport = self::answering(200, static fn (): string => '');
        $tally = new TallyClient(self::URL, credentials: false, transport: $transport);
        $body = ['payment_id' => 'pi_1', 'payer_id' => "caf\xE9", 'token' => 'tok_json_card'];
        [$error, $printed] = self::thrown(static fn () => $tally->purchase('d', $body));
        self::assertInstanceOf(\InvalidArgumentException::class, $error);
        self::assertStringContainsString('cannot be sent as JSON', $error->getMessage());
        self::assertNull($error->getPrevious());
        self::assertStringNotContainsString('tok_json_card', $printed);
        self::assertSame([], $transport->sent);
    }

    public function testTheWhitespaceAroundATokenSuchAsATokenFilesLastLineBreakIsLeftOut(): void
    {
        $transport = self::answering(200, static fn (): string => '');
        self::bearer($transport, static fn (): string => ' ' . self::JWT . "\r\n")->getDraw('d');
        self::assertSame('Bearer ' . self::JWT, $transport->sent[0]['authorization']);
    }
}
