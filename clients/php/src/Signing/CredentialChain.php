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
 * web identity and role assumption; install the SDK for those. A profile named in
 * `AWS_PROFILE` without static keys is an error, never passed over for a role the app was
 * not meant to use. Temporary credentials are read again five minutes before they expire.
 */
final class CredentialChain
{
    private const REFRESH_SECONDS = 300;
    private const CONTAINER_HOST = 'http://169.254.170.2';
    private const IMDS = 'http://169.254.169.254';

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

    private function profile(): ?Credentials
    {
        $named = self::env('AWS_PROFILE');
        $name = $named ?? 'default';
        $home = self::env('HOME') ?? '';
        $files = [
            [self::env('AWS_SHARED_CREDENTIALS_FILE') ?? "{$home}/.aws/credentials", $name],
            [self::env('AWS_CONFIG_FILE') ?? "{$home}/.aws/config", $name === 'default' ? 'default' : "profile {$name}"],
        ];
        foreach ($files as [$file, $section]) {
            $ini = is_readable($file) ? parse_ini_file($file, true, INI_SCANNER_RAW) : false;
            $values = is_array($ini) ? ($ini[$section] ?? []) : [];
            if (isset($values['aws_access_key_id'], $values['aws_secret_access_key'])) {
                return new Credentials(
                    $values['aws_access_key_id'],
                    $values['aws_secret_access_key'],
                    $values['aws_session_token'] ?? null,
                );
            }
        }
        if ($named !== null) {
            throw new \RuntimeException("AWS_PROFILE names the profile \"{$name}\", which has no static keys "
                . '(aws_access_key_id and aws_secret_access_key) in the shared credentials or config file; '
                . 'for credential_process, SSO, web identity or role assumption install aws/aws-sdk-php');
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
