//! Lambda function serving the series and order routes behind API Gateway.

use tally::api::{self, AppState};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    tally::telemetry::init("info");
    let state = AppState::from_env().await?;
    lambda_http::run(api::orders_router(state)).await
}
