<?php

declare(strict_types=1);

namespace Tally\Client\Http;

/** The request got no answer: the connection failed or timed out. */
final class TransportError extends \RuntimeException
{
}
