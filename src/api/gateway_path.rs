//! The path of a request API Gateway routed. An HTTP API hands the function its path
//! decoded: a reference sent as `SO%2F2026%2F0001` arrives as `SO/2026/0001`, three
//! segments where the route has one. The route key the gateway matched
//! (`GET /sources/{source}/orders/{external_ref}`) and the parameters it took from the
//! path say where each parameter ends, so the path is rebuilt from them, each parameter
//! percent-encoded again, before the router matches it. A request without a matched route
//! (the local server, the `$default` route of a test event) keeps its path.

use axum::extract::Request;
use axum::http::Uri;
use axum::http::uri::PathAndQuery;
use lambda_http::RequestExt;
use lambda_http::request::RequestContext;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// What a path segment carries as it is (RFC 3986's `pchar`, less `%`): everything else,
/// `/` first, is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

/// The request with its path rebuilt from the route API Gateway matched, if it matched one.
pub(super) fn restore(mut request: Request) -> Request {
    if let Some(path) = routed_path(&request) {
        let query = request
            .uri()
            .query()
            .map(|q| format!("?{q}"))
            .unwrap_or_default();
        let mut parts = request.uri().clone().into_parts();
        if let Ok(path_and_query) = PathAndQuery::try_from(format!("{path}{query}")) {
            parts.path_and_query = Some(path_and_query);
            if let Ok(uri) = Uri::from_parts(parts) {
                *request.uri_mut() = uri;
            }
        }
    }
    request
}

/// The path of the route key's template with each `{parameter}` percent-encoded, behind
/// the stage's prefix when the request's path has one.
fn routed_path(request: &Request) -> Option<String> {
    let RequestContext::ApiGatewayV2(context) = request.extensions().get::<RequestContext>()?
    else {
        return None;
    };
    let (_, template) = context.route_key.as_deref()?.split_once(' ')?;
    let parameters = request.extensions().path_parameters_ref()?;
    let mut path = match context.stage.as_deref() {
        Some(stage)
            if stage != "$default" && request.uri().path().starts_with(&format!("/{stage}/")) =>
        {
            format!("/{stage}")
        }
        _ => String::new(),
    };
    for segment in template.split('/').filter(|s| !s.is_empty()) {
        path.push('/');
        match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            // A greedy parameter spans segments: its path is the gateway's.
            Some(name) if name.ends_with('+') => return None,
            Some(name) => path.extend(utf8_percent_encode(parameters.first(name)?, SEGMENT)),
            None => path.push_str(segment),
        }
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lambda_http::aws_lambda_events::apigw::ApiGatewayV2httpRequestContext;
    use std::collections::HashMap;

    fn routed(route_key: &str, stage: &str, path: &str, parameters: &[(&str, &str)]) -> Request {
        let mut context = ApiGatewayV2httpRequestContext::default();
        context.route_key = Some(route_key.to_owned());
        context.stage = Some(stage.to_owned());
        let parameters: HashMap<String, String> = parameters
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Request::builder()
            .uri(path)
            .body(axum::body::Body::empty())
            .unwrap()
            .with_request_context(RequestContext::ApiGatewayV2(context))
            .with_path_parameters(parameters)
    }

    #[test]
    fn a_decoded_slash_goes_back_into_its_parameter() {
        let request = routed(
            "GET /sources/{source}/orders/{external_ref}",
            "$default",
            "/sources/erp-1/orders/SO/2026/0001?x=1",
            &[("source", "erp-1"), ("external_ref", "SO/2026/0001")],
        );
        let restored = restore(request);
        assert_eq!(
            restored.uri().path_and_query().unwrap().as_str(),
            "/sources/erp-1/orders/SO%2F2026%2F0001?x=1"
        );
        let staged = routed(
            "GET /orders/{order_number}",
            "prod",
            "/prod/orders/INV/1",
            &[("order_number", "INV/1")],
        );
        assert_eq!(restore(staged).uri().path(), "/prod/orders/INV%2F1");
        let plain = routed(
            "POST /draws/{draw_id}/purchases/{payment_id}/void",
            "$default",
            "/draws/d/purchases/GPA.1:2/void",
            &[("draw_id", "d"), ("payment_id", "GPA.1:2")],
        );
        assert_eq!(
            restore(plain).uri().path(),
            "/draws/d/purchases/GPA.1:2/void"
        );
    }

    #[test]
    fn a_request_no_route_matched_keeps_its_path() {
        let default = routed("$default", "$default", "/orders/A%2FB", &[]);
        assert_eq!(restore(default).uri().path(), "/orders/A%2FB");
        let local = Request::builder()
            .uri("/orders/A%2FB")
            .body(axum::body::Body::empty())
            .unwrap();
        assert_eq!(restore(local).uri().path(), "/orders/A%2FB");
    }
}
