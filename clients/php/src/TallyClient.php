<?php

declare(strict_types=1);

namespace Tally\Client;

use Tally\Client\Http\Response;
use Tally\Client\Http\Transport;
use Tally\Client\Http\TransportError;
use Tally\Client\Signing\AwsSdkCredentials;
use Tally\Client\Signing\AwsSdkSigner;
use Tally\Client\Signing\CredentialChain;
use Tally\Client\Signing\Credentials;
use Tally\Client\Signing\SignatureV4;
use Tally\Client\Signing\Signer;

/**
 * Tally's API, one method per route (`Routes::ROUTES`): raffles in `RaffleRoutes`, series
 * and orders in `OrderRoutes`. Requests are signed (SigV4, service `execute-api`), or
 * carry a bearer token where the stack takes an OpenID Connect issuer's tokens, and are
 * repeated after `503`s and `429`s; answers are arrays as the API sends them (see
 * openapi.json), errors `TallyError`s; lists are generators.
 */
final class TallyClient
{
    use RaffleRoutes;
    use OrderRoutes;

    /** API Gateway's signing name. */
    public const SERVICE = 'execute-api';

    /**
     * What a header value may hold: tabs, visible ASCII and the bytes past it. curl sends
     * a value as it is given, so a CR or LF in a token would end its header and start
     * another.
     */
    private const HEADER_VALUE = '/^[\t\x20-\x7E\x80-\xFF]*+\z/';
    /** The whitespace left out around a token, such as a token file's last line break. */
    private const SURROUNDING_WHITESPACE = " \t\r\n";

    /** @var (\Closure(): Credentials)|null */
    private readonly ?\Closure $credentials;
    private readonly ?Signer $signer;
    /** @var (\Closure(): string)|null */
    private readonly ?\Closure $token;

    /**
     * @param string $baseUrl `https://API_ID.execute-api.REGION.amazonaws.com`, or `tally serve`'s
     * @param string|null $region the deployment's; by default `AWS_REGION`, else `AWS_DEFAULT_REGION`
     * @param Credentials|callable|false|null $credentials credentials or a callable giving them;
     *        null for the AWS SDK's default provider chain when the SDK is installed, else
     *        the built-in `CredentialChain`; false sends requests unsigned (`tally serve`)
     * @param (callable(): string)|null $token for a stack that takes an OpenID Connect
     *        issuer's tokens instead of SigV4 (`OidcIssuer`): gives the token each request
     *        carries (`Authorization: Bearer`), asked again before every attempt; requests
     *        are then not signed, and `$credentials` stays null
     */
    public function __construct(
        private readonly string $baseUrl,
        ?string $region = null,
        Credentials|callable|false|null $credentials = null,
        public readonly RetryPolicy $retry = new RetryPolicy(),
        ?Signer $signer = null,
        private readonly Transport $transport = new Transport(),
        ?callable $token = null,
    ) {
        $this->token = $token === null ? null : \Closure::fromCallable($token);
        if ($token !== null && $credentials !== null) {
            throw new \InvalidArgumentException('TallyClient takes credentials or a token, not both');
        }
        if ($credentials === false || $token !== null) {
            $this->credentials = null;
            $this->signer = null;
            return;
        }
        $this->credentials = match (true) {
            $credentials instanceof Credentials => static fn (): Credentials => $credentials,
            $credentials === null && AwsSdkCredentials::available() => (new AwsSdkCredentials())(...),
            $credentials === null => (new CredentialChain())(...),
            default => \Closure::fromCallable($credentials),
        };
        $region ??= (getenv('AWS_REGION') ?: null) ?? (getenv('AWS_DEFAULT_REGION') ?: null)
            ?? throw new \InvalidArgumentException('TallyClient needs a region: pass one or set AWS_REGION');
        $this->signer = $signer ?? (AwsSdkSigner::available()
            ? new AwsSdkSigner(self::SERVICE, $region)
            : new SignatureV4(self::SERVICE, $region));
    }

    /**
     * Calls a route of the table: its answer as JSON, or a `TallyError`.
     *
     * @param array<string, string|int> $path
     * @param array<string, string|int|null> $query
     * @param array<string, mixed>|null $body
     */
    private function call(
        string $route,
        array $path = [],
        array $query = [],
        #[\SensitiveParameter] ?array $body = null,
    ): mixed {
        [$method, $template] = Routes::ROUTES[$route];
        $url = rtrim($this->baseUrl, '/') . preg_replace_callback(
            '/\{(\w+)\}/',
            static fn (array $m): string => self::segment($m[1], (string) $path[$m[1]]),
            $template,
        );
        $query = array_filter($query, static fn ($v): bool => $v !== null);
        if ($query !== []) {
            $url .= '?' . http_build_query($query, '', '&', PHP_QUERY_RFC3986);
        }
        // Every body is a JSON object, so an empty array is `{}`, never `[]`.
        $payload = match ($body) {
            null => '',
            [] => '{}',
            default => self::encoded($body),
        };
        $headers = $body === null ? [] : ['content-type' => 'application/json'];
        [$response, $sent] = $this->send($method, $url, $headers, $payload);
        if (!$response->ok()) {
            throw TallyError::of($response, $sent);
        }
        return $response->json();
    }

