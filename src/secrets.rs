//! The deployment secret, read once when a process that needs it starts (docs/security.md): from AWS
//! Secrets Manager when `TALLY_DEPLOYMENT_SECRET_ARN` names a secret (the template sets it
//! for the ticket functions, whose role alone may read it), else from
//! `TALLY_DEPLOYMENT_SECRET`, else the public local default of `make run` and the tests.
//! A deployment (a Lambda function, `tally serve --aws`) starts only with a secret that
//! is configured, not public and not weak.

use aws_sdk_secretsmanager::Client;
use tracing::info;

use crate::aws::{self, AwsEnvironment, Runtime, Timeouts, display_chain};
use tally_domain::secret::DeploymentSecret;

/// Which secrets a process may start with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretUse {
    /// `make run` and the tests: any secret of 32 bytes or more, or the local default.
    Local,
    /// A deployment: a configured secret that is neither the public local default nor
    /// weak ([`DeploymentSecret::check_deployment_grade`]).
    Deployment,
}

impl SecretUse {
    /// Every Lambda function is a deployment.
    pub fn on(runtime: Runtime) -> Self {
        match runtime {
            Runtime::Lambda => Self::Deployment,
            Runtime::Local => Self::Local,
        }
    }
}

/// Where the deployment secret is, as the environment says; nothing is read until
/// [`Self::load`].
#[derive(Clone, Debug)]
pub enum SecretSource {
    /// `TALLY_DEPLOYMENT_SECRET_ARN`, at `SECRETSMANAGER_ENDPOINT` when that is set.
    SecretsManager {
        secret_id: String,
        endpoint: Option<String>,
        environment: AwsEnvironment,
    },
    /// `TALLY_DEPLOYMENT_SECRET`, the secret itself.
    Given(Given),
    /// Neither: the public local default.
    LocalDefault,
}

/// A secret given in the environment, kept out of `Debug`.
#[derive(Clone)]
pub struct Given(String);

impl std::fmt::Debug for Given {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Given(..)")
    }
}

impl SecretSource {
    /// The source `set` (the non-empty variables) names.
    pub(crate) fn read(set: impl Fn(&str) -> Option<String>) -> Self {
        if let Some(secret_id) = set("TALLY_DEPLOYMENT_SECRET_ARN") {
            Self::SecretsManager {
                secret_id,
                endpoint: set("SECRETSMANAGER_ENDPOINT"),
                environment: AwsEnvironment::read(set),
            }
        } else if let Some(text) = set("TALLY_DEPLOYMENT_SECRET") {
            Self::Given(Given(text))
        } else {
            Self::LocalDefault
        }
    }

    /// Reads the deployment secret from where it is, and checks it is fit for `use_`.
    pub async fn load(&self, use_: SecretUse) -> Result<DeploymentSecret, String> {
        let (secret, origin) = match self {
            Self::SecretsManager {
                secret_id,
                endpoint,
                environment,
            } => {
                let secret = fetch(secret_id, endpoint.as_deref(), *environment).await?;
                (secret, "AWS Secrets Manager")
            }
            Self::Given(Given(text)) => {
                let secret = DeploymentSecret::new(text.as_bytes())
                    .map_err(|e| format!("TALLY_DEPLOYMENT_SECRET: {e}"))?;
                (secret, "TALLY_DEPLOYMENT_SECRET")
            }
            Self::LocalDefault if use_ == SecretUse::Deployment => {
                return Err(
                    "no deployment secret is configured, and the local default is public: \
                     set TALLY_DEPLOYMENT_SECRET_ARN (the template does)"
                        .to_owned(),
                );
            }
            Self::LocalDefault => {
                info!(
                    "deployment secret: the local default (set TALLY_DEPLOYMENT_SECRET_ARN on AWS)"
                );
                return Ok(DeploymentSecret::local());
            }
        };
        if use_ == SecretUse::Deployment {
            secret.check_deployment_grade().map_err(|weak| {
                format!("the deployment secret from {origin} cannot key a deployment: {weak}")
            })?;
        }
        info!("deployment secret read from {origin}");
        Ok(secret)
    }
}

/// The secret string of `secret_id` (a name or an ARN) in AWS Secrets Manager, or at
/// `endpoint` (a local stand-in).
pub async fn fetch(
    secret_id: &str,
    endpoint: Option<&str>,
    environment: AwsEnvironment,
) -> Result<DeploymentSecret, String> {
    let shared = aws::sdk_config(endpoint, Timeouts::default(), environment).await;
    let output = Client::new(&shared)
        .get_secret_value()
        .secret_id(secret_id)
        .send()
        .await
        .map_err(|e| {
            format!(
                "cannot read the deployment secret from Secrets Manager: {}",
                display_chain(&e)
            )
        })?;
    let text = output
        .secret_string()
        .ok_or("the deployment secret in Secrets Manager has no secret string")?;
    DeploymentSecret::new(text.as_bytes())
        .map_err(|e| format!("the deployment secret in Secrets Manager: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_domain::secret::LOCAL_DEPLOYMENT_SECRET;

    fn given(text: &str) -> SecretSource {
        SecretSource::Given(Given(text.to_owned()))
    }

    #[tokio::test]
    async fn a_deployment_starts_only_with_a_configured_secret_neither_public_nor_weak() {
        let strong = "Q3vXk9TzLw2RbN7mYc4HdJ8sFp6GaE1uVn5KtZq0WxBrMyCe2LoPiSgDhA7fUjT9";
        for (source, reason) in [
            (
                SecretSource::LocalDefault,
                "no deployment secret is configured",
            ),
            (given(LOCAL_DEPLOYMENT_SECRET), "public local default"),
            (given(&"a".repeat(32)), "distinct characters: 1,"),
            (
                given(&"abcdefghij".repeat(4)),
                "repeats its first 10 characters",
            ),
            (given("short"), "at least 32 bytes"),
        ] {
            let refused = source.load(SecretUse::Deployment).await.unwrap_err();
            assert!(refused.contains(reason), "{refused}");
            assert!(!refused.contains("aaaa") && !refused.contains("abcdefghij"));
        }
        assert!(given(strong).load(SecretUse::Deployment).await.is_ok());
        // Locally the default stays, and any secret long enough.
        for source in [
            SecretSource::LocalDefault,
            given(LOCAL_DEPLOYMENT_SECRET),
            given(&"a".repeat(32)),
        ] {
            assert!(source.load(SecretUse::Local).await.is_ok(), "{source:?}");
        }
        assert_eq!(SecretUse::on(Runtime::Lambda), SecretUse::Deployment);
        assert_eq!(SecretUse::on(Runtime::Local), SecretUse::Local);
    }

    #[tokio::test]
    async fn an_answer_that_does_not_parse_is_refused_without_its_body() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let body = r#"{"Name": "tally", "SecretString": "SEEDSEEDSEED", "VersionId": }"#;
        let app = axum::Router::new().fallback(move || async move { body });
        tokio::spawn(async move { axum::serve(listener, app).await });
        let refused = fetch("tally", Some(&endpoint), AwsEnvironment::default())
            .await
            .unwrap_err();
        assert!(!refused.contains("SEEDSEEDSEED"), "{refused}");
        assert!(refused.contains("unexpected token"), "{refused}");
    }
}
