<?php

declare(strict_types=1);

namespace Tally\Client;

/**
 * What an error may not show. Errors end up in logs and alerts, and API Gateway quotes
 * back what a request carried: a refusal of a signature quotes the request it expected,
 * its `x-amz-security-token` header included; an Authorization header it cannot read
 * (a bearer token sent to an IAM-authorised API) is quoted whole, and its parts that are
 * not `key=value` pairs one by one. So every string of an error is cleaned twice:
 *
 * - each secret the request carried (`sentSecrets`: the bearer token, the session token,
 *   the signature, the whole Authorization header) is replaced wherever it appears;
 * - what follows the names that carry secrets (`SECRET_AFTER`) is replaced, for a secret
 *   of another request or one API Gateway quotes cut or changed.
 *
 * @internal
 */
final class Redaction
{
    /** What stands in for a secret. */
    public const REDACTED = '<redacted>';

    /** The names after which a secret follows: each secret's pattern, and what replaces it. */
    private const SECRET_AFTER = [
        // A session token, as a signature refusal's quote of the request carries it.
        '/(x-amz-security-token\s*:\s*)[^\s\'"\\\\]+/i' => '$1' . self::REDACTED,
        // A bearer token, as in `Authorization=Bearer ...` or a quote of the header.
        '/(\bBearer\s+)[^\s\'"\\\\]+/i' => '$1' . self::REDACTED,
        // A SigV4 signature and its credential scope.
        '/(\b(?:Signature|Credential)=)[^\s\'",\\\\]+/i' => '$1' . self::REDACTED,
        // API Gateway's quote of an Authorization header it cannot read, to the end.
        '/(\bAuthorization header\b[^:\'"\n]*:).*/is' => '$1 ' . self::REDACTED,
        // A part of that header it quotes as not a `key=value` pair.
        '/\'[^\']*\'(?=\s*not a valid key=value pair)/i' => "'" . self::REDACTED . "'",
    ];

    /** The headers whose values are secrets. */
    private const SECRET_HEADERS = ['authorization', 'x-amz-security-token'];
    /** The secrets inside an Authorization header's value. */
    private const AUTHORIZATION_PARTS = '/(?:\bBearer\s+|\bSignature=|\bCredential=)([^\s,]+)/i';

    /**
     * The secrets a request carried in `$headers`, longest first (a secret may hold another).
     *
     * @param array<string, string> $headers
     * @return list<string>
     */
    public static function sentSecrets(#[\SensitiveParameter] array $headers): array
    {
        $secrets = [];
        foreach ($headers as $name => $value) {
            if (in_array(strtolower($name), self::SECRET_HEADERS, true)) {
                preg_match_all(self::AUTHORIZATION_PARTS, $value, $parts);
                array_push($secrets, $value, ...$parts[1]);
            }
        }
        $secrets = array_values(array_filter($secrets, static fn (string $secret): bool => $secret !== ''));
        usort($secrets, static fn (string $a, string $b): int => strlen($b) <=> strlen($a));
        return $secrets;
    }

    /**
     * Strings, and those of arrays at any depth (keys included), without any of
     * `$secrets` nor any secret after a name that carries one.
     *
     * @param list<string> $secrets
     */
    public static function redacted(mixed $value, #[\SensitiveParameter] array $secrets = []): mixed
    {
        if (is_string($value)) {
            $withoutSent = str_replace($secrets, self::REDACTED, $value);
            return preg_replace(array_keys(self::SECRET_AFTER), array_values(self::SECRET_AFTER), $withoutSent);
        }
        if (!is_array($value)) {
            return $value;
        }
        $cleaned = [];
        foreach ($value as $name => $member) {
            $cleaned[is_string($name) ? self::redacted($name, $secrets) : $name] = self::redacted($member, $secrets);
        }
        return $cleaned;
    }
}
