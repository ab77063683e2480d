//! The events function: the facts among the table's stream records, published to the
//! stack's EventBridge bus.
//!
//! At least once: a record whose facts were not all taken by the bus (or that cannot be
//! read) is reported by its sequence number, and Lambda delivers it again with the records
//! after it; the event ids never change, so a consumer drops what it has seen. Images are
//! never logged: a draw's image holds its secret keys.

use std::collections::HashMap;

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use aws_sdk_dynamodb::types::AttributeValue;
use tracing::{error, info, warn};

use crate::bus::EventBus;
use crate::store::stream::{ChangeKind, ItemChange};
use tally_domain::events::DomainEvent;

/// One record as a change of one item.
fn change_of(record: &EventRecord) -> Result<ItemChange, String> {
    let kind = match record.event_name.as_str() {
        "INSERT" => ChangeKind::Insert,
        "MODIFY" => ChangeKind::Modify,
        "REMOVE" => ChangeKind::Remove,
        other => return Err(format!("unknown event name {other:?}")),
    };
    let image = |item: &serde_dynamo::Item| {
        (!item.is_empty()).then(|| HashMap::<String, AttributeValue>::from(item.clone()))
    };
    Ok(ItemChange {
        kind,
        old: image(&record.change.old_image),
        new: image(&record.change.new_image),
    })
}

/// Publishes the facts of one delivery; returns the records Lambda must deliver again.
pub async fn handle_stream(bus: &EventBus, event: Event) -> DynamoDbEventResponse {
    let mut failed = vec![false; event.records.len()];
    let mut facts: Vec<(usize, DomainEvent)> = Vec::new();
    for (index, record) in event.records.iter().enumerate() {
        match change_of(record).and_then(|c| c.domain_events().map_err(|e| e.to_string())) {
            Ok(events) => facts.extend(events.into_iter().map(|e| (index, e))),
            Err(reason) => {
                error!(
                    sequence_number = record.change.sequence_number.as_deref().unwrap_or(""),
                    %reason,
                    "stream record cannot be read"
                );
                failed[index] = true;
            }
        }
    }
    let events: Vec<DomainEvent> = facts.iter().map(|(_, e)| e.clone()).collect();
    let taken = bus.publish(&events).await;
    for ((index, event), taken) in facts.iter().zip(&taken) {
        if !taken {
            warn!(
                event_id = event.event_id(),
                detail_type = event.detail_type(),
                "event not published"
            );
            failed[*index] = true;
        }
    }
    info!(
        records = event.records.len(),
        published = taken.iter().filter(|t| **t).count(),
        failed_records = failed.iter().filter(|f| **f).count(),
        "stream records handled"
    );
    let mut response = DynamoDbEventResponse::default();
    for (record, _) in event.records.iter().zip(&failed).filter(|(_, f)| **f) {
        match &record.change.sequence_number {
            Some(sequence) => response.batch_item_failures.push({
                let mut failure = DynamoDbBatchItemFailure::default();
                failure.item_identifier = Some(sequence.clone());
                failure
            }),
            None => error!("a failed stream record has no sequence number"),
        }
    }
    response
}
