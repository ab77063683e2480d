<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\Signing\CredentialChain;

/**
 * The built-in credential chain's profiles, without a server: a profile named in
 * `AWS_PROFILE` gives its static keys or is an error that names it, never a step on to a
 * container's or an instance's role. (Where each source is read from a local stand-in:
 * FaultsTest.)
 */
final class CredentialChainTest extends TestCase
{
    /** @var array<string, string> the environment before the test */
    private array $saved = [];
    private string $home = '';

    protected function setUp(): void
    {
        $this->saved = getenv();
        $this->home = sys_get_temp_dir() . '/tally-chain-' . bin2hex(random_bytes(4));
        mkdir($this->home);
        file_put_contents("{$this->home}/credentials", implode("\n", [
            '[tally-keys]',
            'aws_access_key_id = AKIDPROFILE',
            'aws_secret_access_key = profile-secret',
            '[tally-half]',
            'aws_secret_access_key = half-secret',
        ]));
        file_put_contents("{$this->home}/config", implode("\n", [
            '[profile tally-shop]',
            'credential_process = aws_signing_helper credential-process --private-key process-secret.pem',
        ]));
        foreach (['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI'] as $name) {
            putenv($name);
        }
        // Were the chain to step past the profile, it would find this container's role.
        putenv('AWS_CONTAINER_CREDENTIALS_FULL_URI=http://127.0.0.1:1/container-credentials');
        putenv('AWS_EC2_METADATA_DISABLED=true');
        putenv("AWS_SHARED_CREDENTIALS_FILE={$this->home}/credentials");
        putenv("AWS_CONFIG_FILE={$this->home}/config");
    }

    protected function tearDown(): void
    {
        foreach (['AWS_PROFILE', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_EC2_METADATA_DISABLED', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_CONFIG_FILE'] as $name) {
            putenv($name);
        }
        foreach ($this->saved as $name => $value) {
            putenv("{$name}={$value}");
        }
        array_map('unlink', glob("{$this->home}/*") ?: []);
        rmdir($this->home);
    }

    public function testANamedProfileWithStaticKeysGivesThem(): void
    {
        putenv('AWS_PROFILE=tally-keys');
        $credentials = (new CredentialChain())();
        self::assertSame(['AKIDPROFILE', 'profile-secret'], [$credentials->accessKeyId, $credentials->secretAccessKey()]);
    }

    public function testANamedProfileWithoutStaticKeysIsAnErrorNamingItAndNoneOfItsValues(): void
    {
        foreach (['tally-shop' => 'process-secret', 'tally-half' => 'half-secret', 'tally-missing' => null] as $profile => $secret) {
            putenv("AWS_PROFILE={$profile}");
            try {
                (new CredentialChain())();
                self::fail("{$profile}: credentials came from elsewhere");
            } catch (\RuntimeException $error) {
                self::assertStringContainsString("the profile \"{$profile}\"", $error->getMessage());
                if ($secret !== null) {
                    self::assertStringNotContainsString($secret, (string) $error);
                }
            }
        }
    }
}
