//! The local server over raw TCP on 127.0.0.1: against slow and careless clients
//! (`slow_clients`) and against requests from elsewhere than localhost
//! (`only_localhost`). Every test bounds its own loops, so it ends whatever the server
//! does. (`tally serve` as a process is tested with the command line.)

mod only_localhost;
mod slow_clients;

use std::net::SocketAddr;
use std::time::Duration;

use tally::api::{self, AppState};

use crate::helpers::store_on;

/// Serves the API with these timeouts on a port of its own. The store is never reached:
/// every request here is settled before a handler would call it.
async fn serve(header: Duration, body: Duration, request: Duration) -> SocketAddr {
    let state = AppState {
        request_timeout: request,
        drawing_timeout: request,
        body_timeout: body,
        ..AppState::new(store_on("never-reached", None).await)
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(api::local_server::serve(
        listener,
        api::router(state),
        std::future::pending(),
        header,
    ));
    address
}

const LONG: Duration = Duration::from_secs(120);
