//! Lambda function consuming the order import queue (SQS, partial batch responses).

use std::time::SystemTime;

use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{Error, LambdaEvent, service_fn};
use tally::orders::OrderService;
use tally::queue::handle_delivery;
use tally::settings::Settings;
use tally::store::Store;
use tally::telemetry::metrics;
use tokio::time::Instant;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let settings = Settings::from_env()?;
    tally::telemetry::init(&settings.log, "info");
    let orders = OrderService::new(Store::connect(&settings.store()?, None).await);
    let orders = &orders;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        // A deadline already past is none Lambda gave (`cargo lambda` sends a duration).
        let deadline = event
            .context
            .deadline()
            .duration_since(SystemTime::now())
            .ok()
            .map(|left| Instant::now() + left);
        let delivery = handle_delivery(orders, event.payload, deadline);
        Ok::<_, Error>(metrics::written_after(delivery).await)
    }))
    .await
}
