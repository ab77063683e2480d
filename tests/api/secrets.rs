//! The deployment secret: purchase fingerprints that the table alone does not open, the
//! secret read from Secrets Manager (a stand-in on 127.0.0.1), and on Lambda no start
//! without a secret fit for a deployment.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use tally::api::{self, AppState};
use tally::store::AwsEnvironment;
use tally::tickets::TicketService;
use tally_domain::ids::{DrawId, PayerId, PaymentId};
use tally_domain::purchase::{Channel, FingerprintKey, PaymentToken, PurchaseRequest};
use tally_domain::secret::{DeploymentSecret, LOCAL_DEPLOYMENT_SECRET};
use tally_testkit::lambda_harness::bootstrap::FunctionEnv;
use tally_testkit::lambda_harness::{generated_secret, invoke};

use crate::helpers::{endpoint, fresh_store, post_json};

/// A purchase fingerprint as the fields make it, under `key`: quantity, then payer and
/// token, each absent or length-prefixed.
fn fingerprint_under(key: &[u8], quantity: u32, payer: &str, token: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(&quantity.to_be_bytes());
    for field in [payer, token] {
        mac.update(&[1]);
        mac.update(&(field.len() as u64).to_be_bytes());
        mac.update(field.as_bytes());
    }
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The keys someone holding the table could try: each secret of the draw item, as it is
/// and through the derivation fingerprints once had.
fn keys_from_the_table(material: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    for bytes in material {
        keys.push(bytes.to_vec());
        let mut mac = Hmac::<Sha256>::new_from_slice(bytes).unwrap();
        mac.update(b"tally/purchase-fingerprint/v1");
        keys.push(mac.finalize().into_bytes().to_vec());
    }
    keys
}

#[tokio::test]
async fn a_short_token_is_not_found_from_the_table_alone_but_is_with_the_deployment_secret() {
    let (store, _table) = fresh_store(None).await;
    let secret = DeploymentSecret::new(DrawId::generate().as_str().repeat(2).as_bytes()).unwrap();
    let tickets = TicketService::new(store.clone()).with_deployment_secret(secret.clone());
    let router = api::router(AppState {
        tickets: Arc::new(tickets),
        ..AppState::new(store.clone())
    });
    let created = post_json(
        &router,
        "/draws",
        &json!({"draw_id": "t", "total_tickets": 50}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let token = "042917";
    let bought = post_json(
        &router,
        "/draws/t/purchases",
        &json!({"payment_id": "p", "quantity": 2, "payer_id": "ann", "token": token}),
    )
    .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);

    // Everything the table holds of the draw and the purchase.
    let draw_id = DrawId::parse("t").unwrap();
    let draw = store.get_draw(&draw_id).await.unwrap().unwrap();
    let purchase = store
        .get_purchase(&draw_id, &PaymentId::parse("p").unwrap())
        .await
        .unwrap()
        .unwrap();
    let keys = keys_from_the_table(&[draw.key.as_bytes(), draw.seed.as_bytes()]);
    for candidate in (42_000..43_000).map(|n| format!("{n:06}")) {
        for key in &keys {
            assert_ne!(
                fingerprint_under(key, 2, "ann", &candidate),
                purchase.fingerprint,
                "token {candidate} recovered from the table alone"
            );
        }
    }
    // With the deployment secret, the same search finds it: the fingerprint is keyed by it.
    let request = |token: &str| PurchaseRequest {
        draw_id: draw_id.clone(),
        payment_id: PaymentId::parse("p").unwrap(),
        quantity: 2,
        payer_id: Some(PayerId::parse("ann").unwrap()),
        token: Some(PaymentToken(token.to_owned())),
        numbers: None,
        channel: Channel::Online,
        amount: None,
    };
    let key = FingerprintKey::derive(&secret, &draw_id);
    let found: Vec<String> = (42_000..43_000)
        .map(|n| format!("{n:06}"))
        .filter(|candidate| request(candidate).fingerprint(&key) == purchase.fingerprint)
        .collect();
    assert_eq!(found, [token]);
    // Another deployment's secret (the local default) opens nothing.
    let local = FingerprintKey::derive(&DeploymentSecret::local(), &draw_id);
    assert_ne!(request(token).fingerprint(&local), purchase.fingerprint);
}

/// A stand-in for Secrets Manager's `GetSecretValue`: answers `secret` for `arn`, and
/// keeps each request's target and body.
#[derive(Clone)]
struct SecretsStandIn {
    arn: String,
    secret: String,
    requests: Arc<Mutex<Vec<(String, Value)>>>,
}

async fn get_secret_value(
    State(stand_in): State<SecretsStandIn>,
    headers: HeaderMap,
    body: String,
) -> (StatusCode, Json<Value>) {
    let target = headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let request: Value = serde_json::from_str(&body).unwrap();
    stand_in
        .requests
        .lock()
        .unwrap()
        .push((target, request.clone()));
    if request["SecretId"] != stand_in.arn.as_str() {
        let error = json!({"__type": "ResourceNotFoundException", "message": "no such secret"});
        return (StatusCode::BAD_REQUEST, Json(error));
    }
    let answer = json!({"ARN": stand_in.arn, "Name": "tally", "SecretString": stand_in.secret,
                        "VersionId": "v1", "VersionStages": ["AWSCURRENT"]});
    (StatusCode::OK, Json(answer))
}

async fn start(stand_in: &SecretsStandIn) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new()
        .fallback(get_secret_value)
        .with_state(stand_in.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

#[tokio::test]
async fn the_deployment_secret_is_read_from_secrets_manager_and_a_weak_one_refused() {
    let arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tally-AbCdEf";
    let text = "a".repeat(32) + &"b".repeat(32);
    let stand_in = SecretsStandIn {
        arn: arn.to_owned(),
        secret: text.clone(),
        requests: Arc::default(),
    };
    let endpoint = start(&stand_in).await;
    let secret = tally::secrets::fetch(arn, Some(&endpoint), AwsEnvironment::default())
        .await
        .unwrap();
    let draw = DrawId::parse("d").unwrap();
    let expected = DeploymentSecret::new(text.as_bytes()).unwrap();
    let request = PurchaseRequest {
        draw_id: draw.clone(),
        payment_id: PaymentId::parse("p").unwrap(),
        quantity: 1,
        payer_id: None,
        token: Some(PaymentToken("1".into())),
        numbers: None,
        channel: Channel::Online,
        amount: None,
    };
    assert_eq!(
        request.fingerprint(&FingerprintKey::derive(&secret, &draw)),
        request.fingerprint(&FingerprintKey::derive(&expected, &draw))
    );
    let requests = stand_in.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].0, "secretsmanager.GetSecretValue");
    assert_eq!(requests[0].1["SecretId"], arn);

    // Another secret id, or a secret too short to key anything, stops the start.
    let missing = tally::secrets::fetch("other", Some(&endpoint), AwsEnvironment::default())
        .await
        .unwrap_err();
    assert!(missing.contains("ResourceNotFoundException"), "{missing}");
    let weak = SecretsStandIn {
        arn: arn.to_owned(),
        secret: "short".into(),
        requests: Arc::default(),
    };
    let endpoint = start(&weak).await;
    let refused = tally::secrets::fetch(arn, Some(&endpoint), AwsEnvironment::default())
        .await
        .unwrap_err();
    assert!(refused.contains("at least 32 bytes"), "{refused}");
    assert!(!refused.contains("short"), "{refused}");
}

/// The ticket function's answer to `GET /draws/summer-2026` when it runs as Lambda runs it
/// with `secret` as `TALLY_DEPLOYMENT_SECRET` (empty: none), or its output if it did not
/// start.
async fn ticket_function_with(secret: &str) -> Result<Value, String> {
    let (store, _table) = fresh_store(None).await;
    let endpoint = endpoint();
    let env = FunctionEnv {
        function: "tickets",
        table: store.table(),
        dynamodb_endpoint: &endpoint,
        deployment_secret: secret,
        overrides: &[],
    };
    let log = std::env::temp_dir().join(format!("{}-tickets.log", store.table()));
    let event = Bytes::from_static(include_bytes!("../../events/get-draw.json"));
    let binary = Path::new(env!("CARGO_BIN_EXE_tickets"));
    let answer = invoke(binary, &env, event, log.clone(), Duration::from_secs(60)).await;
    let output = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    answer
        .map(|body| serde_json::from_slice(&body).unwrap())
        .map_err(|_| output)
}

#[tokio::test]
async fn on_lambda_the_ticket_function_starts_only_with_a_secret_fit_for_a_deployment() {
    let weak = "a".repeat(32);
    for (secret, reason) in [
        ("", "no deployment secret is configured"),
        (LOCAL_DEPLOYMENT_SECRET, "public local default"),
        (weak.as_str(), "too little variety"),
    ] {
        let output = ticket_function_with(secret).await.unwrap_err();
        assert!(output.contains(reason), "{output}");
        assert!(secret.is_empty() || !output.contains(secret), "{output}");
    }
    let answer = ticket_function_with(&generated_secret()).await.unwrap();
    assert_eq!(answer["statusCode"], 404, "{answer}");
}
