//! Each request ends by writing the business metrics into the logs in CloudWatch's
//! Embedded Metric Format: the lines are read back here and their names, units,
//! dimensions and values checked against what the request did. Logging and the metrics'
//! recorder are state of the whole process, so this test runs in a process of its own,
//! with both installed before anything logs or counts.

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use axum::http::{Method, StatusCode};
use futures::future::join_all;
use jiff::Timestamp;
use serde_json::{Value, json};
use tally::api::{self, AppState};
use tally::orders::OrderService;
use tally::queue::handle_delivery;
use tally::store::{AwsEnvironment, RequestCounter, Store, StoreConfig, Timeouts};
use tally::telemetry::metrics::{self, ALL, DEFAULT_NAMESPACE};
use tally::telemetry::{self, LogFormat};
use tally_domain::ids::SeriesId;
use tally_domain::series::{Period, Reset};
use tally_domain::time::Epoch;
use tally_testkit::http::send_json;
use tally_testkit::logs::{Captured, capture_logs};

/// A dimension's name and value.
type Dimension = Option<(String, String)>;

/// What one request wrote: its metrics by name (with their dimension, if any), and the
/// DynamoDB requests it sent as the SDK counted them.
struct Written {
    status: StatusCode,
    metrics: BTreeMap<String, (Dimension, u64)>,
    text: String,
    attempts: u64,
}

struct World {
    captured: Captured,
    counter: RequestCounter,
}

impl World {
    async fn call(&self, router: &axum::Router, method: &str, path: &str, body: Value) -> Written {
        // What the test's own steps counted (a fresh table, another writer's lease) is
        // written apart, as nothing counts between two events on Lambda.
        metrics::written_after(async {}).await;
        let start = self.captured.text().len();
        let before = self.counter.get();
        let status = send_json(router, method.parse().unwrap(), path, &body)
            .await
            .status;
        let text = self.captured.text()[start..].to_owned();
        let mut metrics = BTreeMap::new();
        for line in text.lines().filter(|l| l.contains("\"_aws\"")) {
            for (name, dimension, value) in read_document(line) {
                let previous = metrics.insert(name.clone(), (dimension, value));
                assert!(previous.is_none(), "{name} twice in one request: {text}");
            }
        }
        Written {
            status,
            metrics,
            text,
            attempts: self.counter.get() - before,
        }
    }
}

/// The metrics of one document, checked against the specification and the declarations.
fn read_document(line: &str) -> Vec<(String, Dimension, u64)> {
    let document: Value = serde_json::from_str(line).expect("a metrics line is a JSON object");
    let aws = &document["_aws"];
    assert!(
        aws["Timestamp"].as_u64().unwrap() > 1_700_000_000_000,
        "{line}"
    );
    let directives = aws["CloudWatchMetrics"].as_array().unwrap();
    assert_eq!(directives.len(), 1, "{line}");
    let directive = &directives[0];
    assert_eq!(directive["Namespace"], DEFAULT_NAMESPACE, "{line}");
    let keys: Vec<&str> = directive["Dimensions"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let dimension = keys.first().map(|key| {
        let value = document[key]
            .as_str()
            .expect("a dimension's value is a member");
        ((*key).to_owned(), value.to_owned())
    });
    directive["Metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|definition| {
            let name = definition["Name"].as_str().unwrap();
            let declared = ALL
                .iter()
                .find(|d| d.name == name)
                .unwrap_or_else(|| panic!("{name} is not declared"));
            assert_eq!(definition["Unit"], format!("{:?}", declared.unit), "{line}");
            assert_eq!(declared.dimension, keys.first().copied(), "{line}");
            let value = document[name]
                .as_u64()
                .expect("a metric's value is a member");
            (name.to_owned(), dimension.clone(), value)
        })
        .collect()
}

/// The sum of one metric over every document of `text`.
fn total(text: &str, metric: &str) -> u64 {
    text.lines()
        .filter(|l| l.contains("\"_aws\""))
        .flat_map(read_document)
        .filter(|(name, _, _)| name == metric)
        .map(|(_, _, value)| value)
        .sum()
}

fn plain(value: u64) -> (Dimension, u64) {
    (None, value)
}

