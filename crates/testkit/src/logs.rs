//! What the tests that read log lines share: a writer that keeps them in memory, a
//! subscriber installed with it for the whole process (logging is state of the whole
//! process, so each such test runs in a process of its own), and the forms a secret takes
//! in a line.

use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use tracing::Subscriber;

/// Log lines written by the subscriber.
#[derive(Clone, Debug, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// Installs for the whole process, before anything logs, the subscriber that `subscriber`
/// makes to write to a [`Captured`]; returns what it writes.
pub fn capture_logs<S>(subscriber: impl FnOnce(Captured) -> S) -> Captured
where
    S: Subscriber + Send + Sync + 'static,
{
    let captured = Captured::default();
    tracing::subscriber::set_global_default(subscriber(captured.clone())).unwrap();
    captured
}

/// The forms a secret could take in a log line or an answer: hex in either case, base64
/// (as DynamoDB's JSON writes a binary attribute) and the start of a byte list (as `Debug`
/// prints one).
pub fn forms(secret: &[u8]) -> Vec<String> {
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    let listed = format!("{:?}", &secret[..6])
        .trim_end_matches(']')
        .to_owned();
    vec![
        hex.clone(),
        hex.to_uppercase(),
        STANDARD.encode(secret),
        listed,
    ]
}
