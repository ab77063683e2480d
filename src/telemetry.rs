//! Logging for every binary: JSON on Lambda when its log format says so, text otherwise,
//! and never a secret at any level; the business metrics ([`metrics`]) go out through the
//! same writer, each document a JSON line of its own.
//!
//! At `TRACE` the libraries Tally runs on log what passes through them: `lambda_runtime`
//! every raw event (a purchase's token and payer id, a caller's `authorization` and
//! `x-amz-security-token` headers, a stream record's draw item with its seed and
//! permutation key), the AWS SDK (`aws_smithy_*`, `aws_sdk_*`) the bodies of its requests
//! and responses, `aws_sigv4` the requests it signs. At `DEBUG` they log events, attempts
//! and connections, not contents (h2 leaves header fields out of its frames; hyper logs
//! nothing unless built with its unstable tracing; rustls, through the `log` bridge, its
//! handshake steps). So the rule, whatever `RUST_LOG` asks for: only Tally's own targets
//! (`tally`, `tally::*`) log at `TRACE`; every other target logs at `DEBUG` at most, a
//! dependency added later included.
//!
//! Tally's level is `RUST_LOG` alone. Lambda's application log level
//! (`AWS_LAMBDA_LOG_LEVEL`) is a second filter, applied by Lambda to the JSON lines, that
//! reads a line without a `level` member as `INFO`: a metrics document, which must be the
//! line itself, is dropped above `INFO`. So the template pins that level at `TRACE`
//! (Lambda drops nothing) and Tally does not read it.

pub mod metrics;

use std::fmt::Debug;
use std::io::{IsTerminal, Write};

use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::filter::{EnvFilter, FilterFn, LevelFilter};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, Registry};

use crate::aws::Runtime;

/// Tally's own target: its modules' paths start with it.
const OWN_TARGET: &str = "tally";

/// The most verbose level of any other target's events.
const OTHERS_MOST_VERBOSE: LevelFilter = LevelFilter::DEBUG;

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line (Lambda's `JSON` log format).
    Json,
    /// Plain text with a timestamp.
    Text,
    /// Plain text with a timestamp and colours, for a person at a terminal.
    TerminalText,
    /// Plain text without a timestamp (Lambda's `Text` format adds its own).
    TextWithoutTime,
}

impl LogFormat {
    /// `AWS_LAMBDA_LOG_FORMAT=JSON` gives JSON; on Lambda otherwise text without time;
    /// elsewhere text, coloured only when stdout is a terminal (a log file or a pipe gets
    /// no escape codes).
    fn read(set: impl Fn(&str) -> Option<String>, runtime: Runtime) -> Self {
        let lambda_format = set("AWS_LAMBDA_LOG_FORMAT").unwrap_or_default();
        if lambda_format.eq_ignore_ascii_case("json") {
            Self::Json
        } else if runtime == Runtime::Lambda {
            Self::TextWithoutTime
        } else if std::io::stdout().is_terminal() {
            Self::TerminalText
        } else {
            Self::Text
        }
    }
}

/// What the environment says of logs and metrics (`Settings::log`).
#[derive(Clone, Debug)]
pub struct LogSettings {
    /// `RUST_LOG`.
    pub directives: Option<String>,
    pub format: LogFormat,
    /// `TALLY_METRICS_NAMESPACE`.
    pub metrics_namespace: Option<String>,
    /// Whether requests write their metrics documents: on Lambda; elsewhere when asked
    /// (`tally serve --metrics`).
    pub metrics_lines: bool,
}

impl LogSettings {
    /// The settings `set` (the non-empty variables) gives.
    pub(crate) fn read(set: impl Fn(&str) -> Option<String>, runtime: Runtime) -> Self {
        Self {
            directives: set("RUST_LOG"),
            format: LogFormat::read(&set, runtime),
            metrics_namespace: set("TALLY_METRICS_NAMESPACE"),
            metrics_lines: runtime == Runtime::Lambda,
        }
    }
}

/// Whether an event may be logged: any of Tally's own, another target's up to
/// [`OTHERS_MOST_VERBOSE`], as its `TRACE` events may carry what passed through it.
fn may_log(metadata: &Metadata<'_>) -> bool {
    let target = metadata.target();
    let own = target
        .strip_prefix(OWN_TARGET)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"));
    own || OTHERS_MOST_VERBOSE >= *metadata.level()
}

fn is_metrics_document(metadata: &Metadata<'_>) -> bool {
    metadata.target() == metrics::TARGET
}

/// Writes each metrics document as it is, alone on its line, whatever Tally's log format
/// and level: CloudWatch extracts metrics only from a line that is the document itself.
/// Lambda reads the line as `INFO` (it has no `level`), so its application log level
/// must stay at `INFO` or below (the template pins `TRACE`).
struct MetricsLines<W> {
    writer: W,
}

impl<S, W> Layer<S> for MetricsLines<W>
where
    S: Subscriber,
    W: for<'a> MakeWriter<'a> + 'static,
{
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        let mut document = Document(None);
        event.record(&mut document);
        if let Some(mut line) = document.0 {
            line.push('\n');
            // One write, so that concurrent lines do not interleave.
            let _ = self.writer.make_writer().write_all(line.as_bytes());
        }
    }
}

/// The `emf` field of a metrics event.
struct Document(Option<String>);

