//! The table's stream read back through DynamoDB Streams, each record shaped as Lambda
//! delivers it to the events function.

use std::collections::HashMap;

use aws_lambda_events::event::dynamodb::Event;
use aws_sdk_dynamodbstreams::primitives::Blob;
use aws_sdk_dynamodbstreams::types::{AttributeValue, Record, ShardIteratorType};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use tally::store::{AwsEnvironment, Store, Timeouts};

use crate::helpers::endpoint;

/// Every record of the table's stream so far, as Lambda would deliver them.
pub async fn stream_records(store: &Store) -> Event {
    let described = store
        .client()
        .describe_table()
        .table_name(store.table())
        .send()
        .await
        .unwrap();
    let arn = described
        .table()
        .unwrap()
        .latest_stream_arn()
        .unwrap()
        .to_owned();
    let config = tally::aws::sdk_config(
        Some(&endpoint()),
        Timeouts::default(),
        AwsEnvironment::default(),
    )
    .await;
    let streams = aws_sdk_dynamodbstreams::Client::new(&config);
    let stream = streams
        .describe_stream()
        .stream_arn(&arn)
        .send()
        .await
        .unwrap();
    let mut records = Vec::new();
    for shard in stream.stream_description().unwrap().shards() {
        let mut iterator = streams
            .get_shard_iterator()
            .stream_arn(&arn)
            .shard_id(shard.shard_id().unwrap())
            .shard_iterator_type(ShardIteratorType::TrimHorizon)
            .send()
            .await
            .unwrap()
            .shard_iterator
            .unwrap();
        loop {
            let page = streams
                .get_records()
                .shard_iterator(&iterator)
                .send()
                .await
                .unwrap();
            if page.records().is_empty() {
                break;
            }
            records.extend(page.records().iter().map(|r| lambda_record(r, &arn)));
            match page.next_shard_iterator() {
                Some(next) => iterator = next.to_owned(),
                None => break,
            }
        }
    }
    serde_json::from_value(json!({"Records": records})).unwrap()
}

/// One stream record in the JSON shape of a Lambda DynamoDB event.
fn lambda_record(record: &Record, arn: &str) -> Value {
    let change = record.dynamodb().unwrap();
    let image = |map: Option<&HashMap<String, AttributeValue>>| {
        Value::Object(
            map.into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), attribute(v)))
                .collect(),
        )
    };
    json!({
        "eventID": record.event_id(),
        "eventName": record.event_name().unwrap().as_str(),
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "eventSourceARN": arn,
        "dynamodb": {
            "ApproximateCreationDateTime": change.approximate_creation_date_time().map_or(0, |t| t.secs()),
            "Keys": image(Some(change.keys().unwrap())),
            "NewImage": image(change.new_image()),
            "OldImage": image(change.old_image()),
            "SequenceNumber": change.sequence_number(),
            "SizeBytes": change.size_bytes(),
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        }
    })
}

/// One attribute in DynamoDB's JSON, as a Lambda event carries it (binary in base64).
fn attribute(value: &AttributeValue) -> Value {
    let base64 = |b: &Blob| STANDARD.encode(b.as_ref());
    match value {
        AttributeValue::S(s) => json!({"S": s}),
        AttributeValue::N(n) => json!({"N": n}),
        AttributeValue::B(b) => json!({"B": base64(b)}),
        AttributeValue::Bool(b) => json!({"BOOL": b}),
        AttributeValue::Null(_) => json!({"NULL": true}),
        AttributeValue::Ss(set) => json!({"SS": set}),
        AttributeValue::Ns(set) => json!({"NS": set}),
        AttributeValue::Bs(set) => json!({"BS": set.iter().map(base64).collect::<Vec<_>>()}),
        AttributeValue::L(list) => json!({"L": list.iter().map(attribute).collect::<Vec<_>>()}),
        AttributeValue::M(map) => {
            json!({"M": map.iter().map(|(k, v)| (k.clone(), attribute(v))).collect::<serde_json::Map<_, _>>()})
        }
        other => panic!("an attribute type this test does not know: {other:?}"),
    }
}
