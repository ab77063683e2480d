<?php

declare(strict_types=1);

namespace Tally\Client\Signing;

/**
 * The AWS credential chain, in the SDKs' order, for when the AWS SDK for PHP is not
 * installed: the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
 * `AWS_SESSION_TOKEN`); a profile (`AWS_PROFILE`, else `default`) with static keys in
 * the shared credentials file, then the config file; a container's credentials (ECS,
 * `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or `..._FULL_URI`); an EC2 instance role
 * (IMDSv2, unless `AWS_EC2_METADATA_DISABLED=true`). Not here: SSO, `credential_process`,
 * web identity and role assumption; install the SDK for those. A profile the files hold
 * that names such credentials (or only half of its static keys) is an error, never
 * passed over for a role the app was not meant to use; a profile they do not hold, or
 * one without credential settings (a `region` alone), is passed over, as the SDKs do.
 * Temporary credentials are read again five minutes before they expire.
 */
final class CredentialChain
{
    private const REFRESH_SECONDS = 300;
    private const CONTAINER_HOST = 'http://169.254.170.2';
    private const IMDS = 'http://169.254.169.254';
    /** The settings by which a profile names credentials, static or from elsewhere. */
    private const CREDENTIAL_SETTINGS = [
        'aws_access_key_id', 'aws_secret_access_key', 'aws_session_token', 'credential_process',
        'role_arn', 'source_profile', 'credential_source', 'web_identity_token_file',
        'sso_session', 'sso_start_url', 'sso_account_id', 'sso_role_name', 'login_session',
    ];

    private ?Credentials $cached = null;

    public function __invoke(): Credentials
    {
        if ($this->cached === null || $this->cached->expiresWithin(self::REFRESH_SECONDS)) {
            $this->cached = $this->environment() ?? $this->profile() ?? $this->container() ?? $this->instance()
                ?? throw new \RuntimeException('no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, '
                    . 'or AWS_PROFILE, or run with a container or instance role');
        }
        return $this->cached;
    }

    private static function env(string $name): ?string
    {
        $value = getenv($name);
        return $value === false || $value === '' ? null : $value;
    }

    private function environment(): ?Credentials
    {
        $key = self::env('AWS_ACCESS_KEY_ID');
        $secret = self::env('AWS_SECRET_ACCESS_KEY');
        return $key !== null && $secret !== null
            ? new Credentials($key, $secret, self::env('AWS_SESSION_TOKEN'))
            : null;
    }

    /**
     * The static keys of the profile (`AWS_PROFILE`, else `default`); null when the files
     * do not hold it or it names no credentials, so that the chain goes on.
     */
    private function profile(): ?Credentials
    {
        $name = self::env('AWS_PROFILE') ?? 'default';
        $home = self::env('HOME') ?? '';
        $files = [
            [self::env('AWS_SHARED_CREDENTIALS_FILE') ?? "{$home}/.aws/credentials", $name],
            [self::env('AWS_CONFIG_FILE') ?? "{$home}/.aws/config", $name === 'default' ? 'default' : "profile {$name}"],
        ];
        $unread = [];
        foreach ($files as [$file, $section]) {
            $ini = is_readable($file) ? parse_ini_file($file, true, INI_SCANNER_RAW) : false;
            $values = is_array($ini) && is_array($ini[$section] ?? null) ? $ini[$section] : [];
            if (isset($values['aws_access_key_id'], $values['aws_secret_access_key'])) {
                return new Credentials(
                    $values['aws_access_key_id'],
                    $values['aws_secret_access_key'],
                    $values['aws_session_token'] ?? null,
                );
            }
            $unread = [...$unread, ...array_intersect(self::CREDENTIAL_SETTINGS, array_keys($values))];
        }
        if ($unread !== []) {
            throw new \RuntimeException("the profile \"{$name}\" names credentials this chain cannot read ("
                . implode(', ', array_unique($unread)) . '; it reads a pair of aws_access_key_id and '
                . 'aws_secret_access_key): for credential_process, SSO, web identity or role assumption '
                . 'install aws/aws-sdk-php');
        }
        return null;
    }

    private function container(): ?Credentials
    {
        $relative = self::env('AWS_CONTAINER_CREDENTIALS_RELATIVE_URI');
        $url = $relative !== null ? self::CONTAINER_HOST . $relative : self::env('AWS_CONTAINER_CREDENTIALS_FULL_URI');
        if ($url === null) {
            return null;
        }
        $token = self::env('AWS_CONTAINER_AUTHORIZATION_TOKEN');
        $answer = self::request('GET', $url, $token === null ? [] : ["Authorization: {$token}"]);
        return self::temporary($answer, $url);
    }

    private function instance(): ?Credentials
    {
        if (strtolower(self::env('AWS_EC2_METADATA_DISABLED') ?? '') === 'true') {
            return null;
        }
        $base = rtrim(self::env('AWS_EC2_METADATA_SERVICE_ENDPOINT') ?? self::IMDS, '/');
        $token = self::request('PUT', "{$base}/latest/api/token", ['X-aws-ec2-metadata-token-ttl-seconds: 21600']);
        if ($token === null) {
            return null;
        }
        $header = ["X-aws-ec2-metadata-token: {$token}"];
        $roles = "{$base}/latest/meta-data/iam/security-credentials/";
        $role = trim(explode("\n", self::request('GET', $roles, $header) ?? '')[0]);
        return $role === '' ? null : self::temporary(self::request('GET', $roles . $role, $header), $roles . $role);
    }

    /** Credentials from the JSON a container or instance endpoint answers. */
    private static function temporary(#[\SensitiveParameter] ?string $answer, string $url): Credentials
    {
        $json = json_decode($answer ?? '', true);
        if (!is_array($json) || !isset($json['AccessKeyId'], $json['SecretAccessKey'])) {
            throw new \RuntimeException("{$url} gave no credentials");
        }
        return new Credentials(
            $json['AccessKeyId'],
            $json['SecretAccessKey'],
            $json['Token'] ?? null,
            isset($json['Expiration']) ? new \DateTimeImmutable($json['Expiration']) : null,
        );
    }

    /**
     * The body of a short request to a credential endpoint; null when nothing answers
     * there (not in a container, not on an instance).
     *
     * @param list<string> $headers
     */
    private static function request(string $method, string $url, #[\SensitiveParameter] array $headers): ?string
    {
        $handle = curl_init($url);
        curl_setopt_array($handle, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_CONNECTTIMEOUT => 1,
            CURLOPT_TIMEOUT => 2,
        ]);
        $body = curl_exec($handle);
        $status = (int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE);
        curl_close($handle);
        return is_string($body) && $status === 200 ? $body : null;
    }
}
