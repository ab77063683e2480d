//! Every setting Tally takes from its environment, read once when a process starts, in
//! its `main`, and handed down from there (docs/operations.md lists the variables). No
//! other module reads the environment; only the AWS SDK reads its own chain's values
//! (region, credentials), and the `tally` command's arguments fall back on theirs. Each
//! function uses the parts it needs; the order function, for one, never loads the
//! deployment secret.

mod sources;

use std::num::NonZeroUsize;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tally_domain::series::Timezone;
use tally_domain::spend::{LimitChange, Limits};
use tally_domain::winners::BeaconNetworks;

use crate::aws::{AwsEnvironment, Runtime, Timeouts};
use crate::bus::BusConfig;
use crate::secrets::SecretSource;
use crate::store::StoreConfig;
use crate::telemetry::LogSettings;
use crate::tickets::{DEFAULT_CACHED_DRAWS, DEFAULT_COOLING_OFF, SpendRules};

pub use sources::{
    Identity, JWT_CLAIM_VAR, SOURCE_BINDINGS_VAR, SourceBindings, Unidentified, token_caller,
};

/// Where `scripts/verify-page.sh` writes the browser verifier, from the repository's root.
const VERIFY_PAGE: &str = "target/verify-page/verify.html";

/// How long one request may take by default: within API Gateway's 30 s and the ticket
/// function's 15 s timeout, so that the answer is a 503 problem, not the gateway's own.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(12);

/// How long a request's body may take to arrive by default, from its head on: longer than
/// a batch of the largest order body needs on any working link, shorter than the request timeout.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long drawing winners or serving an eligible list may take by default: a draw of
/// 10,000,000 tickets takes seconds of computing (docs/operations.md), within API Gateway's
/// 30 s and the function's 29 s timeout.
pub const DEFAULT_DRAWING_TIMEOUT: Duration = Duration::from_secs(25);

/// The whole environment of a process, parsed.
#[derive(Clone, Debug)]
pub struct Settings {
    /// On Lambda or not: a deployment's secret must be fit for it ([`crate::secrets::SecretUse::on`]).
    pub runtime: Runtime,
    /// `TABLE_NAME`, required by the functions that reach the table.
    pub table_name: Option<String>,
    /// `DYNAMODB_ENDPOINT`: only for DynamoDB Local.
    pub dynamodb_endpoint: Option<String>,
    /// The `DYNAMODB_*` timeouts and attempts.
    pub timeouts: Timeouts,
    /// `EVENT_BUS_NAME`, required by the events function.
    pub event_bus_name: Option<String>,
    /// `EVENTBRIDGE_ENDPOINT`: only for a local stand-in.
    pub eventbridge_endpoint: Option<String>,
    /// What the HTTP functions and `tally serve` take.
    pub http: HttpSettings,
    /// Where the deployment secret is to be read from, by those that need it.
    pub secret: SecretSource,
    /// The log level and format, and the metrics' namespace.
    pub log: LogSettings,
    /// Which of the AWS SDK's variables are set.
    pub aws: AwsEnvironment,
    /// `DYNAMODB_PORT`: where the `tally` command finds the DynamoDB Local of `make run`
    /// when it is given no endpoint.
    pub local_dynamodb_port: Option<u16>,
}

/// The HTTP API's settings.
#[derive(Clone, Debug)]
pub struct HttpSettings {
    /// `TALLY_REQUEST_TIMEOUT_MS`.
    pub request_timeout: Duration,
    /// `TALLY_DRAWING_TIMEOUT_MS`.
    pub drawing_timeout: Duration,
    /// `TALLY_BODY_READ_TIMEOUT_MS`.
    pub body_timeout: Duration,
    /// `TALLY_CACHED_DRAWS`.
    pub cached_draws: NonZeroUsize,
    /// `TALLY_SOURCE_BINDINGS`, open when unset, naming token callers by
    /// `TALLY_JWT_CLAIM`.
    pub sources: SourceBindings,
    /// `TALLY_BEACON_NETWORKS`, with quicknet always among them.
    pub networks: BeaconNetworks,
    /// `TALLY_VERIFY_PAGE`: the browser verifier `tally serve` serves at `/verify`.
    pub verify_page: String,
    /// `TALLY_SPEND_TIME_ZONE`, `TALLY_LIMIT_COOLING_OFF_SECONDS` and
    /// `TALLY_DEFAULT_SPEND_LIMITS`.
    pub spend: SpendRules,
}

