//! The timeouts of template.yaml against the service's own: each function that serves
//! HTTP must answer its `503` before its own timeout cuts it off and before API
//! Gateway's 30 s, and must give one DynamoDB call its whole budget; the queue's
//! visibility timeout must cover retries of the import function and its batching window. docs/operations.md
//! gives each default and what the template sets instead. A timeout changed in one place
//! and not the others fails here.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use tally::api::GATEWAY_WAIT;
use tally::aws::Timeouts;
use tally::settings::{DEFAULT_BODY_TIMEOUT, DEFAULT_DRAWING_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};

const TEMPLATE: &str = include_str!("../template.yaml");
const OPERATIONS: &str = include_str!("../docs/operations.md");

/// What a function needs after its deadline to write the `503` and hand it back.
const ANSWER_ROOM: Duration = Duration::from_secs(2);

/// The settings of one function (or of `Globals`) that matter here.
#[derive(Debug, Default, Clone)]
struct Function {
    timeout: Option<Duration>,
    variables: HashMap<String, String>,
}

/// What the template sets that matters here.
struct Template {
    globals: Function,
    functions: HashMap<String, Function>,
    /// Each queue's visibility timeout.
    visibility: HashMap<String, Duration>,
    /// Each event source mapping's batching window.
    batching_window: HashMap<String, Duration>,
}

/// `Globals.Function` and each resource, by name, read from the file's layout: resources
/// and `Function` of `Globals` at an indent of two, their properties below.
fn template() -> Template {
    let (mut globals, mut functions) = (Function::default(), HashMap::new());
    let (mut visibility, mut batching_window) = (HashMap::new(), HashMap::new());
    let (mut section, mut resource) = (String::new(), String::new());
    for line in TEMPLATE.lines() {
        let indent = line.len() - line.trim_start().len();
        let text = line.trim();
        if text.starts_with('#') || text.is_empty() {
            continue;
        }
        if indent == 0 {
            section = text.trim_end_matches(':').to_owned();
            continue;
        }
        if indent == 2 && text.ends_with(':') {
            resource = text.trim_end_matches(':').to_owned();
            continue;
        }
        let Some((name, value)) = text.split_once(": ") else {
            continue;
        };
        let target = match (section.as_str(), resource.as_str()) {
            ("Globals", "Function") => &mut globals,
            ("Resources", function) if function.ends_with("Function") => {
                functions.entry(function.to_owned()).or_default()
            }
            ("Resources", queue) if name == "VisibilityTimeout" => {
                visibility.insert(queue.to_owned(), seconds(value));
                continue;
            }
            ("Resources", mapping) if name == "MaximumBatchingWindowInSeconds" => {
                batching_window.insert(mapping.to_owned(), seconds(value));
                continue;
            }
            _ => continue,
        };
        match name {
            "Timeout" => target.timeout = Some(seconds(value)),
            variable if variable.ends_with("_TIMEOUT_MS") => {
                target
                    .variables
                    .insert(variable.to_owned(), value.to_owned());
            }
            _ => {}
        }
    }
    Template {
        globals,
        functions,
        visibility,
        batching_window,
    }
}

fn seconds(value: &str) -> Duration {
    Duration::from_secs(value.parse().expect("a timeout in whole seconds"))
}

fn millis(value: &str) -> Duration {
    Duration::from_millis(value.parse().expect("a timeout in milliseconds"))
}

/// A function's timeout and the value of `variable` (its own, else the global one, else
/// `default`).
fn effective(name: &str, variable: &str, default: Duration) -> (Duration, Duration) {
    let Template {
        globals, functions, ..
    } = template();
    let function = functions
        .get(name)
        .unwrap_or_else(|| panic!("template.yaml has no {name}"));
    let timeout = function
        .timeout
        .or(globals.timeout)
        .expect("a function timeout");
    let deadline = function
        .variables
        .get(variable)
        .or_else(|| globals.variables.get(variable))
        .map_or(default, |v| millis(v));
    (timeout, deadline)
}

#[test]
fn the_global_request_deadline_is_the_services_default() {
    let Template { globals, .. } = template();
    assert_eq!(
        globals
            .variables
            .get("TALLY_REQUEST_TIMEOUT_MS")
            .map(|v| millis(v)),
        Some(DEFAULT_REQUEST_TIMEOUT)
    );
}

