<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\Routes;
use Tally\Client\TallyClient;
use Tally\Client\TallyError;

/**
 * Every method once against `tally serve` on DynamoDB Local, behind the stand-in for API
 * Gateway that checks each signature with botocore: a raffle from its creation to a
 * redraw, and a series from its definition to its audit. The last test checks that the
 * others called every method of the route table.
 */
final class ApiTest extends TestCase
{
    /** @var array<string, true> */
    private static array $called = [];

    /** The client, recording each method called. */
    private static function tally(): object
    {
        return new class (World::client()) {
            public function __construct(private readonly TallyClient $client)
            {
            }

            public function __call(string $name, array $arguments): mixed
            {
                ApiTest::record($name);
                return $this->client->{$name}(...$arguments);
            }
        };
    }

    public static function record(string $name): void
    {
        self::$called[$name] = true;
    }

    public function testARaffleFromItsCreationToARedraw(): void
    {
        $tally = self::tally();
        $drawId = World::unique('php-raffle');
        $config = ['draw_id' => $drawId, 'total_tickets' => 60, 'max_per_purchase' => 10, 'stripes' => 4];
        self::assertSame($drawId, $tally->createDraw($config)['draw_id']);
        self::assertSame($drawId, $tally->createDraw($config)['draw_id']);
        self::assertMatchesRegularExpression('/^d-[0-9a-f]{16}$/', $tally->createDraw(['total_tickets' => 5])['draw_id']);
        self::assertSame(60, $tally->getDraw($drawId)['remaining']);
        self::assertNull($tally->updateDraw($drawId, ['beacon' => null])['beacon']);
        $open = array_column(iterator_to_array($tally->listDraws('open', 1), false), 'draw_id');
        self::assertContains($drawId, $open);

        $hold = $tally->createHold($drawId, ['hold_id' => 'basket-1', 'numbers' => [7, 8], 'payer_id' => 'ann@example.com']);
        self::assertSame([7, 8], $hold['tickets']);
        self::assertSame('held', $tally->getHold($drawId, 'basket-1')['status']);
        self::assertSame([7, 8], $tally->purchase($drawId, ['payment_id' => 'pay-hold', 'hold_id' => 'basket-1'])['tickets']);
        $tally->createHold($drawId, ['hold_id' => 'basket-2', 'quantity' => 2, 'payer_id' => 'bob@example.com']);
        self::assertSame('released', $tally->releaseHold($drawId, 'basket-2')['status']);

        $buy = ['payment_id' => 'pay-1', 'quantity' => 3, 'payer_id' => 'ann@example.com'];
        $bought = $tally->purchase($drawId, $buy);
        self::assertSame($bought['tickets'], $tally->purchase($drawId, $buy)['tickets']);
        $tally->purchase($drawId, ['payment_id' => 'pay-2', 'quantity' => 1, 'channel' => 'postal']);
        self::assertSame('active', $tally->getPurchase($drawId, 'pay-1')['status']);
        self::assertSame('pay-1', $tally->getTicket($drawId, $bought['tickets'][0])['payment_id']);
        // `@` travels escaped in the path, and is signed escaped once more, as API Gateway checks.
        $anns = array_column(iterator_to_array($tally->payerPurchases($drawId, 'ann@example.com', 1), false), 'payment_id');
        sort($anns);
        self::assertSame(['pay-1', 'pay-hold'], $anns);
        self::assertSame('void', $tally->voidPurchase($drawId, 'pay-2', 'refunded')['status']);
        $all = array_column(iterator_to_array($tally->drawPurchases($drawId, limit: 2), false), 'payment_id');
        sort($all);
        self::assertSame(['pay-1', 'pay-2', 'pay-hold'], $all);
        $voided = array_column(iterator_to_array($tally->drawPurchases($drawId, 'void'), false), 'payment_id');
        self::assertSame(['pay-2'], $voided);
        self::assertSame(6, $tally->availability($drawId)['sold']);
        $facts = $tally->facts($drawId);
        self::assertSame([6, 5], [$facts['sold'], $facts['entries']['online'] + $facts['entries']['postal']]);
        $payer = "cy-$drawId";
        self::assertArrayHasKey('GBP', $tally->setLimits($payer, ['GBP' => ['day' => 0]])['limits']);
        self::assertFalse($tally->getLimits($payer)['excluded']);
        self::assertTrue($tally->setExclusion($payer)['excluded']);

        $closed = $tally->closeDraw($drawId, ['prizes' => 2]);
        self::assertSame(['closed', 2], [$closed['status'], $closed['prizes']]);
        self::assertSame(5, $tally->eligible($drawId)['eligible_count']);
        self::assertCount(2, $tally->drawWinners($drawId, [])['prizes']);
        self::assertCount(2, $tally->getWinners($drawId)['prizes']);
        self::assertCount(1, $tally->redraw($drawId, 1, ['reason' => 'not claimed within 14 days'])['history']);
        // The void, the close, the winners and the redraw are operators' actions: journalled.
        $actions = array_column($tally->journal(limit: 1000)['entries'], 'action');
        foreach (['purchase_voided', 'draw_closed', 'winners_drawn', 'redraw'] as $action) {
            self::assertContains($action, $actions);
        }
    }

