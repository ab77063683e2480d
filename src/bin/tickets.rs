//! Lambda function serving the ticket routes behind API Gateway.

use tally::api::{self, AppState};
use tally::secrets::SecretUse;
use tally::settings::Settings;
use tally::store::Store;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let settings = Settings::from_env()?;
    tally::telemetry::init(&settings.log, "info");
    let store = Store::connect(&settings.store()?, None).await;
    let secret = settings
        .secret
        .load(SecretUse::on(settings.runtime))
        .await?;
    let state = AppState::configured(store, Some(secret), &settings.http);
    lambda_http::run(api::tickets_router(state)).await
}
