<?php

declare(strict_types=1);

/*
 * The package's PSR-4 autoloading, its tests' namespace included, for where Composer's
 * registry cannot be reached (as on the machines that test this project): namespace
 * prefixes and folders are read from composer.json's `autoload` and `autoload-dev`, so
 * they are declared once. With
 * Composer, `vendor/autoload.php` does the same and is used when present. The tests and
 * examples start here.
 */

$package = __DIR__;
if (is_file("{$package}/vendor/autoload.php")) {
    require "{$package}/vendor/autoload.php";
    return;
}
$composer = json_decode((string) file_get_contents("{$package}/composer.json"), true, 512, JSON_THROW_ON_ERROR);
$prefixes = ($composer['autoload']['psr-4'] ?? []) + ($composer['autoload-dev']['psr-4'] ?? []);
// The longest prefix first, as Composer matches them.
uksort($prefixes, static fn (string $a, string $b): int => strlen($b) <=> strlen($a));
spl_autoload_register(static function (string $class) use ($package, $prefixes): void {
    foreach ($prefixes as $prefix => $folder) {
        if (str_starts_with($class, $prefix)) {
            $file = "{$package}/{$folder}" . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
            }
            return;
        }
    }
});
