//! One span per request, and its line when the request ends. The path it records leaves
//! out payer ids (E2); under API Gateway the span carries the gateway's request id, which
//! the access log's `requestId` matches.

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use lambda_http::request::RequestContext;
use tracing::{Instrument, info, info_span};

use crate::telemetry::metrics;

/// What stands in a logged path for the segment after `payers`.
const PAYER_ID: &str = "{payer_id}";

/// The handlers add their ids to the span through their own spans. The metrics counted
/// so far are written when the request ends.
pub(super) async fn log_request(request: Request, next: Next) -> Response {
    let span = info_span!(
        "request",
        method = %request.method(),
        path = %logged_path(request.uri().path()),
        gateway_request_id = gateway_request_id(&request),
    );
    async move {
        let started = Instant::now();
        let response = metrics::written_after(next.run(request)).await;
        info!(
            status = response.status().as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "request handled"
        );
        response
    }
    .instrument(span)
    .await
}

/// The path with every segment that follows a `payers` segment replaced: a payer id is
/// personal, and never logged.
fn logged_path(path: &str) -> String {
    let mut after_payers = false;
    let segments = path.split('/').map(|segment| {
        let logged = if after_payers { PAYER_ID } else { segment };
        after_payers = segment == "payers";
        logged
    });
    segments.collect::<Vec<_>>().join("/")
}

fn gateway_request_id(request: &Request) -> Option<&str> {
    match request.extensions().get::<RequestContext>()? {
        RequestContext::ApiGatewayV2(context) => context.request_id.as_deref(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::logged_path;

    #[test]
    fn a_logged_path_leaves_out_payer_ids_and_keeps_every_other_segment() {
        for (path, logged) in [
            ("/draws/d1/purchases/p1", "/draws/d1/purchases/p1"),
            (
                "/draws/d1/payers/ann%40x/purchases",
                "/draws/d1/payers/{payer_id}/purchases",
            ),
            ("/payers/ann/limits", "/payers/{payer_id}/limits"),
            ("/payers/ann", "/payers/{payer_id}"),
            ("/payers/", "/payers/{payer_id}"),
            (
                "/prod/payers/ann/exclusion",
                "/prod/payers/{payer_id}/exclusion",
            ),
            ("/", "/"),
        ] {
            assert_eq!(logged_path(path), logged, "{path}");
        }
    }
}
