//! Lambda function serving the series and order routes behind API Gateway.

use tally::api::{self, AppState};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda_http::tracing::init_default_subscriber();
    let state = AppState::from_env().await?;
    lambda_http::run(api::orders_router(state)).await
}
