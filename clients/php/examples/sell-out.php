<?php

declare(strict_types=1);

/*
 * The raffle seed flow, migrated: several OS processes sell a draw out at once. Each
 * checkout holds numbers (`hold_id`: the basket), and the payment webhook pays the hold
 * (`payment_id`: the provider's payment), delivered twice as providers do; some baskets
 * are abandoned and released. Then an independent check reads the whole draw back and
 * compares it with what each process was told.
 *
 *   php examples/sell-out.php [PROCESSES] [TICKETS]
 *
 * TALLY_URL, AWS_REGION and AWS credentials as for any client.
 */

require dirname(__DIR__) . '/autoload.php';
require __DIR__ . '/processes.php';

use Tally\Client\TallyClient;
use Tally\Client\TallyError;

$tally = new TallyClient(getenv('TALLY_URL') ?: 'http://127.0.0.1:3000');

/** One process of the shop: checkouts until the draw is sold out; prints its sales as JSON. */
function shop(TallyClient $tally, string $drawId, string $name): void
{
    $sales = [];
    for ($basket = 0; ; $basket++) {
        $holdId = "{$name}-basket-{$basket}";
        try {
            $hold = $tally->createHold($drawId, [
                'hold_id' => $holdId,
                'quantity' => random_int(1, 5),
                'payer_id' => "{$name}-customer-" . ($basket % 7),
            ]);
        } catch (TallyError $error) {
            if ($error->code() === 'sold_out') {
                if ($error->problem()['remaining'] === 0) {
                    break;
                }
                continue;
            }
            // The numbers left are held by other checkouts, or the draw's share for holds
            // is taken: they come back when those holds end, so the shop tries again.
            if (in_array($error->code(), ['tickets_held', 'holds_full'], true)) {
                usleep(100_000);
                continue;
            }
            throw $error;
        }
        if ($basket % 5 === 4) {
            $tally->releaseHold($drawId, $holdId);
            continue;
        }
        // The payment provider delivers its webhook, then delivers it again.
        $payment = ['payment_id' => "{$name}-pay-{$basket}", 'hold_id' => $holdId];
        $paid = $tally->purchase($drawId, $payment);
        $again = $tally->purchase($drawId, $payment);
        if ($again['tickets'] !== $paid['tickets'] || count($paid['tickets']) !== count($hold['tickets'])) {
            throw new RuntimeException("{$payment['payment_id']}: the repeated webhook got other tickets");
        }
        $sales[$payment['payment_id']] = $paid['tickets'];
    }
    echo json_encode($sales, JSON_FORCE_OBJECT);
}

/**
 * Every purchase of the draw: the listing, and each sale it does not show read on its own.
 * The listing comes from an index moments behind, so a purchase made just before may be
 * missing from it; a read by payment id is strongly consistent.
 *
 * @param array<string, list<int>> $told
 * @return list<array<string, mixed>>
 */
function stored_purchases(TallyClient $tally, string $drawId, array $told): array
{
    $purchases = iterator_to_array($tally->drawPurchases($drawId, limit: 100), false);
    $listed = array_column($purchases, 'payment_id', 'payment_id');
    foreach (array_diff_key($told, $listed) as $paymentId => $_) {
        $purchases[] = $tally->getPurchase($drawId, (string) $paymentId);
    }
    return $purchases;
}

/** No number twice, every number in range, the draw sold out, each sale as it was told. */
function check(TallyClient $tally, string $drawId, int $total, array $told): void
{
    $owner = [];
    $stored = [];
    foreach (stored_purchases($tally, $drawId, $told) as $purchase) {
        if (count($purchase['tickets']) !== $purchase['quantity']) {
            throw new RuntimeException("{$purchase['payment_id']}: tickets and quantity differ");
        }
        foreach ($purchase['tickets'] as $ticket) {
            if ($ticket < 1 || $ticket > $total || isset($owner[$ticket])) {
                throw new RuntimeException("ticket {$ticket} is out of range or sold twice");
            }
            $owner[$ticket] = $purchase['payment_id'];
        }
        $stored[$purchase['payment_id']] = $purchase['tickets'];
    }
    $draw = $tally->getDraw($drawId);
    if (count($owner) !== $total || $draw['sold'] !== $total || $draw['remaining'] !== 0) {
        throw new RuntimeException(count($owner) . " tickets stored, {$draw['sold']} sold of {$total}");
    }
    ksort($stored);
    ksort($told);
    if ($stored !== $told) {
        throw new RuntimeException('the purchases stored are not those the processes were told');
    }
}

if (($argv[1] ?? '') === 'shop') {
    shop($tally, $argv[2], $argv[3]);
    exit(0);
}
$processes = (int) ($argv[1] ?? 4);
$total = (int) ($argv[2] ?? 300);
$drawId = 'php-sell-out-' . bin2hex(random_bytes(4));
$tally->createDraw(['draw_id' => $drawId, 'total_tickets' => $total, 'max_per_purchase' => 5, 'stripes' => 8]);
$told = [];
$shops = array_map(static fn (int $i): array => [__FILE__, 'shop', $drawId, "shop{$i}"], range(0, $processes - 1));
foreach (run_processes($shops) as $out) {
    $told += json_decode($out, true, 512, JSON_THROW_ON_ERROR);
}
check($tally, $drawId, $total, $told);
echo "{$drawId}: {$processes} processes sold {$total} tickets in " . count($told) . " purchases; check passed\n";
