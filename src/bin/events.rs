//! Lambda function publishing domain events from the table's stream to EventBridge.

use aws_lambda_events::event::dynamodb::Event;
use lambda_runtime::{Error, LambdaEvent, service_fn};
use tally::bus::EventBus;
use tally::settings::Settings;
use tally::stream::handle_stream;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let settings = Settings::from_env()?;
    tally::telemetry::init(&settings.log, "info");
    let bus = EventBus::connect(&settings.bus()?).await;
    let bus = &bus;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Event>| async move {
        Ok::<_, Error>(handle_stream(bus, event.payload).await)
    }))
    .await
}
