<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;

/**
 * The seed flows' examples against a running Tally, where it matters that they run as
 * written: the sell-out's check with a listing moments behind.
 */
final class ExamplesTest extends TestCase
{
    public function testTheSellOutsCheckReadsOnTheirOwnTheSalesAListingMomentsBehindLeavesOut(): void
    {
        // Every index page of the listing (one a stripe at least: the example's draw has 8) lacks its newest purchase.
        World::dynamodbFault(['operation' => 'Query', 'kind' => 'hide_last', 'count' => 8, 'holding' => '#PURCHASES#']);
        $before = World::counts();
        $example = escapeshellarg(__DIR__ . '/../examples/sell-out.php');
        exec(escapeshellarg(PHP_BINARY) . " {$example} 2 40 2>&1", $output, $status);
        self::assertSame(0, $status, implode("\n", $output));
        self::assertMatchesRegularExpression('/2 processes sold 40 tickets in \d+ purchases; check passed/', implode("\n", $output));
        self::assertGreaterThanOrEqual(1, World::grown($before)['dynamodb.hidden.Query'] ?? 0, 'the listing left nothing out');
    }
}
