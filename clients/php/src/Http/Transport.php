<?php

declare(strict_types=1);

namespace Tally\Client\Http;

/**
 * Sends one request with curl. A failed connection is a `TransportError`. Not final: a
 * subclass may send otherwise (the unit tests record requests so).
 */
class Transport
{
    public function __construct(private readonly int $timeoutSeconds = 30)
    {
    }

    /**
     * The headers (a signature, a session token, a bearer token) and the body (a payment
     * token) are left out of exception traces' arguments.
     *
     * @param array<string, string> $headers
     */
    public function send(
        string $method,
        string $url,
        #[\SensitiveParameter] array $headers,
        #[\SensitiveParameter] string $body,
    ): Response {
        $handle = curl_init($url);
        $received = [];
        $lines = [];
        foreach ($headers as $name => $value) {
            $lines[] = "{$name}: {$value}";
        }
        curl_setopt_array($handle, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $lines,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => $this->timeoutSeconds,
            CURLOPT_HEADERFUNCTION => static function ($curl, string $line) use (&$received): int {
                $parts = explode(':', $line, 2);
                if (count($parts) === 2) {
                    $received[strtolower(trim($parts[0]))] = trim($parts[1]);
                }
                return strlen($line);
            },
        ]);
        if ($body !== '') {
            curl_setopt($handle, CURLOPT_POSTFIELDS, $body);
        }
        $answer = curl_exec($handle);
        if ($answer === false) {
            $error = curl_error($handle);
            curl_close($handle);
            throw new TransportError("{$method} {$url}: {$error}");
        }
        $status = (int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE);
        curl_close($handle);
        return new Response($status, $received, (string) $answer);
    }
}
