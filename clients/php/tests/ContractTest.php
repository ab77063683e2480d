<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\Routes;
use Tally\Client\TallyClient;

/** Every route of openapi.json has a method (the route table names it), and every method a route. */
final class ContractTest extends TestCase
{
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
