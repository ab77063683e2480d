<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\Http\Response;
use Tally\Client\Http\Transport;
use Tally\Client\Http\TransportError;
use Tally\Client\RetryPolicy;
use Tally\Client\TallyClient;
use Tally\Client\TallyError;

/**
 * What a repeat or a later page is sent with, without a server: a move of the counter
 * names its period before its first attempt (none when the caller may not read the
 * series), each page of a period's listing asks for the period of the first, and a draw
 * whose creation failed tells the id it was sent with, a move the period.
 */
final class RepeatsTest extends TestCase
{
    private const OUTCOME_UNKNOWN = [503, '{"status": 503, "code": "outcome_unknown", "detail": "try again"}'];

    /**
     * A transport that answers each request with the next of `$answers` (a status and a
     * body, or a `TransportError` to throw) and records each request's method, path,
     * query and body.
     *
     * @param list<array{int, string}|TransportError> $answers
     */
    private static function scripted(array $answers): Transport
    {
        return new class ($answers) extends Transport {
            /** @var list<array{string, string, array<string, string>, string}> */
            public array $sent = [];

            /** @param list<array{int, string}|TransportError> $answers */
            public function __construct(private array $answers)
            {
                parent::__construct();
            }

            public function send(string $method, string $url, array $headers, string $body): Response
            {
                parse_str((string) parse_url($url, PHP_URL_QUERY), $query);
                $this->sent[] = [$method, (string) parse_url($url, PHP_URL_PATH), $query, $body];
                $answer = array_shift($this->answers) ?? throw new \LogicException("no answer left for {$method} {$url}");
                if ($answer instanceof TransportError) {
                    throw $answer;
                }
                return new Response($answer[0], [], $answer[1]);
            }
        };
    }

    private static function client(Transport $transport, int $attempts = 6): TallyClient
    {
        return new TallyClient('http://tally.test', credentials: false, retry: new RetryPolicy($attempts, 1, 1), transport: $transport);
    }

    public function testAMoveWithoutAPeriodIsSentWithTheCurrentOneReadFirstOnEveryAttempt(): void
    {
        $moved = '{"series_id": "INV", "period": "2026-05-31", "last_counter": 4999}';
        $transport = self::scripted([[200, '{"series_id": "INV", "period": "2026-05-31"}'], self::OUTCOME_UNKNOWN, [200, $moved]]);
        $series = self::client($transport)->updateSeries('INV', ['next' => 5000, 'reason' => 'paper invoices']);
        self::assertSame(4999, $series['last_counter']);
        $move = '{"next":5000,"reason":"paper invoices","period":"2026-05-31"}';
        self::assertSame(
            [['GET', '/series/INV', [], ''], ['PATCH', '/series/INV', [], $move], ['PATCH', '/series/INV', [], $move]],
            $transport->sent,
        );
    }

    public function testAMoveWhoseSeriesTheCallerMayNotReadIsSentWithoutAPeriodWithTheUsualRepeats(): void
    {
        $refusals = [
            'API Gateway' => [403, '{"message": "Forbidden"}'],
            'Tally' => [403, '{"status": 403, "code": "series_not_allowed", "detail": "not yours"}'],
        ];
        foreach ($refusals as $who => $refusal) {
            $moved = '{"series_id": "INV", "period": "2026-05-31", "last_counter": 4999}';
            $transport = self::scripted([$refusal, self::OUTCOME_UNKNOWN, [200, $moved]]);
            $series = self::client($transport)->updateSeries('INV', ['next' => 5000, 'reason' => 'paper invoices']);
            self::assertSame(4999, $series['last_counter'], $who);
            $move = '{"next":5000,"reason":"paper invoices"}';
            self::assertSame(
                [['GET', '/series/INV', [], ''], ['PATCH', '/series/INV', [], $move], ['PATCH', '/series/INV', [], $move]],
                $transport->sent,
                $who,
            );
        }
    }

    public function testAMoveWhoseSeriesCannotBeReadForAnotherReasonIsNotSent(): void
    {
        $transport = self::scripted([[404, '{"status": 404, "code": "series_not_found", "detail": "no such series"}']]);
        try {
            self::client($transport)->updateSeries('INV', ['next' => 5000, 'reason' => 'paper invoices']);
            self::fail('the move was sent');
        } catch (TallyError $error) {
            self::assertSame('series_not_found', $error->code());
        }
        self::assertSame([['GET', '/series/INV', [], '']], $transport->sent);
    }

    public function testAMoveThatNamesItsPeriodAndAChangeThatIsNoMoveAreSentAsGiven(): void
    {
        $transport = self::scripted([[200, '{}'], [200, '{}']]);
        $tally = self::client($transport);
        $tally->updateSeries('INV', ['next' => 5000, 'reason' => 'paper invoices', 'period' => '2026-05-30']);
        $tally->updateSeries('INV', ['format' => 'INV{yy}-{seq:6}']);
        self::assertSame(
            [
                ['PATCH', '/series/INV', [], '{"next":5000,"reason":"paper invoices","period":"2026-05-30"}'],
                ['PATCH', '/series/INV', [], '{"format":"INV{yy}-{seq:6}"}'],
            ],
            $transport->sent,
        );
    }

