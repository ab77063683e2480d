//! How a command ends, and where the table commands find DynamoDB.
//!
//! Exit status 0: the command did its work and found nothing wrong. 1: it ran and found a
//! problem (a broken hash chain, lines it could not number). 2: it could not do its work
//! (DynamoDB out of reach, no such series or draw, a file it cannot read or write), like
//! clap's own usage errors.

use std::process::ExitCode;

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

/// Where DynamoDB is, and how to say so.
#[derive(Debug, PartialEq, Eq)]
pub struct Location {
    /// `None`: the AWS default endpoint.
    pub endpoint: Option<String>,
    pub described: String,
}

/// The endpoint given (`--endpoint`, `DYNAMODB_ENDPOINT`); else AWS when the settings
/// name a region or a profile; else the DynamoDB Local that `make run` starts.
pub fn locate(given: Option<String>, table: &str, settings: &Settings) -> Location {
    if let Some(url) = given.filter(|url| !url.is_empty()) {
        return Location {
            described: format!("table {table} at {url}"),
            endpoint: Some(url),
        };
    }
    if settings.aws.names_an_account() {
        return Location {
            endpoint: None,
            described: format!("table {table} in AWS"),
        };
    }
    let port = settings.local_dynamodb_port.unwrap_or(LOCAL_PORT);
    let url = format!("http://127.0.0.1:{port}");
    Location {
        described: format!(
            "table {table} at {url}, the DynamoDB Local of `make run`; set DYNAMODB_ENDPOINT, or AWS_REGION for a table in AWS"
        ),
        endpoint: Some(url),
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
        );
        assert_eq!(given.endpoint.as_deref(), Some("http://127.0.0.1:9"));
        let aws = locate(None, "t", &env(&[("AWS_PROFILE", "ops")]));
        assert_eq!(aws.endpoint, None);
        assert_eq!(aws.described, "table t in AWS");
        let local = locate(None, "t", &env(&[("AWS_REGION", "")]));
        assert_eq!(local.endpoint.as_deref(), Some("http://127.0.0.1:8000"));
        assert!(
            local.described.contains("DYNAMODB_ENDPOINT"),
            "{}",
            local.described
        );
        let port = locate(Some(String::new()), "t", &env(&[("DYNAMODB_PORT", "8123")]));
        assert_eq!(port.endpoint.as_deref(), Some("http://127.0.0.1:8123"));
    }

    #[test]
    fn only_a_reason_it_could_not_run_names_where_it_looked() {
        let location = locate(None, "t", &env(&[]));
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