impl Visit for Document {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "emf" {
            self.0 = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, _field: &Field, _value: &dyn Debug) {}
}

/// A subscriber writing to `writer` at the levels `directives` asks for (`RUST_LOG`
/// syntax), other targets than Tally's at `DEBUG` at most, and every metrics document.
pub fn subscriber<W>(
    directives: &str,
    format: LogFormat,
    writer: W,
) -> impl Subscriber + Send + Sync + 'static
where
    W: for<'a> MakeWriter<'a> + Clone + Send + Sync + 'static,
{
    let documents = MetricsLines {
        writer: writer.clone(),
    };
    let filter = EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .parse_lossy(directives);
    let fmt = tracing_subscriber::fmt::layer()
        .with_target(false)
        .with_ansi(format == LogFormat::TerminalText)
        .with_writer(writer);
    let fmt = match format {
        LogFormat::Json => fmt.json().boxed(),
        LogFormat::Text | LogFormat::TerminalText => fmt.boxed(),
        LogFormat::TextWithoutTime => fmt.without_time().boxed(),
    };
    Registry::default()
        .with(
            fmt.with_filter(filter)
                .with_filter(FilterFn::new(|metadata| {
                    may_log(metadata) && !is_metrics_document(metadata)
                })),
        )
        .with(documents.with_filter(FilterFn::new(is_metrics_document)))
}

/// Installs the process's subscriber on stdout, at the level `settings` ask for, else
/// `default_level`, and the metrics' recorder if `settings` say so, in their namespace,
/// else `Tally`.
pub fn init(settings: &LogSettings, default_level: &str) {
    let directives = settings.directives.as_deref().unwrap_or(default_level);
    subscriber(directives, settings.format, std::io::stdout).init();
    if settings.metrics_lines {
        let namespace = settings.metrics_namespace.as_deref();
        metrics::install(namespace.unwrap_or(metrics::DEFAULT_NAMESPACE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_testkit::logs::Captured;

    #[test]
    fn only_tallys_own_targets_log_at_trace_and_the_others_up_to_debug() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = subscriber("trace", LogFormat::Json, move || writer.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::trace!(target: "aws_smithy_runtime::client::orchestrator", body = "SECRET-1", "received response");
            tracing::trace!(target: "lambda_runtime::layers::api_response", body = "SECRET-2", "raw JSON event received from Lambda");
            tracing::trace!(target: "aws_sigv4::http_request::sign", "SECRET-3");
            // A crate nobody has read yet, and one whose name merely starts like Tally's.
            tracing::trace!(target: "some_new_dependency", "SECRET-4");
            tracing::trace!(target: "tallyho::client", "SECRET-5");
            tracing::debug!(target: "aws_smithy_runtime::client::orchestrator", "beginning attempt #1");
            tracing::debug!(target: "some_new_dependency", "a new dependency's debug line");
            tracing::trace!(target: "tally::tickets", "our own trace");
            tracing::trace!(target: "tally", "our crate's trace");
        });
        let text = captured.text();
        assert!(!text.contains("SECRET"), "{text}");
        for kept in [
            "beginning attempt #1",
            "a new dependency's debug line",
            "our own trace",
            "our crate's trace",
        ] {
            assert!(text.contains(kept), "{kept}: {text}");
        }
    }

    fn text_lines(format: LogFormat) -> String {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = subscriber("info", format, move || writer.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(draw_id = "d1", "a warning");
        });
        captured.text()
    }

    #[test]
    fn a_metrics_document_is_a_line_of_its_own_at_any_level_and_in_any_format() {
        for format in [LogFormat::Json, LogFormat::Text] {
            let captured = Captured::default();
            let writer = captured.clone();
            let subscriber = subscriber("error", format, move || writer.clone());
            tracing::subscriber::with_default(subscriber, || {
                tracing::info!(target: metrics::TARGET, emf = r#"{"_aws": {}}"#);
                tracing::info!("not at this level");
            });
            let text = captured.text();
            assert_eq!(text, "{\"_aws\": {}}\n", "{format:?}");
        }
    }

    /// The directives Tally takes on Lambda from `variables`.
    fn directives_on_lambda(variables: &[(&str, &str)]) -> Option<String> {
        let set = |name: &str| {
            let found = variables.iter().find(|(set, _)| *set == name);
            found.map(|(_, value)| (*value).to_owned())
        };
        LogSettings::read(set, Runtime::Lambda).directives
    }

    #[test]
    fn tallys_level_is_rust_log_never_lambdas_application_log_level() {
        let pinned = [("AWS_LAMBDA_LOG_LEVEL", "TRACE"), ("RUST_LOG", "warn")];
        assert_eq!(directives_on_lambda(&pinned).as_deref(), Some("warn"));
        assert_eq!(
            directives_on_lambda(&[("AWS_LAMBDA_LOG_LEVEL", "TRACE")]),
            None
        );
    }

    #[test]
    fn text_logs_carry_colour_codes_only_for_a_terminal() {
        for format in [LogFormat::Text, LogFormat::TextWithoutTime, LogFormat::Json] {
            let text = text_lines(format);
            assert!(text.contains("a warning"), "{text}");
            assert!(!text.contains('\x1b'), "{format:?}: {text:?}");
        }
        assert!(text_lines(LogFormat::TerminalText).contains('\x1b'));
    }
}
