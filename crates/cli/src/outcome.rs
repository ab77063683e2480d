//! How a command ends, and where the table commands find DynamoDB.
//!
//! Exit status 0: the command did its work and found nothing wrong. 1: it ran and found a
//! problem (a broken hash chain, lines it could not number). 2: it could not do its work
//! (DynamoDB out of reach, no such series or draw, a file it cannot read or write), like
//! clap's own usage errors.

use std::fmt;
use std::io::Write;
use std::process::ExitCode;

use axum::http::Uri;
use tally::api::local_server::is_loopback_host;
use tally::settings::Settings;

/// DynamoDB Local's port under `make run`, unless `DYNAMODB_PORT` says otherwise.
const LOCAL_PORT: u16 = 8000;

/// Why a command did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// It ran and found a problem (exit 1).
    Found(String),
    /// It could not do its work (exit 2).
    CouldNotRun(String),
}

impl Failure {
    /// Says why on stderr, in one line, and gives the exit status.
    pub fn report(self) -> ExitCode {
        match self {
            Self::Found(message) => {
                eprintln!("tally: {message}");
                ExitCode::from(1)
            }
            Self::CouldNotRun(message) => {
                eprintln!("tally: could not run: {message}");
                ExitCode::from(2)
            }
        }
    }

    /// A reason it could not run gains where it looked, so that a missing series or an
    /// unreachable endpoint names the table and endpoint it was looked for in.
    pub fn at(self, location: &Location) -> Self {
        self.within(&location.described)
    }

