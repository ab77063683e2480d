<?php

declare(strict_types=1);

/**
 * Runs this PHP on each argument list at once, as separate OS processes, and returns
 * what each printed, in order; fails when one fails.
 *
 * @param list<list<string>> $argumentLists
 * @return list<string>
 */
function run_processes(array $argumentLists): array
{
    $children = [];
    foreach ($argumentLists as $arguments) {
        $child = proc_open([PHP_BINARY, ...$arguments], [1 => ['pipe', 'w']], $pipes);
        $children[] = [$child, $pipes[1]];
    }
    $outputs = [];
    foreach ($children as $i => [$child, $out]) {
        $outputs[] = (string) stream_get_contents($out);
        if (proc_close($child) !== 0) {
            throw new RuntimeException("process {$i} (" . implode(' ', $argumentLists[$i]) . ') failed');
        }
    }
    return $outputs;
}
