//! The stack's EventBridge bus, where domain events go.

use aws_sdk_eventbridge::Client;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use tracing::warn;

use crate::aws::{self, AwsEnvironment, Timeouts, display_chain};
use tally_domain::events::{DomainEvent, EVENT_SOURCE};

/// Entries one `PutEvents` call may carry.
pub const MAX_ENTRIES_PER_PUT: usize = 10;

/// Where the bus is (`Settings::bus`).
#[derive(Clone, Debug)]
pub struct BusConfig {
    pub bus_name: String,
    /// Set for a local stand-in; unset on AWS.
    pub endpoint: Option<String>,
    pub timeouts: Timeouts,
    /// What the environment gives the SDK, for a local endpoint's defaults.
    pub environment: AwsEnvironment,
}

/// The bus and the client that reaches it.
#[derive(Clone, Debug)]
pub struct EventBus {
    client: Client,
    name: String,
}

impl EventBus {
    /// Builds the SDK client once per process.
    pub async fn connect(config: &BusConfig) -> Self {
        let shared = aws::sdk_config(
            config.endpoint.as_deref(),
            config.timeouts,
            config.environment,
        )
        .await;
        Self {
            client: Client::new(&shared),
            name: config.bus_name.clone(),
        }
    }

    /// Publishes the events, in calls of at most [`MAX_ENTRIES_PER_PUT`]; says for each
    /// event whether the bus took it. A call that fails as a whole fails all its events,
    /// and the calls after it are not sent: the bus is failing or silent, and each call
    /// could take the whole operation timeout.
    pub async fn publish(&self, events: &[DomainEvent]) -> Vec<bool> {
        let mut taken = Vec::with_capacity(events.len());
        for chunk in events.chunks(MAX_ENTRIES_PER_PUT) {
            match self.put(chunk).await {
                Some(results) => taken.extend(results),
                None => break,
            }
        }
        taken.resize(events.len(), false);
        taken
    }

    /// One call: whether each entry was taken, or `None` when the call failed as a whole.
    async fn put(&self, events: &[DomainEvent]) -> Option<Vec<bool>> {
        let entries = events
            .iter()
            .map(|event| {
                PutEventsRequestEntry::builder()
                    .event_bus_name(&self.name)
                    .source(EVENT_SOURCE)
                    .detail_type(event.detail_type())
                    .detail(event.detail())
                    .build()
            })
            .collect();
        match self
            .client
            .put_events()
            .set_entries(Some(entries))
            .send()
            .await
        {
            // Results come in entry order; an entry with an error code was not taken.
            Ok(output) => {
                let results = output.entries();
                Some(
                    (0..events.len())
                        .map(|i| results.get(i).is_some_and(|r| r.error_code().is_none()))
                        .collect(),
                )
            }
            Err(err) => {
                warn!(error = %display_chain(&err), events = events.len(), "PutEvents failed");
                None
            }
        }
    }
}
