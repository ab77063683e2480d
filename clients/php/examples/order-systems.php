<?php

declare(strict_types=1);

/*
 * The order-numbering seed flow, migrated: instead of `MAX(number) + 1`, several order
 * systems (OS processes) number their orders in one gapless series at once, in batches
 * and one by one, and post some of them again as retries do. Then an independent check
 * reads the period back and compares it with what each system was told.
 *
 *   php examples/order-systems.php [SYSTEMS] [ORDERS_PER_SYSTEM]
 *
 * TALLY_URL, AWS_REGION and AWS credentials as for any client.
 */

require dirname(__DIR__) . '/autoload.php';
require __DIR__ . '/processes.php';

use Tally\Client\TallyClient;

const BATCH = 25;

$tally = new TallyClient(getenv('TALLY_URL') ?: 'http://127.0.0.1:3000');

/** One order system: its orders in batches, every fifth batch posted twice, then one by one. */
function orderSystem(TallyClient $tally, string $seriesId, string $source, int $orders): void
{
    $told = [];
    $refs = array_map(static fn (int $i): string => "{$source}-order-{$i}", range(0, $orders - 1));
    $batched = array_slice($refs, 0, intdiv($orders * 3, 4));
    foreach (array_chunk($batched, BATCH) as $n => $chunk) {
        $items = array_map(static fn (string $ref): array => ['external_ref' => $ref], $chunk);
        foreach (range(1, $n % 5 === 0 ? 2 : 1) as $_) {
            foreach ($tally->createSeriesBatch($seriesId, ['source' => $source, 'orders' => $items])['results'] as $result) {
                if ($result['status'] === 'rejected') {
                    throw new RuntimeException("{$result['external_ref']}: {$result['code']}");
                }
                $told[] = [$result['external_ref'], $result['order_number']];
            }
        }
    }
    foreach (array_slice($refs, count($batched)) as $ref) {
        $told[] = [$ref, $tally->createSeriesOrder($seriesId, ['source' => $source, 'external_ref' => $ref])['order_number']];
    }
    echo json_encode($told);
}

/** Every order once with its own number, counters 1..n without a gap, the chain intact. */
function check(TallyClient $tally, string $seriesId, int $expected, array $told): void
{
    $byNumber = [];
    $counters = [];
    foreach ($tally->listOrders($seriesId, limit: 1000) as $page) {
        foreach ($page['orders'] as $order) {
            if (isset($byNumber[$order['order_number']])) {
                throw new RuntimeException("{$order['order_number']} is given twice");
            }
            $byNumber[$order['order_number']] = "{$order['source']}/{$order['external_ref']}";
            $counters[] = $order['counter'];
        }
    }
    sort($counters);
    if ($counters !== range(1, $expected)) {
        throw new RuntimeException(count($counters) . " orders of {$expected}, counters not 1..{$expected} without a gap");
    }
    $refs = [];
    foreach ($told as [$ref, $number]) {
        $source = substr($ref, 0, strpos($ref, '-order-'));
        if (($byNumber[$number] ?? null) !== "{$source}/{$ref}" || ($refs[$ref] ?? $number) !== $number) {
            throw new RuntimeException("{$ref} was told {$number}, which the series does not give it");
        }
        $refs[$ref] = $number;
    }
    if (count($refs) !== $expected) {
        throw new RuntimeException(count($refs) . " references were told a number, {$expected} were posted");
    }
    foreach ($tally->audit($seriesId) as $part) {
        if ($part['complete'] && ($part['gaps'] !== [] || !$part['chain']['intact'])) {
            throw new RuntimeException('the audit finds gaps or a broken chain');
        }
    }
}

if (($argv[1] ?? '') === 'system') {
    orderSystem($tally, $argv[2], $argv[3], (int) $argv[4]);
    exit(0);
}
$systems = (int) ($argv[1] ?? 3);
$orders = (int) ($argv[2] ?? 200);
$seriesId = 'PHPEX' . strtoupper(bin2hex(random_bytes(4)));
$tally->defineSeries($seriesId, ['format' => "{$seriesId}-{yy}-{seq:6}", 'reset' => 'yearly', 'gapless' => true]);
$told = [];
$runs = array_map(
    static fn (int $i): array => [__FILE__, 'system', $seriesId, "{$seriesId}-system{$i}", (string) $orders],
    range(0, $systems - 1),
);
foreach (run_processes($runs) as $out) {
    $told = array_merge($told, json_decode($out, true, 512, JSON_THROW_ON_ERROR));
}
check($tally, $seriesId, $systems * $orders, $told);
echo "{$seriesId}: {$systems} systems numbered " . ($systems * $orders) . " orders without a gap; check passed\n";
