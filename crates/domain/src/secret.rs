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

/// The fewest different bytes a deployment's secret holds. A random secret of 32 hex
/// digits has fewer once in about 30 million; one character repeated, or two, has.
pub const MIN_DISTINCT_BYTES: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the deployment secret must be at least {MIN_SECRET_BYTES} bytes")]
pub struct SecretTooShort;

/// Why a secret may not key a deployment, though it is long enough.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WeakSecret {
    #[error("it is the public local default, which protects nothing")]
    Public,
    #[error(
        "it has too little variety (distinct characters: {0}, fewer than {MIN_DISTINCT_BYTES})"
    )]
    FewCharacters(usize),
    #[error("it repeats its first {0} characters, so it is no longer than them")]
    Repeats(usize),
}

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

    /// Whether the secret may key a deployment: not the public local default, and not a
    /// guessable one, as one character repeated or a short block repeated is.
    pub fn check_deployment_grade(&self) -> Result<(), WeakSecret> {
        if *self.0 == *LOCAL_DEPLOYMENT_SECRET.as_bytes() {
            return Err(WeakSecret::Public);
        }
        let mut seen = [false; 256];
        for &byte in self.0.iter() {
            seen[usize::from(byte)] = true;
        }
        let distinct = seen.iter().filter(|&&seen| seen).count();
        if distinct < MIN_DISTINCT_BYTES {
            return Err(WeakSecret::FewCharacters(distinct));
        }
        let period = shortest_period(&self.0);
        if period <= self.0.len() / 2 {
            return Err(WeakSecret::Repeats(period));
        }
        Ok(())
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

/// The shortest `p` such that every byte equals the one `p` before it (the length itself
/// when nothing shorter repeats), from the longest border of the prefix function.
fn shortest_period(bytes: &[u8]) -> usize {
    let mut border = vec![0usize; bytes.len()];
    for i in 1..bytes.len() {
        let mut k = border[i - 1];
        while k > 0 && bytes[i] != bytes[k] {
            k = border[k - 1];
        }
        if bytes[i] == bytes[k] {
            k += 1;
        }
        border[i] = k;
    }
    bytes.len() - border.last().copied().unwrap_or(0)
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

    fn grade(text: &str) -> Result<(), WeakSecret> {
        DeploymentSecret::new(text.as_bytes())
            .unwrap()
            .check_deployment_grade()
    }

    #[test]
    fn a_deployment_refuses_the_local_default_and_secrets_of_little_variety() {
        assert_eq!(grade(LOCAL_DEPLOYMENT_SECRET), Err(WeakSecret::Public));
        assert_eq!(grade(&"a".repeat(32)), Err(WeakSecret::FewCharacters(1)));
        assert_eq!(grade(&"ab".repeat(16)), Err(WeakSecret::FewCharacters(2)));
        assert_eq!(
            grade("0123456701234567012345670123456701"),
            Err(WeakSecret::Repeats(8))
        );
        assert_eq!(
            grade(&"0123456789abcdef".repeat(2)),
            Err(WeakSecret::Repeats(16))
        );
        // As the template generates them, a hex key, and a passphrase of some length.
        for strong in [
            "Q3vXk9TzLw2RbN7mYc4HdJ8sFp6GaE1uVn5KtZq0WxBrMyCe2LoPiSgDhA7fUjT9",
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "correct horse battery staple, twice over",
        ] {
            assert_eq!(grade(strong), Ok(()), "{strong}");
        }
        // Not every repetition is a period: a secret may start as it ends.
        assert_eq!(shortest_period(b"abcdefgh-abcdefgh-abc"), 9);
        assert_eq!(shortest_period(b"abcdefghij"), 10);
    }
}
