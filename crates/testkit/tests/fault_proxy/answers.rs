//! The faults as a client meets them: DynamoDB's error shapes, throttling, errors before
//! and after forwarding, lost and truncated answers, conflicts up to a limit.

use super::*;

fn status<E>(err: &SdkError<E, HttpResponse>) -> u16 {
    err.raw_response()
        .expect("an answer came back")
        .status()
        .as_u16()
}

#[tokio::test]
async fn error_answers_are_shaped_like_dynamodb_ones() {
    let proxy = FaultProxy::start(&endpoint()).await;
    let raw = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let ask = || {
        let request = Request::post(proxy.endpoint())
            .header("x-amz-target", "DynamoDB_20120810.GetItem")
            .header(header::CONTENT_TYPE, "application/x-amz-json-1.0")
            .body(Full::new(Bytes::from_static(b"{}")))
            .unwrap();
        raw.request(request)
    };
    for (faults, status, error, message) in [
        (
            Faults {
                throttle: 1.0,
                ..Faults::default()
            },
            400,
            "ThrottlingException",
            "Rate of requests exceeds the allowed throughput.",
        ),
        (
            Faults {
                error_before: 1.0,
                ..Faults::default()
            },
            500,
            "InternalServerError",
            "Internal server error",
        ),
    ] {
        proxy.set(faults);
        let response = ask().await.expect("an answer");
        assert_eq!(response.status().as_u16(), status);
        let headers = response.headers();
        assert_eq!(
            headers[header::CONTENT_TYPE],
            "application/x-amz-json-1.0",
            "{error}"
        );
        let id = headers["x-amzn-requestid"].to_str().unwrap();
        assert_eq!(id.len(), 52, "{id}");
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        );
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "__type": format!("com.amazonaws.dynamodb.v20120810#{error}"),
                "message": message,
            })
        );
    }
    assert_eq!(
        proxy.counts(),
        Counts {
            throttled: 1,
            errors_before: 1,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn throttling_is_answered_without_forwarding_and_retried_by_the_sdk() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        throttle: 1.0,
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 3, PATIENT);

    let err = get(&client, direct.table(), "a").await.unwrap_err();
    assert!(matches!(err, SdkError::ServiceError(_)), "{err:?}");
    assert_eq!(err.code(), Some("ThrottlingException"));
    assert_eq!(status(&err), 400);
    assert_eq!(
        proxy.counts(),
        Counts {
            throttled: 3,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn an_error_before_forwarding_writes_nothing_and_spares_other_operations() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        error_before: 1.0,
        operations: Some(vec!["PutItem".into()]),
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 3, PATIENT);

    let err = put(&client, direct.table(), "a").await.unwrap_err();
    assert!(matches!(err, SdkError::ServiceError(_)), "{err:?}");
    assert_eq!(err.code(), Some("InternalServerError"));
    assert_eq!(status(&err), 500);
    assert!(!exists(&direct, "a").await);
    get(&client, direct.table(), "a")
        .await
        .expect("reads are not faulted");
    assert_eq!(
        proxy.counts(),
        Counts {
            errors_before: 3,
            forwarded: 1,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn an_error_after_forwarding_hides_a_committed_write() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        error_after: 1.0,
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 1, PATIENT);

    let err = put(&client, direct.table(), "a").await.unwrap_err();
    assert!(matches!(err, SdkError::ServiceError(_)), "{err:?}");
    assert_eq!(err.code(), Some("InternalServerError"));
    assert_eq!(status(&err), 500);
    assert!(exists(&direct, "a").await, "the write committed");
    assert_eq!(
        proxy.counts(),
        Counts {
            errors_after: 1,
            forwarded: 1,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn a_lost_answer_times_out_after_the_write_committed() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        lost_after: 1.0,
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 1, IMPATIENT);

    let started = Instant::now();
    let err = put(&client, direct.table(), "a").await.unwrap_err();
    assert!(matches!(err, SdkError::TimeoutError(_)), "{err:?}");
    assert!(started.elapsed() >= IMPATIENT);
    wait_until("the write is forwarded", || proxy.counts().forwarded == 1).await;
    assert!(exists(&direct, "a").await, "the write committed");
    assert_eq!(
        proxy.counts(),
        Counts {
            lost_after: 1,
            forwarded: 1,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn a_truncated_answer_hides_a_committed_write_behind_a_success_status() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        truncated_after: 1.0,
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 3, PATIENT);

    let err = put(&client, direct.table(), "a").await.unwrap_err();
    // The SDK could not read the answer, and does not try again.
    assert!(matches!(err, SdkError::ServiceError(_)), "{err:?}");
    assert_eq!(err.code(), None, "{err:?}");
    assert_eq!(status(&err), 200);
    assert!(exists(&direct, "a").await, "the write committed");
    assert_eq!(
        proxy.counts(),
        Counts {
            truncated_after: 1,
            forwarded: 1,
            ..Counts::default()
        }
    );
    assert_eq!(proxy.undelivered().await.len(), 1);
}

#[tokio::test]
async fn conflicts_stop_at_the_most_asked_for_and_write_nothing() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        conflict_before: 1.0,
        at_most: Some(2),
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 1, PATIENT);

    for _ in 0..2 {
        let err = put(&client, direct.table(), "a").await.unwrap_err();
        assert_eq!(err.code(), Some("TransactionConflictException"));
        assert_eq!(status(&err), 400);
    }
    assert!(!exists(&direct, "a").await);
    put(&client, direct.table(), "a")
        .await
        .expect("the third write passes clean");
    assert_eq!(
        proxy.counts(),
        Counts {
            conflicts: 2,
            forwarded: 1,
            ..Counts::default()
        }
    );
}
