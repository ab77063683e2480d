//! Logging for every binary: JSON on Lambda when its log format says so, text otherwise,
//! and never a secret at any level; the business metrics ([`metrics`]) go out through the
//! same writer, each document a JSON line of its own.
//!
//! At `TRACE` the AWS SDK logs the bodies of the requests it sends and the responses it
//! reads; a draw item's body holds the draw's secret permutation key. Those events are
//! dropped whatever `RUST_LOG` asks for: the SDK's `DEBUG` events and everything else
//! still get through.

pub mod metrics;

use std::fmt::Debug;
use std::io::{IsTerminal, Write};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::filter::{EnvFilter, FilterFn, LevelFilter};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, Registry};

/// Targets whose `TRACE` events carry request and response bodies.
const BODY_LOGGING_TARGETS: [&str; 2] = ["aws_smithy_", "aws_sdk_"];

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
    /// `AWS_LAMBDA_LOG_FORMAT=JSON` gives JSON; on Lambda (`AWS_LAMBDA_FUNCTION_NAME` set)
    /// otherwise text without time; elsewhere text, coloured only when stdout is a terminal
    /// (a log file or a pipe gets no escape codes).
    fn read(set: impl Fn(&str) -> Option<String>) -> Self {
        let lambda_format = set("AWS_LAMBDA_LOG_FORMAT").unwrap_or_default();
        if lambda_format.eq_ignore_ascii_case("json") {
            Self::Json
        } else if set("AWS_LAMBDA_FUNCTION_NAME").is_some() {
            Self::TextWithoutTime
        } else if std::io::stdout().is_terminal() {
            Self::TerminalText
        } else {
            Self::Text
        }
    }
}

/// What the environment says of logs and metrics ([`crate::settings::Settings::log`]).
#[derive(Clone, Debug)]
pub struct LogSettings {
    /// `AWS_LAMBDA_LOG_LEVEL`, else `RUST_LOG`.
    pub directives: Option<String>,
    pub format: LogFormat,
    /// `TALLY_METRICS_NAMESPACE`.
    pub metrics_namespace: Option<String>,
}

impl LogSettings {
    /// The settings `set` (the non-empty variables) gives.
    pub(crate) fn read(set: impl Fn(&str) -> Option<String>) -> Self {
        Self {
            directives: set("AWS_LAMBDA_LOG_LEVEL").or_else(|| set("RUST_LOG")),
            format: LogFormat::read(&set),
            metrics_namespace: set("TALLY_METRICS_NAMESPACE"),
        }
    }
}

/// Whether an event may be logged: nothing that may carry a request or response body.
fn without_bodies(metadata: &Metadata<'_>) -> bool {
    !(*metadata.level() == Level::TRACE
        && BODY_LOGGING_TARGETS
            .iter()
            .any(|target| metadata.target().starts_with(target)))
}

fn is_metrics_document(metadata: &Metadata<'_>) -> bool {
    metadata.target() == metrics::TARGET
}

/// Writes each metrics document as it is, alone on its line, whatever the log format and
/// level: CloudWatch extracts metrics only from a line that is the document itself.
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
/// syntax), without bodies, and every metrics document.
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
                    without_bodies(metadata) && !is_metrics_document(metadata)
                })),
        )
        .with(documents.with_filter(FilterFn::new(is_metrics_document)))
}

/// Installs the process's subscriber on stdout, at the level `settings` ask for, else
/// `default_level`; the metrics' namespace is theirs, else `Tally`.
pub fn init(settings: &LogSettings, default_level: &str) {
    if let Some(namespace) = &settings.metrics_namespace {
        metrics::set_namespace(namespace.clone());
    }
    let directives = settings.directives.as_deref().unwrap_or(default_level);
    subscriber(directives, settings.format, std::io::stdout).init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn sdk_trace_events_are_dropped_and_everything_else_is_kept() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = subscriber("trace", LogFormat::Json, move || writer.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::trace!(target: "aws_smithy_runtime::client::orchestrator", body = "SECRET", "received response");
            tracing::debug!(target: "aws_smithy_runtime::client::orchestrator", "beginning attempt #1");
            tracing::trace!(target: "tally::tickets", "our own trace");
        });
        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert!(!text.contains("SECRET"), "{text}");
        assert!(text.contains("beginning attempt #1"), "{text}");
        assert!(text.contains("our own trace"), "{text}");
    }

    fn text_lines(format: LogFormat) -> String {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = subscriber("info", format, move || writer.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(draw_id = "d1", "a warning");
        });
        String::from_utf8(captured.0.lock().unwrap().clone()).unwrap()
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
            let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
            assert_eq!(text, "{\"_aws\": {}}\n", "{format:?}");
        }
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
