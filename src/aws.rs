//! The AWS SDK configuration every client of Tally shares: timeouts and retries, and for
//! a local endpoint (DynamoDB Local, a test's stand-in for EventBridge) dummy credentials
//! and a default region when the environment names none (the settings read which it does);
//! and whether the process runs on Lambda.

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{Region, SdkConfig};
use aws_sdk_dynamodb::config::Credentials;

/// How long Tally waits for an AWS service, and how often the SDK tries a call. Every call is
/// bounded by `operation`, so a frozen endpoint costs a request at most that long per call
/// before it is answered with a 503.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Opening a connection.
    pub connect: Duration,
    /// One attempt of a call, retries excluded.
    pub attempt: Duration,
    /// A whole call, the SDK's retries included.
    pub operation: Duration,
    /// Attempts per call (1 means no retry).
    pub max_attempts: u32,
}

impl Default for Timeouts {
    /// Fits API Gateway's 30 s and the functions' own timeouts: one call takes at most
    /// 8 s, three attempts of at most 3 s each.
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(2),
            attempt: Duration::from_secs(3),
            operation: Duration::from_secs(8),
            max_attempts: 3,
        }
    }
}

/// Where the process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// On AWS Lambda, which sets `AWS_LAMBDA_FUNCTION_NAME` for every function.
    Lambda,
    /// Anywhere else: the `tally` command, the tests.
    Local,
}

impl Runtime {
    /// Reads the variable through `set`, which answers `None` for an unset one.
    pub fn read(set: impl Fn(&str) -> Option<String>) -> Self {
        if set("AWS_LAMBDA_FUNCTION_NAME").is_some() {
            Self::Lambda
        } else {
            Self::Local
        }
    }
}

/// What the environment gives the AWS SDK's own chain, as far as Tally needs to know: a
/// local endpoint gets dummy credentials and a region only where it gives none, and the
/// `tally` command reaches the table in AWS when it names a region or a profile. The SDK
/// still reads the values themselves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AwsEnvironment {
    /// `AWS_ACCESS_KEY_ID` is set.
    pub credentials: bool,
    /// `AWS_REGION` or `AWS_DEFAULT_REGION` is set.
    pub region: bool,
    /// `AWS_PROFILE` is set.
    pub profile: bool,
}

impl AwsEnvironment {
    /// Reads the variables through `set`, which answers `None` for an unset one.
    pub fn read(set: impl Fn(&str) -> Option<String>) -> Self {
        Self {
            credentials: set("AWS_ACCESS_KEY_ID").is_some(),
            region: set("AWS_REGION")
                .or_else(|| set("AWS_DEFAULT_REGION"))
                .is_some(),
            profile: set("AWS_PROFILE").is_some(),
        }
    }

    /// A region or a profile says that an AWS account is meant.
    pub fn names_an_account(&self) -> bool {
        self.region || self.profile
    }
}

/// The shared configuration for clients of the service at `endpoint` (the AWS default
/// when `None`).
pub async fn sdk_config(
    endpoint: Option<&str>,
    timeouts: Timeouts,
    environment: AwsEnvironment,
) -> SdkConfig {
    let mut loader = aws_config::from_env()
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(timeouts.connect)
                .operation_attempt_timeout(timeouts.attempt)
                .operation_timeout(timeouts.operation)
                .build(),
        )
        .retry_config(
            RetryConfig::standard()
                .with_max_attempts(timeouts.max_attempts)
                .with_initial_backoff(Duration::from_millis(50))
                .with_max_backoff(Duration::from_secs(1)),
        );
    if let Some(endpoint) = endpoint {
        loader = loader.endpoint_url(endpoint);
        if !environment.credentials {
            loader = loader.credentials_provider(Credentials::new(
                "local",
                "local",
                None,
                None,
                "tally-local",
            ));
        }
        if !environment.region {
            loader = loader.region(Region::new("us-east-1"));
        }
    }
    loader.load().await
}
/// An error's message, safe to log: its `Display` and its sources' `Display`, joined with
/// ": ", leaving out a source that only repeats the one before. Never `Debug`: an SDK
/// error's `Debug` holds the raw response, whose body may be a secret or an item.
pub(crate) fn display_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    for text in std::iter::successors(Some(err), |e| e.source()).map(ToString::to_string) {
        if parts.last() != Some(&text) {
            parts.push(text);
        }
    }
    parts.join(": ")
}
