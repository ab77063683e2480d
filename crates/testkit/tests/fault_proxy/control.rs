//! What the tests steer: latency, freezing, seeds, and the proxy's end.

use super::*;

#[tokio::test]
async fn latency_delays_only_the_chosen_operations() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let delay = Duration::from_millis(250);
    proxy.set(Faults {
        latency: Some(delay..=delay),
        operations: Some(vec!["GetItem".into()]),
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 1, PATIENT);

    put(&client, direct.table(), "a")
        .await
        .expect("a clean write");
    let started = Instant::now();
    let read = get(&client, direct.table(), "a")
        .await
        .expect("a slow read");
    assert!(started.elapsed() >= delay);
    assert!(read.item().is_some());
    assert_eq!(
        proxy.counts(),
        Counts {
            delayed: 1,
            forwarded: 2,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn a_frozen_proxy_holds_requests_until_thawed() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let impatient = client_via(&direct, &proxy, 1, IMPATIENT);
    let patient = client_via(&direct, &proxy, 1, PATIENT);

    proxy.freeze();
    let err = put(&impatient, direct.table(), "given-up")
        .await
        .unwrap_err();
    assert!(matches!(err, SdkError::TimeoutError(_)), "{err:?}");
    let table = direct.table().to_owned();
    let waiting = tokio::spawn(async move { put(&patient, &table, "waiting").await });
    wait_until("both requests are held", || proxy.counts().held == 2).await;
    assert!(!exists(&direct, "given-up").await, "held, not forwarded");

    proxy.thaw().await;
    assert!(exists(&direct, "given-up").await, "forwarded late");
    let undelivered = proxy.undelivered().await;
    let keys: Vec<_> = undelivered
        .iter()
        .map(|u| (u.operation.as_str(), &u.request["Item"]["pk"]["S"]))
        .collect();
    assert_eq!(keys, [("PutItem", &serde_json::json!("given-up"))]);
    assert!(exists(&direct, "waiting").await);
    waiting
        .await
        .unwrap()
        .expect("the waiting client gets its answer");
    put(&impatient, direct.table(), "after")
        .await
        .expect("calls pass again");
    assert_eq!(
        proxy.counts(),
        Counts {
            held: 2,
            forwarded: 3,
            ..Counts::default()
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_faults_concurrent_calls_all_pass() {
    const CALLS: u64 = 40;
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let client = client_via(&direct, &proxy, 1, PATIENT);

    let keys: Vec<String> = (0..CALLS).map(|i| format!("item-{i}")).collect();
    let writes = keys.iter().map(|key| put(&client, direct.table(), key));
    for result in futures::future::join_all(writes).await {
        result.expect("a clean write");
    }
    let reads = keys.iter().map(|key| get(&client, direct.table(), key));
    for result in futures::future::join_all(reads).await {
        assert!(result.expect("a clean read").item().is_some());
    }
    assert_eq!(
        proxy.counts(),
        Counts {
            forwarded: 2 * CALLS,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn a_seed_replays_the_same_faults() {
    let direct = Direct::new().await;
    let mut runs = Vec::new();
    for _ in 0..2 {
        let proxy = FaultProxy::start_seeded(&endpoint(), 7).await;
        proxy.set(Faults {
            throttle: 0.5,
            ..Faults::default()
        });
        let client = client_via(&direct, &proxy, 1, PATIENT);
        let mut throttled = Vec::new();
        for _ in 0..16 {
            throttled.push(get(&client, direct.table(), "a").await.is_err());
        }
        runs.push(throttled);
    }
    assert_eq!(runs[0], runs[1]);
    assert!(runs[0].contains(&true) && runs[0].contains(&false));
}

#[tokio::test]
async fn a_dropped_proxy_closes_its_port_and_connections() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let address = proxy.address();
    let client = client_via(&direct, &proxy, 1, PATIENT);

    proxy.freeze();
    let table = direct.table().to_owned();
    let waiting = tokio::spawn(async move { put(&client, &table, "a").await });
    wait_until("the request is held", || proxy.counts().held == 1).await;
    let started = Instant::now();
    drop(proxy);
    let err = waiting.await.unwrap().unwrap_err();
    assert!(started.elapsed() < PATIENT / 2, "{err:?}");
    assert!(matches!(err, SdkError::DispatchFailure(_)), "{err:?}");
    assert!(tokio::net::TcpStream::connect(address).await.is_err());
    assert!(
        !exists(&direct, "a").await,
        "held requests die with the proxy"
    );
}

/// Answers every request with `{}` after `delay`, as a DynamoDB that has become slow.
async fn slow_upstream(delay: Duration) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let answer = move || async move {
        tokio::time::sleep(delay).await;
        ([(header::CONTENT_TYPE, "application/x-amz-json-1.0")], "{}")
    };
    let app = axum::Router::new().fallback(answer);
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

#[tokio::test]
async fn an_answer_that_comes_after_the_client_gave_up_is_undelivered() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&slow_upstream(IMPATIENT * 2).await).await;
    let impatient = client_via(&direct, &proxy, 1, IMPATIENT);
    let patient = client_via(&direct, &proxy, 1, PATIENT);

    put(&patient, direct.table(), "waited")
        .await
        .expect("the patient client gets its answer");
    assert!(proxy.undelivered().await.is_empty());
    let err = put(&impatient, direct.table(), "given-up")
        .await
        .unwrap_err();
    assert!(matches!(err, SdkError::TimeoutError(_)), "{err:?}");
    let undelivered = proxy.undelivered().await;
    let keys: Vec<_> = undelivered
        .iter()
        .map(|u| {
            (
                u.operation.as_str(),
                &u.request["Item"]["pk"]["S"],
                &u.answer,
            )
        })
        .collect();
    let given_up = serde_json::json!("given-up");
    assert_eq!(keys, [("PutItem", &given_up, &serde_json::json!({}))]);
}
