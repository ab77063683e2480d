//! Lambda function publishing domain events from the table's stream to EventBridge.

use aws_lambda_events::event::dynamodb::Event;
use lambda_runtime::{Error, LambdaEvent, service_fn};
use tally::bus::{BusConfig, EventBus};
use tally::stream::handle_stream;

#[tokio::main]
async fn main() -> Result<(), Error> {
    tally::telemetry::init("info");
    let bus = EventBus::connect(&BusConfig::from_env()?).await;
    let bus = &bus;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Event>| async move {
        Ok::<_, Error>(handle_stream(bus, event.payload).await)
    }))
    .await
}