/// The deployment's default limits, as JSON: `{"GBP": {"day": 5000, "month": 20000}}`,
/// amounts in minor units, applying at once.
fn default_limits(json: &str) -> Result<Limits, String> {
    let wanted: LimitChange = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let none = Limits::default();
    none.change(&none, &wanted, Timestamp::UNIX_EPOCH, SignedDuration::ZERO)
        .map_err(|e| e.to_string())
}

impl Settings {
    /// Reads and checks every variable of the process's environment.
    pub fn from_env() -> Result<Self, String> {
        Self::read(|name| std::env::var(name).ok())
    }

    /// Reads and checks every variable through `var`; an empty value counts as unset.
    pub fn read(var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let set = |name: &str| var(name).filter(|value| !value.is_empty());
        let number = |name: &str| -> Result<Option<u64>, String> {
            set(name)
                .map(|raw| {
                    raw.parse()
                        .map_err(|_| format!("{name} must be a whole number, got {raw:?}"))
                })
                .transpose()
        };
        let millis = |name: &str, default: Duration| -> Result<Duration, String> {
            Ok(number(name)?.map_or(default, Duration::from_millis))
        };
        let cached_draws = number("TALLY_CACHED_DRAWS")?
            .map_or(Some(DEFAULT_CACHED_DRAWS), |n| usize::try_from(n).ok())
            .and_then(NonZeroUsize::new)
            .ok_or("TALLY_CACHED_DRAWS must be a positive number")?;
        let networks = BeaconNetworks::with_json(set("TALLY_BEACON_NETWORKS").as_deref())
            .map_err(|e| format!("TALLY_BEACON_NETWORKS: {e}"))?;
        let spend = SpendRules {
            zone: match set("TALLY_SPEND_TIME_ZONE") {
                Some(name) => Timezone::parse(&name).map_err(|_| {
                    format!("TALLY_SPEND_TIME_ZONE: no time zone is called {name:?}")
                })?,
                None => Timezone::utc(),
            },
            cooling_off: number("TALLY_LIMIT_COOLING_OFF_SECONDS")?.map_or(
                Ok(DEFAULT_COOLING_OFF),
                |s| {
                    // At most what a count of milliseconds in i64 holds, as before.
                    i64::try_from(s)
                        .ok()
                        .filter(|&s| s <= i64::MAX / 1_000)
                        .map(SignedDuration::from_secs)
                        .ok_or("TALLY_LIMIT_COOLING_OFF_SECONDS is too large".to_owned())
                },
            )?,
            default: match set("TALLY_DEFAULT_SPEND_LIMITS") {
                Some(json) => {
                    default_limits(&json).map_err(|e| format!("TALLY_DEFAULT_SPEND_LIMITS: {e}"))?
                }
                None => Limits::default(),
            },
            known: Default::default(),
        };
        let defaults = Timeouts::default();
        let timeouts = Timeouts {
            connect: millis("DYNAMODB_CONNECT_TIMEOUT_MS", defaults.connect)?,
            attempt: millis("DYNAMODB_ATTEMPT_TIMEOUT_MS", defaults.attempt)?,
            operation: millis("DYNAMODB_OPERATION_TIMEOUT_MS", defaults.operation)?,
            max_attempts: number("DYNAMODB_MAX_ATTEMPTS")?
                .map_or(Ok(defaults.max_attempts), u32::try_from)
                .map_err(|_| "DYNAMODB_MAX_ATTEMPTS is too large".to_owned())?,
        };
        if timeouts.max_attempts == 0 || timeouts.attempt.is_zero() {
            return Err("DynamoDB attempts and their timeout must be positive".to_owned());
        }
        let local_dynamodb_port = number("DYNAMODB_PORT")?
            .map(|port| u16::try_from(port).map_err(|_| "DYNAMODB_PORT must be a port number"))
            .transpose()?;
        let runtime = Runtime::read(set);
        Ok(Self {
            runtime,
            table_name: var("TABLE_NAME"),
            dynamodb_endpoint: set("DYNAMODB_ENDPOINT"),
            timeouts,
            event_bus_name: var("EVENT_BUS_NAME"),
            eventbridge_endpoint: set("EVENTBRIDGE_ENDPOINT"),
            http: HttpSettings {
                request_timeout: millis("TALLY_REQUEST_TIMEOUT_MS", DEFAULT_REQUEST_TIMEOUT)?,
                drawing_timeout: millis("TALLY_DRAWING_TIMEOUT_MS", DEFAULT_DRAWING_TIMEOUT)?,
                body_timeout: millis("TALLY_BODY_READ_TIMEOUT_MS", DEFAULT_BODY_TIMEOUT)?,
                cached_draws,
                sources: SourceBindings::parse(&var(SOURCE_BINDINGS_VAR).unwrap_or_default())?
                    .with_token_claim(set(JWT_CLAIM_VAR).as_deref())?,
                networks,
                verify_page: set("TALLY_VERIFY_PAGE").unwrap_or_else(|| VERIFY_PAGE.to_owned()),
                spend,
            },
            secret: SecretSource::read(set),
            log: LogSettings::read(set, runtime),
            aws: AwsEnvironment::read(set),
            local_dynamodb_port,
        })
    }

