//! The deployment secret, read once when a process that needs it starts (docs/security.md): from AWS
//! Secrets Manager when `TALLY_DEPLOYMENT_SECRET_ARN` names a secret (the template sets it
//! for the ticket functions, whose role alone may read it), else from
//! `TALLY_DEPLOYMENT_SECRET`, else the public local default of `make run` and the tests.

use aws_sdk_secretsmanager::Client;
use aws_sdk_secretsmanager::error::DisplayErrorContext;
use tracing::info;

use crate::aws::{self, AwsEnvironment, Timeouts};
use crate::domain::secret::DeploymentSecret;

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

    /// Reads the deployment secret from where it is.
    pub async fn load(&self) -> Result<DeploymentSecret, String> {
        match self {
            Self::SecretsManager {
                secret_id,
                endpoint,
                environment,
            } => {
                let secret = fetch(secret_id, endpoint.as_deref(), *environment).await?;
                info!("deployment secret read from AWS Secrets Manager");
                Ok(secret)
            }
            Self::Given(Given(text)) => {
                info!("deployment secret read from TALLY_DEPLOYMENT_SECRET");
                DeploymentSecret::new(text.as_bytes())
                    .map_err(|e| format!("TALLY_DEPLOYMENT_SECRET: {e}"))
            }
            Self::LocalDefault => {
                info!(
                    "deployment secret: the local default (set TALLY_DEPLOYMENT_SECRET_ARN on AWS)"
                );
                Ok(DeploymentSecret::local())
            }
        }
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
                DisplayErrorContext(e)
            )
        })?;
    let text = output
        .secret_string()
        .ok_or("the deployment secret in Secrets Manager has no secret string")?;
    DeploymentSecret::new(text.as_bytes())
        .map_err(|e| format!("the deployment secret in Secrets Manager: {e}"))
}
