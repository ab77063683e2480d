<?php

declare(strict_types=1);

namespace Tally\Client\Signing;

/**
 * Signs with the AWS SDK for PHP's own `Aws\Signature\SignatureV4` when the SDK is
 * installed (`composer require aws/aws-sdk-php`): the signer to use in production. The
 * client picks it by itself whenever the class exists.
 */
final class AwsSdkSigner implements Signer
{
    private readonly \Aws\Signature\SignatureV4 $signer;

    public function __construct(string $service, string $region)
    {
        $this->signer = new \Aws\Signature\SignatureV4($service, $region);
    }

    public static function available(): bool
    {
        return class_exists(\Aws\Signature\SignatureV4::class) && class_exists(\GuzzleHttp\Psr7\Request::class);
    }

    public function sign(
        string $method,
        string $url,
        #[\SensitiveParameter] array $headers,
        #[\SensitiveParameter] string $body,
        Credentials $credentials,
    ): array {
        $signed = $this->signer->signRequest(
            new \GuzzleHttp\Psr7\Request($method, $url, $headers, $body),
            new \Aws\Credentials\Credentials(
                $credentials->accessKeyId,
                $credentials->secretAccessKey(),
                $credentials->sessionToken(),
            ),
        );
        $out = [];
        foreach ($signed->getHeaders() as $name => $values) {
            if (strtolower($name) !== 'host') {
                $out[$name] = implode(', ', $values);
            }
        }
        return $out;
    }
}