    public function testInstantWins(): void
    {
        $tally = self::tally();
        $drawId = World::unique('php-instant');
        $tally->createDraw(['draw_id' => $drawId, 'total_tickets' => 10, 'instant_wins' => [['prize' => 'voucher', 'count' => 2]]]);
        self::assertCount(2, $tally->purchase($drawId, ['payment_id' => 'all', 'quantity' => 10])['instant_wins']);
        self::assertSame($drawId, $tally->instantWins($drawId)['draw_id']);
    }

    public function testASeriesFromItsDefinitionToItsAudit(): void
    {
        $tally = self::tally();
        $seriesId = 'PHP' . strtoupper(bin2hex(random_bytes(5)));
        // (`source`, `external_ref`) is unique across series: sources of this run alone.
        [$erp, $shop] = [World::unique('erp'), World::unique('shop')];
        $series = $tally->defineSeries($seriesId, ['format' => "{$seriesId}-{seq:4}", 'reset' => 'never']);
        self::assertSame([$seriesId, 'default'], [$series['series_id'], $series['issuer']]);
        self::assertSame($seriesId, $tally->getSeries($seriesId)['series_id']);
        // No two series of one issuer render the same text.
        try {
            $tally->defineSeries("{$seriesId}Z", ['format' => "{$seriesId}-{seq:4}", 'reset' => 'never']);
            self::fail('a second series rendering the same texts was defined');
        } catch (TallyError $error) {
            self::assertSame([409, 'format_overlaps', $seriesId], [$error->status(), $error->code(), $error->problem()['series']]);
            self::assertSame("{$seriesId}-0001", $error->problem()['example']);
        }
        $first = $tally->createOrder(['series' => $seriesId, 'source' => $erp, 'external_ref' => 'PO-1']);
        self::assertSame("{$seriesId}-0001", $first['order_number']);
        $again = $tally->createOrder(['series' => $seriesId, 'source' => $erp, 'external_ref' => 'PO-1']);
        self::assertSame($first['order_number'], $again['order_number']);
        $second = $tally->createSeriesOrder($seriesId, ['source' => $erp, 'external_ref' => 'PO-2']);
        $batch = $tally->createBatch(['series' => $seriesId, 'source' => $shop, 'orders' => [
            ['external_ref' => 'w-1'],
            ['external_ref' => 'w-2', 'data' => ['total' => '19.99']],
        ]]);
        self::assertSame(['created', 'created'], array_column($batch['results'], 'status'));
        $own = $tally->createSeriesBatch($seriesId, ['source' => $shop, 'orders' => [['external_ref' => 'w-1'], ['external_ref' => 'w-3']]]);
        self::assertSame(['existing', 'created'], array_column($own['results'], 'status'));
        self::assertSame('PO-1', $tally->findOrder($first['order_number'])['external_ref']);
        self::assertSame('PO-2', $tally->getSeriesOrder($seriesId, $second['order_number'])['external_ref']);
        self::assertSame("{$seriesId}-0005", $tally->orderByRef($shop, 'w-3')['order_number']);
        self::assertSame('void', $tally->voidOrder($seriesId, $second['order_number'], 'cancelled')['status']);
        $tally->updateSeries($seriesId, ['next' => 100, 'reason' => 'continue the paper invoices']);
        $pages = iterator_to_array($tally->listOrders($seriesId, limit: 2), false);
        self::assertCount(5, array_merge(...array_column($pages, 'orders')));
        $parts = iterator_to_array($tally->audit($seriesId), false);
        self::assertTrue(end($parts)['complete']);
        self::assertTrue(end($parts)['chain']['intact']);
        // A reference with `/` travels as %2F in the path.
        $odoo = $tally->createSeriesOrder($seriesId, ['source' => $erp, 'external_ref' => 'SO/2026/0001']);
        self::assertSame($odoo['order_number'], $tally->orderByRef($erp, 'SO/2026/0001')['order_number']);
    }

    public function testAProblemIsATallyErrorWithItsCodeAndMembers(): void
    {
        $tally = self::tally();
        $drawId = World::unique('php-sold');
        $tally->createDraw(['draw_id' => $drawId, 'total_tickets' => 2]);
        try {
            $tally->purchase($drawId, ['payment_id' => 'big', 'quantity' => 3]);
            self::fail('sold beyond the draw');
        } catch (TallyError $error) {
            self::assertSame([409, 'sold_out', 2, false], [$error->status(), $error->code(), $error->problem()['remaining'], $error->fromGateway()]);
        }
        // A payment id as providers write it; the last tickets make the draw read sold_out.
        self::assertCount(2, $tally->purchase($drawId, ['payment_id' => 'ch_1.2:3', 'quantity' => 2])['tickets']);
        self::assertSame('ch_1.2:3', $tally->getPurchase($drawId, 'ch_1.2:3')['payment_id']);
        self::assertSame('sold_out', $tally->getDraw($drawId)['status']);
    }

    /** Declared last: PHPUnit runs a class's tests in order. */
    public function testTheTestsAboveCalledEveryMethod(): void
    {
        self::assertSame([], array_values(array_diff(array_keys(Routes::ROUTES), array_keys(self::$called))));
    }
}
