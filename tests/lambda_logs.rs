//! E2 on Lambda: no function logs a secret, even at `AWS_LAMBDA_LOG_LEVEL=TRACE`. Each binary of
//! `src/bin/` runs here as Lambda runs it ([`tally_testkit::lambda_harness`]), on an event that
//! carries secrets, and its whole output is searched for them. The ticket function gets a
//! purchase with a token and a payer id, sent with a caller's signature and session token;
//! the order function a signed request; the events function a stream record of a draw
//! item, seed and permutation key included; the import function a delivery. None may log
//! what it was given, nor its own AWS credentials or the deployment secret.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::types::AttributeValue;
use axum::body::Bytes;
use axum::http::StatusCode;
use serde_json::{Value, json};
use tally::api::{self, AppState};
use tally::store::Store;
use tally_domain::ids::DrawId;
use tally_testkit::dynamodb::{attr_b, item};
use tally_testkit::http::{post_json, put_json};
use tally_testkit::lambda_harness::bootstrap::FunctionEnv;
use tally_testkit::lambda_harness::{generated_secret, invoke};
use tally_testkit::logs::forms;

/// How long a function may take to start, answer, or poll again.
const PATIENCE: Duration = Duration::from_secs(60);

/// What a caller signs an API Gateway request with; never to be logged.
struct Signed {
    signature: String,
    session_token: String,
}

impl Signed {
    fn new() -> Self {
        let signature: String = generated_secret()
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect();
        Self {
            signature: signature[..64].to_owned(),
            session_token: format!("IQoJb3JpZ2luX2VjE{}", generated_secret()),
        }
    }
}

/// An API Gateway (HTTP API) event of `method path` with `body`, signed by an IAM caller.
fn http_event(method: &str, path: &str, body: &Value, signed: &Signed) -> Bytes {
    let authorization = format!(
        "AWS4-HMAC-SHA256 Credential=ASIAEXAMPLEKEY/20261129/eu-west-1/execute-api/aws4_request, \
         SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature={}",
        signed.signature
    );
    let event = json!({
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {
            "authorization": authorization,
            "content-type": "application/json",
            "host": "abc123.execute-api.eu-west-1.amazonaws.com",
            "x-amz-date": "20261129T101500Z",
            "x-amz-security-token": signed.session_token,
        },
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123",
            "authorizer": {"iam": {
                "accessKey": "ASIAEXAMPLEKEY",
                "accountId": "123456789012",
                "callerId": "AROAEXAMPLEID:shop-checkout",
                "userArn": "arn:aws:sts::123456789012:assumed-role/shop-checkout/session",
                "userId": "AROAEXAMPLEID:shop-checkout"
            }},
            "domainName": "abc123.execute-api.eu-west-1.amazonaws.com",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1",
                     "sourceIp": "198.51.100.7", "userAgent": "shop-checkout/2.4"},
            "requestId": "Jd7QcheckoutReq=",
            "routeKey": "$default",
            "stage": "$default",
            "time": "29/Nov/2026:10:15:00 +0000",
            "timeEpoch": 1795947300000u64
        },
        "isBase64Encoded": false,
        "body": body.to_string(),
    });
    Bytes::from(event.to_string())
}

/// What one run of a function wrote, and what it must not have.
struct Run {
    answer: Value,
    log: String,
    /// The function's own credentials and the deployment secret it was given.
    own_secrets: Vec<String>,
}

/// Runs the binary of `function` on `event` against `store`'s table, at TRACE.
async fn run(function: &str, store: &Store, event: Bytes) -> Run {
    let binary = match function {
        "tickets" => env!("CARGO_BIN_EXE_tickets"),
        "orders" => env!("CARGO_BIN_EXE_orders"),
        "import" => env!("CARGO_BIN_EXE_import"),
        "events" => env!("CARGO_BIN_EXE_events"),
        other => panic!("no function {other}"),
    };
    let endpoint = tally_testkit::dynamodb::endpoint();
    let deployment_secret = generated_secret();
    let secret_key = generated_secret();
    let session_token = generated_secret();
    let overrides = [
        ("AWS_LAMBDA_LOG_LEVEL", "TRACE"),
        ("RUST_LOG", "trace"),
        ("AWS_SECRET_ACCESS_KEY", secret_key.as_str()),
        ("AWS_SESSION_TOKEN", session_token.as_str()),
    ];
    let env = FunctionEnv {
        function,
        table: store.table(),
        dynamodb_endpoint: &endpoint,
        deployment_secret: &deployment_secret,
        overrides: &overrides,
    };
    let log_path = std::env::temp_dir().join(format!("{}-{function}.log", store.table()));
    let answer = invoke(
        std::path::Path::new(binary),
        &env,
        event,
        log_path.clone(),
        PATIENCE,
    )
    .await
    .unwrap_or_else(|e| panic!("{function}: {e}"));
    let log = std::fs::read_to_string(&log_path).unwrap();
    let _ = std::fs::remove_file(&log_path);
    Run {
        answer: serde_json::from_slice(&answer).unwrap(),
        log,
        own_secrets: vec![deployment_secret, secret_key, session_token],
    }
}

impl Run {
    /// The run logged at DEBUG (the SDK's lines) and its own lines, and none of `secrets`,
    /// its own or the event's.
    fn assert_logs_none_of(&self, function: &str, secrets: &[String]) {
        assert!(
            self.log.contains("beginning attempt"),
            "{function}: no SDK line at DEBUG: {}",
            self.log
        );
        for secret in self.own_secrets.iter().chain(secrets) {
            assert!(
                !self.log.contains(secret.as_str()),
                "{function} logs {secret:?}"
            );
        }
    }
}

