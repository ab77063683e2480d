//! Lambda function serving the series and order routes behind API Gateway. It never loads
//! the deployment secret: only the ticket routes use it.

use tally::api::{self, AppState};
use tally::settings::Settings;
use tally::store::Store;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let settings = Settings::from_env()?;
    tally::telemetry::init(&settings.log, "info");
    let store = Store::connect(&settings.store()?, None).await;
    let state = AppState::configured(store, None, &settings.http);
    lambda_http::run(api::orders_router(state)).await
}