    public function testAMoveWhoseRepeatsRanOutTellsThePeriodItWasSentWith(): void
    {
        $current = [200, '{"series_id": "INV", "period": "2026-05-31"}'];
        $failures = [
            'an answer' => [$current, self::OUTCOME_UNKNOWN, self::OUTCOME_UNKNOWN],
            'no answer' => [$current, new TransportError('PATCH http://tally.test/series/INV: timed out'), new TransportError('again')],
        ];
        foreach ($failures as $what => $answers) {
            $transport = self::scripted($answers);
            try {
                self::client($transport, 2)->updateSeries('INV', ['next' => 5000, 'reason' => 'paper invoices']);
                self::fail("{$what}: the counter moved");
            } catch (TallyError|TransportError $failure) {
                self::assertSame('2026-05-31', $failure->period(), $what);
                // Both attempts carried the period the error tells.
                $moves = array_filter($transport->sent, static fn (array $s): bool => $s[0] === 'PATCH');
                $periods = array_map(static fn (array $s): string => json_decode($s[3], true)['period'], $moves);
                self::assertSame(['2026-05-31', '2026-05-31'], array_values($periods), $what);
            }
        }
        $changes = [
            '2026-05-30' => ['next' => 5000, 'reason' => 'paper invoices', 'period' => '2026-05-30'],
            'none' => ['format' => 'INV{yy}-{seq:6}'],
        ];
        foreach ($changes as $told => $change) {
            try {
                self::client(self::scripted([self::OUTCOME_UNKNOWN]), 1)->updateSeries('INV', $change);
                self::fail('the series changed');
            } catch (TallyError $failure) {
                self::assertSame(['outcome_unknown', $told], [$failure->code(), $failure->period() ?? 'none']);
            }
        }
    }

    public function testACallWhoseIdOrPeriodIsNoStringIsRefusedWithTheServersErrorCarryingNone(): void
    {
        $refusal = [400, '{"status": 400, "code": "invalid_body", "detail": "period: expected a string"}'];
        $calls = [
            'a move' => static fn (TallyClient $tally): array => $tally->updateSeries('INV', ['next' => 5000, 'reason' => 'paper invoices', 'period' => 2026]),
            'a draw' => static fn (TallyClient $tally): array => $tally->createDraw(['draw_id' => 2026, 'total_tickets' => 10]),
        ];
        foreach ($calls as $what => $call) {
            try {
                $call(self::client(self::scripted([$refusal])));
                self::fail("{$what}: the call succeeded");
            } catch (TallyError $failure) {
                self::assertSame(['invalid_body', null, null], [$failure->code(), $failure->period(), $failure->drawId()], $what);
            }
        }
    }

    public function testEveryPageOfAListingOrAnAuditAfterTheFirstAsksForThePeriodOfTheFirst(): void
    {
        $page = static fn (?string $cursor): array => [200, json_encode(['series_id' => 'INV', 'period' => '2026-05-31', 'next_cursor' => $cursor])];
        $transport = self::scripted([$page('c1'), $page('c2'), $page(null), $page('a1'), $page(null)]);
        $tally = self::client($transport);
        self::assertCount(3, iterator_to_array($tally->listOrders('INV', limit: 2)));
        self::assertCount(2, iterator_to_array($tally->audit('INV')));
        self::assertSame(
            [
                ['/series/INV/orders', ['limit' => '2']],
                ['/series/INV/orders', ['period' => '2026-05-31', 'limit' => '2', 'cursor' => 'c1']],
                ['/series/INV/orders', ['period' => '2026-05-31', 'limit' => '2', 'cursor' => 'c2']],
                ['/series/INV/audit', []],
                ['/series/INV/audit', ['period' => '2026-05-31', 'cursor' => 'a1']],
            ],
            array_map(static fn (array $sent): array => [$sent[1], $sent[2]], $transport->sent),
        );
    }

    public function testADrawWhoseCreationFailedTellsTheIdItWasSentWith(): void
    {
        $failures = [
            'an answer' => [self::OUTCOME_UNKNOWN, self::OUTCOME_UNKNOWN],
            'no answer' => [new TransportError('POST http://tally.test/draws: timed out'), new TransportError('again')],
        ];
        foreach ($failures as $what => $answers) {
            $transport = self::scripted($answers);
            try {
                self::client($transport, 2)->createDraw(['total_tickets' => 10]);
                self::fail("{$what}: the draw was created");
            } catch (TallyError|TransportError $failure) {
                $sent = array_map(static fn (array $s): string => json_decode($s[3], true)['draw_id'], $transport->sent);
                // Both attempts carried the id the error tells.
                self::assertSame([$failure->drawId(), $failure->drawId()], $sent, $what);
                self::assertMatchesRegularExpression('/^d-[0-9a-f]{16}$/', (string) $failure->drawId(), $what);
            }
        }
        $given = self::scripted([self::OUTCOME_UNKNOWN]);
        try {
            self::client($given, 1)->createDraw(['draw_id' => 'spring', 'total_tickets' => 10]);
            self::fail('the draw was created');
        } catch (TallyError $failure) {
            self::assertSame(['outcome_unknown', 'spring'], [$failure->code(), $failure->drawId()]);
        }
    }
}