    /// The same, where the place is not a table (`tally import --api`: the API).
    pub fn within(self, place: &str) -> Self {
        match self {
            Self::CouldNotRun(message) => Self::CouldNotRun(format!("{message} ({place})")),
            found => found,
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self::CouldNotRun(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Self::CouldNotRun(message.to_owned())
    }
}

/// Writes a line of a command's result to standard output. A closed output (`tally audit |
/// head -1`) is a reason it could not run, as a file it cannot write is, never a panic.
macro_rules! say {
    ($($line:tt)*) => {
        $crate::outcome::write_line(format_args!($($line)*))
    };
}
pub(crate) use say;

/// What [`say`] does.
pub fn write_line(line: fmt::Arguments<'_>) -> Result<(), String> {
    writeln!(std::io::stdout(), "{line}").map_err(|e| format!("standard output: {e}"))
}

/// Where DynamoDB is, and how to say so.
#[derive(Debug, PartialEq, Eq)]
pub struct Location {
    /// `None`: the AWS default endpoint.
    pub endpoint: Option<String>,
    pub described: String,
}

/// When a command given no endpoint reaches the table in AWS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InAws {
    /// When the settings name a region or a profile: the operator commands.
    WhenNamed,
    /// Only when asked (`tally serve --aws`): the local server authenticates no one.
    Asked,
    /// Never: `tally serve` without `--aws`.
    Never,
}

/// The endpoint given (`--endpoint`, `DYNAMODB_ENDPOINT`); else AWS when `in_aws` says
/// so; else the DynamoDB Local that `make run` starts.
pub fn locate(
    given: Option<String>,
    table: &str,
    settings: &Settings,
    in_aws: InAws,
) -> Result<Location, Failure> {
    let given = given.filter(|url| !url.is_empty());
    match (given, in_aws) {
        (Some(url), InAws::Asked) => Err(Failure::CouldNotRun(format!(
            "--aws serves the table in AWS, but DYNAMODB_ENDPOINT (or --endpoint) names {url}: drop one"
        ))),
        // Without --aws it runs under the public local secret: never on a table elsewhere.
        (Some(url), InAws::Never) if !names_this_machine(&url) => {
            Err(Failure::CouldNotRun(format!(
                "tally serve without --aws serves a DynamoDB on this machine, but DYNAMODB_ENDPOINT \
                 (or --endpoint) names {url}: give a loopback endpoint (127.0.0.1, ::1, localhost), \
                 or unset it and use --aws for the table in AWS"
            )))
        }
        (Some(url), _) => Ok(Location {
            described: format!("table {table} at {url}"),
            endpoint: Some(url),
        }),
        (None, InAws::Asked) => Ok(in_aws_table(table)),
        (None, InAws::WhenNamed) if settings.aws.names_an_account() => Ok(in_aws_table(table)),
        (None, _) => {
            let port = settings.local_dynamodb_port.unwrap_or(LOCAL_PORT);
            let url = format!("http://127.0.0.1:{port}");
            let aws = match in_aws {
                InAws::WhenNamed => "AWS_REGION",
                InAws::Asked | InAws::Never => "--aws",
            };
            Ok(Location {
                described: format!(
                    "table {table} at {url}, the DynamoDB Local of `make run`; set DYNAMODB_ENDPOINT, or {aws} for a table in AWS"
                ),
                endpoint: Some(url),
            })
        }
    }
}

/// Whether the endpoint `url` is on a loopback name or address.
fn names_this_machine(url: &str) -> bool {
    url.parse::<Uri>()
        .ok()
        .and_then(|uri| uri.host().map(is_loopback_host))
        .unwrap_or(false)
}

fn in_aws_table(table: &str) -> Location {
    Location {
        endpoint: None,
        described: format!("table {table} in AWS"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Settings {
        Settings::read(|name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
        .unwrap()
    }

    #[test]
    fn a_given_endpoint_wins_then_an_aws_environment_then_make_runs_dynamodb_local() {
        let given = locate(
            Some("http://127.0.0.1:9".into()),
            "t",
            &env(&[("AWS_REGION", "eu-west-1")]),
            InAws::WhenNamed,
        )
        .unwrap();
        assert_eq!(given.endpoint.as_deref(), Some("http://127.0.0.1:9"));
        let aws = locate(None, "t", &env(&[("AWS_PROFILE", "ops")]), InAws::WhenNamed).unwrap();
        assert_eq!(aws.endpoint, None);
        assert_eq!(aws.described, "table t in AWS");
        let local = locate(None, "t", &env(&[("AWS_REGION", "")]), InAws::WhenNamed).unwrap();
        assert_eq!(local.endpoint.as_deref(), Some("http://127.0.0.1:8000"));
        assert!(
            local.described.contains("DYNAMODB_ENDPOINT"),
            "{}",
            local.described
        );
        let port = locate(
            Some(String::new()),
            "t",
            &env(&[("DYNAMODB_PORT", "8123")]),
            InAws::WhenNamed,
        )
        .unwrap();
        assert_eq!(port.endpoint.as_deref(), Some("http://127.0.0.1:8123"));
    }

    #[test]
    fn the_local_server_reaches_aws_only_when_asked_and_otherwise_only_this_machine() {
        let named = env(&[("AWS_PROFILE", "ops"), ("AWS_REGION", "eu-west-1")]);
        let local = locate(None, "t", &named, InAws::Never).unwrap();
        assert_eq!(local.endpoint.as_deref(), Some("http://127.0.0.1:8000"));
        assert!(local.described.contains("--aws"), "{}", local.described);
        let asked = locate(None, "t", &env(&[]), InAws::Asked).unwrap();
        assert_eq!(asked.endpoint, None);
        let both = locate(Some("http://127.0.0.1:9".into()), "t", &named, InAws::Asked);
        assert!(matches!(both, Err(Failure::CouldNotRun(m)) if m.contains("--aws")));
        for loopback in [
            "http://127.0.0.1:9",
            "http://localhost:8000",
            "http://[::1]:8000",
        ] {
            let given = locate(Some(loopback.into()), "t", &named, InAws::Never).unwrap();
            assert_eq!(given.endpoint.as_deref(), Some(loopback));
        }
        for elsewhere in [
            "https://dynamodb.eu-west-1.amazonaws.com",
            "http://10.0.0.7:8000",
            "http://127.0.0.1.example.com:8000",
            "not a url",
        ] {
            let refused = locate(Some(elsewhere.into()), "t", &named, InAws::Never);
            assert!(
                matches!(&refused, Err(Failure::CouldNotRun(m)) if m.contains("loopback endpoint")),
                "{elsewhere}: {refused:?}"
            );
        }
    }

    #[test]
    fn only_a_reason_it_could_not_run_names_where_it_looked() {
        let location = locate(None, "t", &env(&[]), InAws::WhenNamed).unwrap();
        match Failure::from("no series S").at(&location) {
            Failure::CouldNotRun(message) => assert!(
                message.starts_with("no series S (table t at http://127.0.0.1:8000"),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
        match Failure::Found("chain broken".into()).at(&location) {
            Failure::Found(message) => assert_eq!(message, "chain broken"),
            other => panic!("{other:?}"),
        }
    }
}
