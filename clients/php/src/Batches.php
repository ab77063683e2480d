<?php

declare(strict_types=1);

namespace Tally\Client;

/**
 * A batch's items that lost a race (`rejected` with `contention`) may pass when posted
 * again: they are posted again alone, after their `retry_after`, until none is left or
 * the retry policy's attempts are spent. Their (`source`, `external_ref`) keys make the
 * repeat safe; the results keep the indexes of the request as first posted.
 */
final class Batches
{
    /**
     * @param list<array<string, mixed>> $orders
     * @param callable(list<array<string, mixed>>): array $post (a closure holding the request's body)
     * @return array{results: list<array<string, mixed>>}
     */
    public static function settle(
        #[\SensitiveParameter] array $orders,
        #[\SensitiveParameter] callable $post,
        RetryPolicy $retry,
    ): array {
        $results = [];
        $pending = array_keys($orders);
        for ($attempt = 1; ; $attempt++) {
            $answer = $post(array_map(static fn (int $i): array => $orders[$i], $pending));
            $again = [];
            $retryAfter = 0;
            foreach ($answer['results'] as $result) {
                $first = $pending[$result['index']];
                $results[$first] = ['index' => $first] + $result;
                if ($result['status'] === 'rejected' && ($result['code'] ?? null) === 'contention') {
                    $again[] = $first;
                    $retryAfter = max($retryAfter, $result['retry_after'] ?? 0);
                }
            }
            if ($again === [] || $attempt >= $retry->maxAttempts) {
                ksort($results);
                return ['results' => array_values($results)];
            }
            $retry->sleep($retry->waitBefore($attempt, $retryAfter));
            $pending = $again;
        }
    }
}