    /// The table: `TABLE_NAME` (required), `DYNAMODB_ENDPOINT` and the timeouts.
    pub fn store(&self) -> Result<StoreConfig, String> {
        let table_name = self
            .table_name
            .clone()
            .ok_or("TABLE_NAME is not set: name the DynamoDB table")?;
        StoreConfig::new(
            table_name,
            self.dynamodb_endpoint.clone(),
            self.timeouts,
            self.aws,
        )
    }

    /// The bus: `EVENT_BUS_NAME` (required) and `EVENTBRIDGE_ENDPOINT`.
    pub fn bus(&self) -> Result<BusConfig, String> {
        let bus_name = self
            .event_bus_name
            .clone()
            .ok_or("EVENT_BUS_NAME is not set: name the EventBridge bus")?;
        Ok(BusConfig {
            bus_name,
            endpoint: self.eventbridge_endpoint.clone(),
            timeouts: Timeouts::default(),
            environment: self.aws,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Result<Settings, String> {
        Settings::read(|name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn an_empty_environment_gives_every_default() {
        let settings = settings(&[]).unwrap();
        assert_eq!(settings.timeouts, Timeouts::default());
        assert_eq!(settings.http.request_timeout, DEFAULT_REQUEST_TIMEOUT);
        assert_eq!(settings.http.drawing_timeout, DEFAULT_DRAWING_TIMEOUT);
        assert_eq!(settings.http.body_timeout, DEFAULT_BODY_TIMEOUT);
        assert_eq!(settings.http.cached_draws.get(), DEFAULT_CACHED_DRAWS);
        assert_eq!(settings.http.verify_page, VERIFY_PAGE);
        assert_eq!(settings.http.spend.zone, Timezone::utc());
        assert_eq!(settings.http.spend.cooling_off, DEFAULT_COOLING_OFF);
        assert_eq!(settings.http.spend.default, Limits::default());
        assert!(matches!(settings.secret, SecretSource::LocalDefault));
        assert_eq!(settings.runtime, Runtime::Local);
        assert!(settings.store().unwrap_err().contains("TABLE_NAME"));
        assert!(settings.bus().unwrap_err().contains("EVENT_BUS_NAME"));
    }

    #[test]
    fn set_variables_override_the_defaults() {
        let settings = settings(&[
            ("TABLE_NAME", "orders-table"),
            ("DYNAMODB_ENDPOINT", "http://127.0.0.1:8000"),
            ("DYNAMODB_OPERATION_TIMEOUT_MS", "500"),
            ("TALLY_REQUEST_TIMEOUT_MS", "25000"),
            ("TALLY_CACHED_DRAWS", "7"),
            ("TALLY_DEPLOYMENT_SECRET_ARN", "arn:secret"),
            ("TALLY_SPEND_TIME_ZONE", "Europe/London"),
            ("TALLY_LIMIT_COOLING_OFF_SECONDS", "60"),
            ("TALLY_DEFAULT_SPEND_LIMITS", r#"{"GBP": {"day": 5000}}"#),
        ])
        .unwrap();
        let spend = &settings.http.spend;
        assert_eq!(spend.zone.as_str(), "Europe/London");
        assert_eq!(spend.cooling_off, SignedDuration::from_secs(60));
        let gbp = tally_domain::spend::Currency::parse("GBP").unwrap();
        let day = tally_domain::spend::Span::Day;
        let at = Timestamp::now();
        assert_eq!(
            Limits::default().limit(&spend.default, gbp, day, at),
            Some(5000)
        );
        let store = settings.store().unwrap();
        assert_eq!(store.table_name, "orders-table");
        assert_eq!(store.endpoint.as_deref(), Some("http://127.0.0.1:8000"));
        assert_eq!(store.timeouts.operation, Duration::from_millis(500));
        assert_eq!(settings.http.request_timeout, Duration::from_secs(25));
        assert_eq!(settings.http.cached_draws.get(), 7);
        assert!(matches!(
            settings.secret,
            SecretSource::SecretsManager { ref secret_id, .. } if secret_id == "arn:secret"
        ));
    }

    #[test]
    fn spend_settings_that_do_not_parse_are_refused_by_name() {
        for (name, wrong) in [
            ("TALLY_SPEND_TIME_ZONE", "Mars/Olympus"),
            ("TALLY_DEFAULT_SPEND_LIMITS", r#"{"gbp": {"day": 1}}"#),
            ("TALLY_LIMIT_COOLING_OFF_SECONDS", "soon"),
        ] {
            assert!(
                settings(&[(name, wrong)]).unwrap_err().contains(name),
                "{name}"
            );
        }
    }

    #[test]
    fn the_aws_variables_decide_the_local_defaults_and_where_the_command_looks() {
        let bare = settings(&[]).unwrap();
        assert_eq!(bare.aws, AwsEnvironment::default());
        assert!(!bare.aws.names_an_account());
        assert_eq!(bare.local_dynamodb_port, None);
        let keyed = settings(&[
            ("AWS_ACCESS_KEY_ID", "AKIA"),
            ("DYNAMODB_PORT", "8123"),
            ("TABLE_NAME", "t-1"),
            ("EVENT_BUS_NAME", "b"),
        ])
        .unwrap();
        assert!(keyed.aws.credentials && !keyed.aws.names_an_account());
        assert_eq!(keyed.local_dynamodb_port, Some(8123));
        assert_eq!(keyed.store().unwrap().environment, keyed.aws);
        assert_eq!(keyed.bus().unwrap().environment, keyed.aws);
        for name in ["AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"] {
            let aws = settings(&[(name, "x")]).unwrap().aws;
            assert!(aws.names_an_account() && !aws.credentials, "{name}");
            assert_eq!(aws.region, name != "AWS_PROFILE", "{name}");
            // Set but empty counts as unset, as for every variable.
            assert_eq!(
                settings(&[(name, "")]).unwrap().aws,
                AwsEnvironment::default()
            );
        }
    }

    /// Reading the environment anywhere else would bypass the checks here: the source of
    /// every other module calls no `std::env` function that reads a variable.
    #[test]
    fn no_other_module_reads_the_environment() {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut folders: Vec<std::path::PathBuf> = ["src", "crates/domain/src", "crates/cli/src"]
            .iter()
            .map(|folder| std::path::Path::new(root).join(folder))
            .collect();
        let mut read = 0;
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && !path.starts_with(std::path::Path::new(root).join("src/settings"))
                {
                    let source = std::fs::read_to_string(&path).unwrap();
                    // `env::var`, `env::vars`, `env::var_os`.
                    assert!(
                        !source.contains("env::var"),
                        "{} reads the environment: read it in Settings",
                        path.display()
                    );
                    read += 1;
                }
            }
        }
        assert!(read > 50, "only {read} files read");
    }

    #[test]
    fn a_malformed_value_names_its_variable() {
        for (name, value) in [
            ("DYNAMODB_MAX_ATTEMPTS", "0"),
            ("DYNAMODB_ATTEMPT_TIMEOUT_MS", "soon"),
            ("TALLY_CACHED_DRAWS", "0"),
            ("TALLY_BEACON_NETWORKS", "[1"),
            ("TALLY_BODY_READ_TIMEOUT_MS", "-1"),
            ("DYNAMODB_PORT", "80000"),
            ("TALLY_JWT_CLAIM", "a claim"),
        ] {
            let error = settings(&[(name, value)]).unwrap_err();
            assert!(
                error.contains(name) || error.contains("DynamoDB attempts"),
                "{name}: {error}"
            );
        }
    }
}