#[test]
fn each_http_function_answers_before_its_timeout_and_the_gateways() {
    let dynamodb = Timeouts::default().operation;
    for (function, variable, default) in [
        (
            "TicketsFunction",
            "TALLY_REQUEST_TIMEOUT_MS",
            DEFAULT_REQUEST_TIMEOUT,
        ),
        (
            "DrawingFunction",
            "TALLY_DRAWING_TIMEOUT_MS",
            DEFAULT_DRAWING_TIMEOUT,
        ),
        (
            "OrdersFunction",
            "TALLY_REQUEST_TIMEOUT_MS",
            DEFAULT_REQUEST_TIMEOUT,
        ),
    ] {
        let (timeout, deadline) = effective(function, variable, default);
        assert!(
            deadline + ANSWER_ROOM <= timeout,
            "{function}: a {deadline:?} deadline leaves no room to answer within {timeout:?}"
        );
        assert!(
            timeout < GATEWAY_WAIT,
            "{function}: {timeout:?} outlasts API Gateway's {GATEWAY_WAIT:?}"
        );
        assert!(
            dynamodb < deadline,
            "{function}: one DynamoDB call ({dynamodb:?}) outlasts the {deadline:?} deadline"
        );
    }
}

#[test]
fn the_stream_and_queue_functions_outlast_a_dynamodb_call() {
    let Template {
        globals,
        functions,
        visibility,
        batching_window,
    } = template();
    let dynamodb = Timeouts::default().operation;
    for name in ["ImportFunction", "EventsFunction"] {
        let timeout = functions[name].timeout.or(globals.timeout).unwrap();
        assert!(dynamodb < timeout, "{name}: {timeout:?}");
    }
    // AWS asks for a visibility timeout of at least six times the function's timeout plus
    // the mapping's batching window, so that a batch retried by Lambda, or still being
    // gathered, is not delivered a second time meanwhile.
    let import = functions["ImportFunction"].timeout.unwrap();
    let window = batching_window["ImportEventSource"];
    assert!(
        visibility["ImportQueue"] >= import * 6 + window,
        "{visibility:?}, a batching window of {window:?}"
    );
}

/// The `default` cell of `variable`'s row in operations.md's table of timeouts.
fn documented_default(variable: &str) -> &'static str {
    let row = format!("| `{variable}` |");
    OPERATIONS
        .lines()
        .find_map(|line| line.strip_prefix(row.as_str()))
        .and_then(|rest| rest.split('|').next())
        .map(str::trim)
        .unwrap_or_else(|| panic!("operations.md has no row for {variable}"))
}

/// A figure of milliseconds as the docs write it: `12,000`.
fn documented_millis(figure: &str) -> Duration {
    millis(&figure.replace(',', ""))
}

/// The functions a default cell says the template sets otherwise: "sets 25,000 for
/// `OrdersFunction`", with the value it gives.
fn documented_overrides(cell: &str) -> BTreeSet<(String, Duration)> {
    cell.split("sets ")
        .skip(1)
        .map(|said| {
            let (figure, rest) = said.split_once(" for `").expect("sets N for `Function`");
            let name = rest.split('`').next().unwrap();
            (name.to_owned(), documented_millis(figure))
        })
        .collect()
}

#[test]
fn operations_md_gives_each_default_and_each_function_the_template_sets_otherwise() {
    let dynamodb = Timeouts::default();
    let Template { functions, .. } = template();
    for (variable, default) in [
        ("DYNAMODB_CONNECT_TIMEOUT_MS", dynamodb.connect),
        ("DYNAMODB_ATTEMPT_TIMEOUT_MS", dynamodb.attempt),
        ("DYNAMODB_OPERATION_TIMEOUT_MS", dynamodb.operation),
        ("TALLY_REQUEST_TIMEOUT_MS", DEFAULT_REQUEST_TIMEOUT),
        ("TALLY_DRAWING_TIMEOUT_MS", DEFAULT_DRAWING_TIMEOUT),
        ("TALLY_BODY_READ_TIMEOUT_MS", DEFAULT_BODY_TIMEOUT),
    ] {
        let cell = documented_default(variable);
        let figure = cell.split([' ', ';']).next().unwrap();
        assert_eq!(documented_millis(figure), default, "{variable}: {cell}");
        let set_otherwise: BTreeSet<_> = functions
            .iter()
            .filter_map(|(name, function)| {
                let value = millis(function.variables.get(variable)?);
                (value != default).then(|| (name.clone(), value))
            })
            .collect();
        assert_eq!(
            documented_overrides(cell),
            set_otherwise,
            "{variable}: {cell}"
        );
    }
}
