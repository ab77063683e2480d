//! The deployment secret: one per deployment, kept outside the table, from which each use
//! derives a key of its own. What it protects, and from whom: docs/security.md.

use std::fmt;
use std::sync::Arc;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The shortest secret accepted, in bytes: 256 bits when each byte is random.
pub const MIN_SECRET_BYTES: usize = 32;

/// The secret of `make run` and the tests, when no other is configured. Public, so it
/// protects nothing: a deployment reads its own from AWS Secrets Manager.
pub const LOCAL_DEPLOYMENT_SECRET: &str = "tally-local-deployment-secret-not-for-production";

/// A deployment's secret. Never logged: its `Debug` hides it, and it has no `Display`.
#[derive(Clone)]
pub struct DeploymentSecret(Arc<[u8]>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the deployment secret must be at least {MIN_SECRET_BYTES} bytes")]
pub struct SecretTooShort;

impl DeploymentSecret {
    pub fn new(bytes: &[u8]) -> Result<Self, SecretTooShort> {
        if bytes.len() < MIN_SECRET_BYTES {
            return Err(SecretTooShort);
        }
        Ok(Self(bytes.into()))
    }

    /// [`LOCAL_DEPLOYMENT_SECRET`].
    pub fn local() -> Self {
        Self(LOCAL_DEPLOYMENT_SECRET.as_bytes().into())
    }

    /// The key of one use: HMAC-SHA-256 under the secret of the use's label (such as
    /// `token-fingerprint`) and its context (such as a draw id). Uses with different
    /// labels get unrelated keys, and none of them gives the secret away.
    pub fn derive(&self, label: &str, context: &[u8]) -> [u8; 32] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key");
        mac.update(b"tally/");
        mac.update(&(label.len() as u64).to_be_bytes());
        mac.update(label.as_bytes());
        mac.update(context);
        mac.finalize().into_bytes().into()
    }
}

impl fmt::Debug for DeploymentSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeploymentSecret(<secret>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_differ_by_secret_label_and_context_and_the_secret_stays_hidden() {
        let secret = DeploymentSecret::new(&[7; 32]).unwrap();
        let other = DeploymentSecret::new(&[8; 32]).unwrap();
        let key = secret.derive("token-fingerprint", b"summer");
        assert_eq!(key, secret.derive("token-fingerprint", b"summer"));
        assert_ne!(key, other.derive("token-fingerprint", b"summer"));
        assert_ne!(key, secret.derive("token-fingerprint", b"autumn"));
        assert_ne!(key, secret.derive("instant-win", b"summer"));
        // The label's length is part of the input: a label cannot borrow its context's
        // first bytes.
        assert_ne!(secret.derive("ab", b"c"), secret.derive("a", b"bc"));
        assert_eq!(DeploymentSecret::new(&[1; 31]).unwrap_err(), SecretTooShort);
        assert_eq!(format!("{secret:?}"), "DeploymentSecret(<secret>)");
        assert!(DeploymentSecret::new(LOCAL_DEPLOYMENT_SECRET.as_bytes()).is_ok());
    }
}