/// Creates a draw `secret` on `store`; returns its stored item.
async fn drawn_item(store: &Store) -> HashMap<String, AttributeValue> {
    let router = api::router(AppState::new(store.clone()));
    let draw = json!({"draw_id": "secret", "total_tickets": 50, "max_per_payer": 10});
    let created = post_json(&router, "/draws", &draw).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    item(store.client(), store.table(), "DRAW#secret")
        .await
        .expect("the draw is stored")
}

#[tokio::test]
async fn the_ticket_function_logs_no_token_payer_or_signature_at_trace() {
    let (store, _table) = support::fresh_store(None).await;
    drawn_item(&store).await;
    let signed = Signed::new();
    let token = format!("tok-{}", DrawId::generate());
    let payer = format!("payer-{}", DrawId::generate());
    let purchase = json!({"payment_id": "p", "quantity": 2, "token": token, "payer_id": payer});
    let event = http_event("POST", "/draws/secret/purchases", &purchase, &signed);
    let run = run("tickets", &store, event).await;
    assert_eq!(run.answer["statusCode"], 201, "{}", run.answer);
    assert!(run.log.contains("purchase committed"), "{}", run.log);
    // The gateway's request id, which its access log's `requestId` matches.
    assert!(run.log.contains("Jd7QcheckoutReq="), "{}", run.log);
    run.assert_logs_none_of(
        "tickets",
        &[token, payer, signed.signature, signed.session_token],
    );
}

#[tokio::test]
async fn the_order_function_logs_no_signature_at_trace() {
    let (store, _table) = support::fresh_store(None).await;
    let signed = Signed::new();
    let series = json!({"format": "UABC{yy}{seq:6}", "reset": "yearly", "gapless": true});
    let event = http_event("PUT", "/series/UABC", &series, &signed);
    let run = run("orders", &store, event).await;
    assert_eq!(run.answer["statusCode"], 201, "{}", run.answer);
    run.assert_logs_none_of("orders", &[signed.signature, signed.session_token]);
}

#[tokio::test]
async fn the_import_function_logs_none_of_its_credentials_at_trace() {
    let (store, _table) = support::fresh_store(None).await;
    let router = api::router(AppState::new(store.clone()));
    let series = json!({"format": "UABC{yy}{seq:6}", "reset": "yearly", "gapless": false});
    let defined = put_json(&router, "/series/UABC", &series).await;
    let (status, body) = (defined.status, defined.body);
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let order = json!({"series": "UABC", "source": "erp-1", "external_ref": "PO-1"});
    let event = json!({"Records": [{
        "messageId": "0b8c3a52-one",
        "receiptHandle": "AQEB0b8c3a52",
        "body": order.to_string(),
        "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1795947300001",
                       "SenderId": "AROAEXAMPLEID:erp-connector",
                       "ApproximateFirstReceiveTimestamp": "1795947300101"},
        "messageAttributes": {},
        "md5OfBody": "18dcefa0eba37ba57354b268e4865aae",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:tally-order-imports",
        "awsRegion": "eu-west-1"
    }]});
    let run = run("import", &store, Bytes::from(event.to_string())).await;
    assert_eq!(run.answer["batchItemFailures"], json!([]), "{}", run.answer);
    run.assert_logs_none_of("import", &[]);
}

#[tokio::test]
async fn the_events_function_logs_no_seed_or_permutation_key_of_a_draw_record_at_trace() {
    let (store, _table) = support::fresh_store(None).await;
    let item = drawn_item(&store).await;
    let mut secrets = forms(&attr_b(&item, "seed"));
    secrets.extend(forms(&attr_b(&item, "perm_key")));
    let image = serde_json::to_value(serde_dynamo::Item::from(item)).unwrap();
    // A purchase's record besides, so that the function publishes a fact to the bus.
    let fixture: Value =
        serde_json::from_str(include_str!("../events/dynamodb-stream.json")).unwrap();
    let purchase = &fixture["Records"][0];
    assert_eq!(purchase["dynamodb"]["NewImage"]["kind"]["S"], "purchase");
    let event = json!({"Records": [{
        "awsRegion": "us-east-1",
        "dynamodb": {
            "ApproximateCreationDateTime": 1796122920,
            "Keys": {"pk": {"S": "DRAW#secret"}},
            "NewImage": image,
            "OldImage": {},
            "SequenceNumber": "000000000000000000001",
            "SizeBytes": 427,
            "StreamViewType": "NEW_AND_OLD_IMAGES"
        },
        "eventID": "5dff1c73-2029-49cf-90ac-2b8f5f983484",
        "eventName": "INSERT",
        "eventSource": "aws:dynamodb",
        "eventVersion": "1.1",
        "eventSourceARN": format!("arn:aws:dynamodb:us-east-1:123456789012:table/{}/stream/2026-12-01T11:02:37.365", store.table())
    }, purchase]});
    // The image as the event carries it: the search below would find a leak.
    assert!(event.to_string().contains(&secrets[2]));
    let run = run("events", &store, Bytes::from(event.to_string())).await;
    assert_eq!(run.answer["batchItemFailures"], json!([]), "{}", run.answer);
    run.assert_logs_none_of("events", &secrets);
}
