<?php

declare(strict_types=1);

namespace Tally\Client\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Client\Signing\CredentialChain;

/**
 * The built-in credential chain's profiles, without a server: a profile the files hold
 * gives its static keys, or is an error that names it when it names credentials the chain
 * cannot read, never a step on to a container's or an instance's role; a profile they do
 * not hold, or one without credential settings, is a step on. (Where each source is read
 * from a local stand-in: FaultsTest.)
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
            '[profile tally-region]',
            'region = eu-west-1',
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

    public function testAProfileThatNamesCredentialsTheChainCannotReadIsAnErrorNamingItAndNoneOfItsValues(): void
    {
        foreach (['tally-shop' => 'process-secret', 'tally-half' => 'half-secret'] as $profile => $secret) {
            putenv("AWS_PROFILE={$profile}");
            try {
                (new CredentialChain())();
                self::fail("{$profile}: credentials came from elsewhere");
            } catch (\RuntimeException $error) {
                self::assertStringContainsString("the profile \"{$profile}\" names credentials", $error->getMessage());
                self::assertStringNotContainsString($secret, (string) $error);
            }
        }
    }

    /**
     * A container that sets `AWS_PROFILE=default` without any file, or a profile with a
     * region alone, goes on to the container's role: here the stand-in of it refuses the
     * connection, so the error names the container's endpoint, not the profile.
     */
    public function testAProfileTheFilesDoNotHoldOrWithoutCredentialSettingsIsAStepOnToTheContainersRole(): void
    {
        $cases = [
            'a profile the files do not hold' => ['tally-missing', "{$this->home}/credentials"],
            'no files at all' => ['default', "{$this->home}/none"],
            'a profile with a region alone' => ['tally-region', "{$this->home}/credentials"],
        ];
        foreach ($cases as $what => [$profile, $credentialsFile]) {
            putenv("AWS_PROFILE={$profile}");
            putenv("AWS_SHARED_CREDENTIALS_FILE={$credentialsFile}");
            if ($credentialsFile === "{$this->home}/none") {
                putenv("AWS_CONFIG_FILE={$this->home}/none");
            }
            try {
                (new CredentialChain())();
                self::fail("{$what}: credentials came from nowhere");
            } catch (\RuntimeException $error) {
                self::assertSame('http://127.0.0.1:1/container-credentials gave no credentials', $error->getMessage(), $what);
            }
        }
    }
}