fn split(key: &str, value: &str, count: u64) -> (Dimension, u64) {
    (Some((key.to_owned(), value.to_owned())), count)
}

#[tokio::test]
async fn each_request_logs_what_it_did_as_embedded_metrics() {
    let captured = capture_logs(|writer| {
        telemetry::subscriber("info", LogFormat::Json, move || writer.clone())
    });
    metrics::install(DEFAULT_NAMESPACE);
    let counter = RequestCounter::default();
    let (store, _table) = support::fresh_store(Some(counter.clone())).await;
    let router = api::router(AppState::new(store.clone()));
    let world = World { captured, counter };

    let created = world
        .call(
            &router,
            "POST",
            "/draws",
            json!({"draw_id": "m", "total_tickets": 50}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert!(created.attempts > 0);
    assert_eq!(
        created.metrics,
        BTreeMap::from([("DynamoDbAttempts".into(), plain(created.attempts))])
    );

    let purchase =
        json!({"payment_id": "pay-secret", "quantity": 3, "payer_id": "ann", "token": "4321"});
    let bought = world
        .call(&router, "POST", "/draws/m/purchases", purchase.clone())
        .await;
    assert_eq!(bought.status, StatusCode::CREATED);
    assert_eq!(
        bought.metrics,
        BTreeMap::from([
            ("TicketsSold".into(), plain(3)),
            ("Purchases".into(), plain(1)),
            ("DynamoDbAttempts".into(), plain(bought.attempts)),
        ])
    );
    // Metrics carry counts, never what a request carried.
    let documents: String = bought
        .text
        .lines()
        .filter(|l| l.contains("\"_aws\""))
        .collect();
    for carried in ["pay-secret", "ann", "4321", "\"m\""] {
        assert!(!documents.contains(carried), "{carried} in {documents}");
    }

    // A replay sells nothing.
    let replayed = world
        .call(&router, "POST", "/draws/m/purchases", purchase)
        .await;
    assert_eq!(replayed.status, StatusCode::OK);
    assert!(!replayed.metrics.contains_key("TicketsSold"));
    assert!(!replayed.metrics.contains_key("Purchases"));

    for (series, gapless) in [("F", false), ("G", true)] {
        let defined = world
            .call(
                &router,
                "PUT",
                &format!("/series/{series}"),
                json!({"format": format!("{series}{{seq:4}}"), "reset": "never", "gapless": gapless}),
            )
            .await;
        assert_eq!(defined.status, StatusCode::CREATED);
    }
    let batch = json!({"series": "F", "source": "shop", "orders": [
        {"external_ref": "a"}, {"external_ref": "b"}, {"external_ref": 5}]});
    let fast = world.call(&router, "POST", "/orders/batch", batch).await;
    assert_eq!(fast.status, StatusCode::OK);
    assert_eq!(fast.metrics["OrdersNumbered"], split("Mode", "fast", 2));

    // Another writer holds the gapless counter for a moment: the order waits for it.
    let now = Timestamp::now().epoch_millis();
    let period = Period::parse(Reset::Never, "all").unwrap();
    store
        .lease_counter(
            &SeriesId::parse("G").unwrap(),
            &period,
            "other",
            1,
            now,
            now + 300,
        )
        .await
        .unwrap();
    let order = json!({"series": "G", "source": "shop", "external_ref": "c"});
    let waited = world.call(&router, "POST", "/orders", order).await;
    assert_eq!(waited.status, StatusCode::CREATED, "{}", waited.text);
    assert_eq!(
        waited.metrics["OrdersNumbered"],
        split("Mode", "gapless", 1)
    );
    let (dimension, wait) = &waited.metrics["GaplessLeaseWait"];
    assert!(dimension.is_none());
    assert!((1..5_000).contains(wait), "waited {wait} ms");
    assert_eq!(waited.metrics["DynamoDbAttempts"], plain(waited.attempts));

    // A request that outlives its timeout answers 503 outcome_unknown, counted by code.
    let mut hurried = AppState::new(store.clone());
    hurried.request_timeout = Duration::ZERO;
    let timed_out = world
        .call(&api::router(hurried), "GET", "/draws/m", json!({}))
        .await;
    assert_eq!(timed_out.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        timed_out.metrics["ServiceUnavailable"],
        split("Code", "outcome_unknown", 1)
    );

    // A request DynamoDB refuses (a table that is not there, as a permission the function
    // lacks would be) answers 500 internal_error, counted by code.
    let config = StoreConfig::new(
        "no-such-table",
        Some(tally_testkit::dynamodb::endpoint()),
        Timeouts::default(),
        AwsEnvironment::default(),
    )
    .unwrap();
    let tableless = AppState::new(Store::connect(&config, None).await);
    let refused = world
        .call(&api::router(tableless), "GET", "/draws/m", json!({}))
        .await;
    assert_eq!(
        refused.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{}",
        refused.text
    );
    assert_eq!(
        refused.metrics["InternalErrors"],
        split("Code", "internal_error", 1)
    );
    assert!(!refused.metrics.contains_key("ServiceUnavailable"));

    // Requests side by side (the local server; Lambda hands a process one at a time) may
    // share a document, but each count is written once.
    let start = world.captured.text().len();
    let buyers = (0..8).map(|i| {
        let body = json!({"payment_id": format!("pay-{i}"), "quantity": 2, "payer_id": format!("buyer-{i}")});
        let router = router.clone();
        async move { send_json(&router, Method::POST, "/draws/m/purchases", &body).await.status }
    });
    for status in join_all(buyers).await {
        assert_eq!(status, StatusCode::CREATED);
    }
    let text = &world.captured.text()[start..];
    assert_eq!(total(text, "TicketsSold"), 16, "{text}");
    assert_eq!(total(text, "Purchases"), 8, "{text}");

    // An import message put back because DynamoDB did not answer counts as the 503 an
    // answer would have been, so the same alarms see it.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let config = StoreConfig::new(
        "unreachable",
        Some(format!("http://127.0.0.1:{port}")),
        Timeouts::default(),
        AwsEnvironment::default(),
    )
    .unwrap();
    let unreachable = OrderService::new(Store::connect(&config, None).await);
    let mut message = SqsMessage::default();
    message.message_id = Some("held-back".into());
    message.body = Some(json!({"series": "G", "source": "shop", "external_ref": "d"}).to_string());
    let mut delivery = SqsEvent::default();
    delivery.records = vec![message];
    let start = world.captured.text().len();
    let answer = metrics::written_after(handle_delivery(&unreachable, delivery, None)).await;
    let failed: Vec<&str> = answer
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.as_str())
        .collect();
    assert_eq!(failed, ["held-back"]);
    let text = &world.captured.text()[start..];
    let counted: Vec<_> = text
        .lines()
        .filter(|l| l.contains("\"_aws\""))
        .flat_map(read_document)
        .filter(|(name, _, _)| name == "ServiceUnavailable")
        .collect();
    let expected = split("Code", "outcome_unknown", 1);
    assert_eq!(
        counted,
        [("ServiceUnavailable".into(), expected.0, expected.1)],
        "{text}"
    );

    // What an import drops for good, a message that is no order request and an invalid
    // order of a batch, is counted by kind.
    let bodies = [
        "not an order".to_owned(),
        json!({"series": "F", "source": "shop", "orders": [
            {"external_ref": "e"}, {"external_ref": 7}]})
        .to_string(),
    ];
    let mut delivery = SqsEvent::default();
    delivery.records = bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let mut message = SqsMessage::default();
            message.message_id = Some(format!("dropped-{i}"));
            message.body = Some(body.clone());
            message
        })
        .collect();
    let start = world.captured.text().len();
    let orders = OrderService::new(store.clone());
    let answer = metrics::written_after(handle_delivery(&orders, delivery, None)).await;
    assert!(answer.batch_item_failures.is_empty());
    let text = &world.captured.text()[start..];
    let mut rejected: Vec<_> = text
        .lines()
        .filter(|l| l.contains("\"_aws\""))
        .flat_map(read_document)
        .filter(|(name, _, _)| name == "ImportRejected")
        .map(|(_, dimension, value)| (dimension, value))
        .collect();
    rejected.sort();
    assert_eq!(
        rejected,
        [split("Kind", "message", 1), split("Kind", "order", 1)],
        "{text}"
    );
}