    /**
     * The body as JSON, or an `InvalidArgumentException` that holds nothing of it (invalid
     * UTF-8 in a member, say): `json_encode`'s own `JsonException` is not let through, as
     * the trace of it holds the whole body, a payment token included, as `json_encode`'s
     * argument where `zend.exception_ignore_args` is Off.
     *
     * @param array<string, mixed> $body
     */
    private static function encoded(#[\SensitiveParameter] array $body): string
    {
        try {
            return json_encode($body, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
        } catch (\JsonException $refusal) {
            throw new \InvalidArgumentException("the request body cannot be sent as JSON: {$refusal->getMessage()}");
        }
    }

    /**
     * `{}` for an empty array where the API takes a JSON object (a map such as a payer's
     * limits, an order's `data`): `json_encode` would send `[]`, which the API refuses.
     *
     * @param array<string, mixed> $map
     * @return array<string, mixed>|\stdClass
     */
    private static function object(array $map): array|\stdClass
    {
        return $map === [] ? new \stdClass() : $map;
    }

    /**
     * A path parameter, percent-encoded; an empty one is refused, since it leaves an empty
     * segment (`/payers//purchases`), and so are `.` and `..`, since a URL drops such a
     * segment (`/payers/../purchases` is sent as `/purchases`, another route).
     */
    private static function segment(string $name, string $value): string
    {
        if ($value === '') {
            throw new \InvalidArgumentException("{$name} cannot be empty: the path would have an empty segment");
        }
        if ($value === '.' || $value === '..') {
            throw new \InvalidArgumentException("{$name} cannot be \"{$value}\": a URL drops it from the path");
        }
        return rawurlencode($value);
    }

    /**
     * One request, signed anew for each attempt, repeated as the retry policy says: the
     * last answer, and the headers its request carried.
     *
     * @param array<string, string> $headers
     * @return array{Response, array<string, string>}
     */
    private function send(
        string $method,
        string $url,
        #[\SensitiveParameter] array $headers,
        #[\SensitiveParameter] string $body,
    ): array {
        for ($attempt = 1; ; $attempt++) {
            $signed = $this->authorized($method, $url, $headers, $body);
            try {
                $response = $this->transport->send($method, $url, $signed, $body);
            } catch (TransportError $failure) {
                if ($attempt >= $this->retry->maxAttempts) {
                    throw $failure;
                }
                $this->retry->sleep($this->retry->waitBefore($attempt, null));
                continue;
            }
            if (!in_array($response->status, RetryPolicy::REPEATED, true) || $attempt >= $this->retry->maxAttempts) {
                return [$response, $signed];
            }
            $this->retry->sleep($this->retry->waitBefore($attempt, $response->retryAfter()));
        }
    }

    /**
     * The headers with the bearer token or the signature. A token or credentials that no
     * header may carry (a CR, LF or NUL inside) are refused before any signer sees them,
     * and never repeated, by an `UnexpectedValueException` that does not quote them: the
     * AWS SDK's signer puts the session token in a Guzzle request, whose refusal of a value
     * quotes it.
     *
     * @param array<string, string> $headers
     * @return array<string, string>
     */
    private function authorized(
        string $method,
        string $url,
        #[\SensitiveParameter] array $headers,
        #[\SensitiveParameter] string $body,
    ): array {
        if ($this->token !== null) {
            $token = trim((string) ($this->token)(), self::SURROUNDING_WHITESPACE);
            return $headers + ['authorization' => 'Bearer ' . self::sendable($token, 'the token')];
        }
        if ($this->signer === null || $this->credentials === null) {
            return $headers;
        }
        return $this->signer->sign($method, $url, $headers, $body, self::signable(($this->credentials)()));
    }

    /** `$credentials`, once each of their values is one a header may carry (`sendable`). */
    private static function signable(#[\SensitiveParameter] Credentials $credentials): Credentials
    {
        self::sendable($credentials->accessKeyId, 'the access key id');
        self::sendable($credentials->secretAccessKey(), 'the secret access key');
        self::sendable($credentials->sessionToken() ?? '', 'the session token');
        return $credentials;
    }

    /** `$value`, or an `UnexpectedValueException` that does not quote it when no header may carry it. */
    private static function sendable(#[\SensitiveParameter] string $value, string $what): string
    {
        if (preg_match(self::HEADER_VALUE, $value) !== 1) {
            throw new \UnexpectedValueException(
                "{$what} holds a character no header may carry (a control character such as NUL, CR or LF): "
                . 'the token or credentials cannot be sent',
            );
        }
        return $value;
    }

    /**
     * Every page of a list, following its cursor (`$cursorMember`) until it is null. The
     * members named in `$kept` that the query leaves out are taken from the first page and
     * sent with every later one: a period's listing asks each page after the first for the
     * period the first answered, since a cursor goes on only in its period and the current
     * one may end between two pages (`400 invalid_cursor`).
     *
     * @param array<string, string|int> $path
     * @param array<string, string|int|null> $query
     * @param list<string> $kept
     * @return \Generator<int, array<string, mixed>>
     */
    private function pages(string $route, array $path, array $query, string $cursorMember, array $kept = []): \Generator
    {
        $cursor = null;
        do {
            $page = $this->call($route, $path, array_merge($query, ['cursor' => $cursor]));
            yield $page;
            foreach ($kept as $member) {
                $query[$member] ??= $page[$member];
            }
            $cursor = $page[$cursorMember] ?? null;
        } while ($cursor !== null);
    }

    /**
     * Every entry of `$member` in every page of a list.
     *
     * @param array<string, string|int> $path
     * @param array<string, string|int|null> $query
     * @return \Generator<int, array<string, mixed>>
     */
    private function items(string $route, array $path, array $query, string $member): \Generator
    {
        foreach ($this->pages($route, $path, $query, 'cursor') as $page) {
            foreach ($page[$member] as $item) {
                yield $item;
            }
        }
    }
}
