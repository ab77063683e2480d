<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\Routes;
use Tally\Client\TallyClient;

/**
 * Every route of openapi.json has a method (the route table names it), and every method a
 * route; the PHP the package requires is the one its pages name.
 */
final class ContractTest extends TestCase
{
    public function testThePagesNameThePhpVersionComposerRequires(): void
    {
        $composer = json_decode((string) file_get_contents(__DIR__ . '/../composer.json'), true, 512, JSON_THROW_ON_ERROR);
        self::assertMatchesRegularExpression('/^>=\d+\.\d+$/', $composer['require']['php']);
        $minimum = substr($composer['require']['php'], 2);
        $readme = (string) file_get_contents(__DIR__ . '/../README.md');
        $guide = (string) file_get_contents(__DIR__ . '/../../../docs/integrate.md');
        self::assertStringContainsString("client for PHP {$minimum} and newer", $readme);
        self::assertStringContainsString("| PHP {$minimum}+ (Composer", $guide);
        preg_match_all('/PHP (\d+\.\d+)/', $readme . $guide, $named);
        self::assertSame([$minimum], array_values(array_unique($named[1])));
    }

    public function testEveryRouteOfTheOpenApiDocumentHasAMethod(): void
    {
        $document = json_decode((string) file_get_contents(__DIR__ . '/../../../openapi.json'), true, 512, JSON_THROW_ON_ERROR);
        $served = [];
        foreach ($document['paths'] as $path => $item) {
            foreach (array_keys($item) as $method) {
                if (in_array($method, ['get', 'post', 'put', 'patch', 'delete'], true)) {
                    $served[] = strtoupper($method) . " {$path}";
                }
            }
        }
        $declared = array_map(static fn (array $r): string => "{$r[0]} {$r[1]}", array_values(Routes::ROUTES));
        sort($served);
        sort($declared);
        self::assertSame($served, $declared);
        foreach (array_keys(Routes::ROUTES) as $name) {
            self::assertTrue((new \ReflectionMethod(TallyClient::class, $name))->isPublic(), $name);
        }
    }
}
