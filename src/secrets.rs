//! The deployment secret, read once when a process starts (docs/security.md): from AWS
//! Secrets Manager when `TALLY_DEPLOYMENT_SECRET_ARN` names a secret (the template sets it
//! for the ticket functions, whose role alone may read it), else from
//! `TALLY_DEPLOYMENT_SECRET`, else the public local default of `make run` and the tests.

use aws_sdk_secretsmanager::Client;
use aws_sdk_secretsmanager::error::DisplayErrorContext;
use tracing::info;

use crate::aws::{self, Timeouts};
use crate::domain::secret::DeploymentSecret;

/// Reads the deployment secret as the environment says.
pub async fn deployment_secret_from_env() -> Result<DeploymentSecret, String> {
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if let Some(secret_id) = set("TALLY_DEPLOYMENT_SECRET_ARN") {
        let endpoint = set("SECRETSMANAGER_ENDPOINT");
        let secret = fetch(&secret_id, endpoint.as_deref()).await?;
        info!("deployment secret read from AWS Secrets Manager");
        return Ok(secret);
    }
    if let Some(text) = set("TALLY_DEPLOYMENT_SECRET") {
        info!("deployment secret read from TALLY_DEPLOYMENT_SECRET");
        return DeploymentSecret::new(text.as_bytes())
            .map_err(|e| format!("TALLY_DEPLOYMENT_SECRET: {e}"));
    }
    info!("deployment secret: the local default (set TALLY_DEPLOYMENT_SECRET_ARN on AWS)");
    Ok(DeploymentSecret::local())
}

/// The secret string of `secret_id` (a name or an ARN) in AWS Secrets Manager, or at
/// `endpoint` (a local stand-in).
pub async fn fetch(secret_id: &str, endpoint: Option<&str>) -> Result<DeploymentSecret, String> {
    let shared = aws::sdk_config(endpoint, Timeouts::default()).await;
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
