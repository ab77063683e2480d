//! One route table per group of routes, read from the handlers' `#[utoipa::path]`
//! annotations, so that the routes served and the OpenAPI document cannot disagree. Each
//! table also names the Lambda function of template.yaml that serves each route: the
//! longer deadline of the drawing routes follows from it, and a test compares it with the
//! template's `Events`, so that a route cannot be served here and missing behind API
//! Gateway.
//!
//! The Lambda functions only serve: they take each handler's path and methods from its
//! annotation, which costs two small allocations, and never build the document. `tally`
//! collects the same handlers with their operations and schemas through `utoipa-axum`.

use std::sync::LazyLock;

use axum::Router;
use axum::handler::Handler;
use axum::http::Method;
use axum::middleware;
use axum::routing::{MethodFilter, MethodRouter};
use utoipa::openapi::path::HttpMethod;
use utoipa_axum::PathItemExt;

use super::problem::Code;
use super::query::{self, QueryNames};
use super::{AppState, orders, tickets};

/// The Lambda function of template.yaml that serves a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Function {
    /// `TicketsFunction`: draws, purchases, voids, lists, tickets, winners read.
    Tickets,
    /// `DrawingFunction`: the routes that compute a draw's whole eligible list (the close
    /// freezes it), with more memory and the longer deadline.
    Drawing,
    /// `OrdersFunction`: series and orders.
    Orders,
}

impl Function {
    /// The codes every route of the function may answer besides its own.
    pub fn shared_codes(self) -> &'static [Code] {
        match self {
            Self::Orders => orders::SHARED_CODES,
            Self::Tickets | Self::Drawing => &[],
        }
    }
}

/// A route as a table declares it.
#[derive(Debug)]
pub(super) struct Route {
    pub function: Function,
    pub path: String,
    pub methods: Vec<Method>,
    /// The codes of the handler's own errors.
    pub codes: &'static [Code],
}

impl Route {
    /// The route of the handler annotated by `P`, served by `function`.
    pub fn of<P: utoipa::Path>(function: Function, codes: &'static [Code]) -> Self {
        Self {
            function,
            path: P::path(),
            methods: P::methods().iter().map(http_method).collect(),
            codes,
        }
    }
}

/// Every route of every table.
pub(super) fn declared() -> Vec<Route> {
    let mut routes = tickets::declared();
    routes.extend(orders::declared());
    routes
}

/// Whether the drawing function serves `method` on the matched `path`: its routes get the
/// longer deadline.
pub(super) fn is_drawing(method: &Method, path: &str) -> bool {
    static DRAWING: LazyLock<Vec<Route>> = LazyLock::new(|| {
        declared()
            .into_iter()
            .filter(|route| route.function == Function::Drawing)
            .collect()
    });
    DRAWING
        .iter()
        .any(|route| route.path == path && route.methods.contains(method))
}

fn http_method(method: &HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Trace => Method::TRACE,
    }
}

/// Routes `handler` at the path and methods of its annotation `P`, refusing any query
/// parameter its extractors `T` do not read.
pub(super) fn serve<P, H, T>(router: Router<AppState>, handler: H) -> Router<AppState>
where
    P: utoipa::Path,
    H: Handler<T, AppState>,
    T: QueryNames + 'static,
{
    let filter = P::methods()
        .iter()
        .map(PathItemExt::to_method_filter)
        .reduce(MethodFilter::or)
        .expect("an annotated handler names at least one method");
    let taken = T::query_names();
    let route = MethodRouter::new()
        .on(filter, handler)
        .route_layer(middleware::from_fn(move |request, next| {
            query::only_taken(taken, request, next)
        }));
    router.route(&P::path(), route)
}

/// `route_table!(Function: module::handler, ...; Function: ...)` defines `served()`, the
/// router of these handlers, `declared()`, their routes with the function that serves
/// each and the codes of each handler's own errors (`module::HANDLER_CODES`), and
/// `documented()`, the same handlers with their OpenAPI paths and schemas.
macro_rules! route_table {
    ($($function:ident: $($module:ident :: $handler:ident),+);+ $(;)?) => {
        fn served() -> axum::Router<$crate::api::AppState> {
            let router = axum::Router::new();
            $($(
                let router = pastey::paste! {
                    $crate::api::routes::serve::<$module::[<__path_ $handler>], _, _>(
                        router,
                        $module::$handler,
                    )
                };
            )+)+
            router
        }

        pub(in crate::api) fn declared() -> Vec<$crate::api::routes::Route> {
            vec![$($(
                pastey::paste! {
                    $crate::api::routes::Route::of::<$module::[<__path_ $handler>]>(
                        $crate::api::routes::Function::$function,
                        $module::[<$handler:upper _CODES>],
                    )
                },
            )+)+]
        }

        pub(in crate::api) fn documented()
        -> utoipa_axum::router::OpenApiRouter<$crate::api::AppState> {
            utoipa_axum::router::OpenApiRouter::new()
                $($(.routes(utoipa_axum::routes!($module::$handler)))+)+
        }
    };
}

pub(super) use route_table;

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// `(function's logical id, method, path)` of every `HttpApi` event in template.yaml:
    /// its resources sit at an indent of two spaces, and an event's `Method` comes before
    /// its `Path`, as the file writes them.
    fn template_events() -> BTreeSet<(String, String, String)> {
        let template = include_str!("../../template.yaml");
        let (mut resource, mut method) = (String::new(), None);
        let mut events = BTreeSet::new();
        for line in template.lines() {
            let indent = line.len() - line.trim_start().len();
            let line = line.trim();
            if indent == 2 && line.ends_with(':') {
                resource = line.trim_end_matches(':').to_owned();
            } else if let Some(m) = line.strip_prefix("Method: ") {
                method = Some(m.to_owned());
            } else if let Some(path) = line.strip_prefix("Path: ") {
                let method = method
                    .take()
                    .expect("an event's Method comes before its Path");
                events.insert((resource.clone(), method, path.to_owned()));
            }
        }
        events
    }

    fn resource(function: Function) -> &'static str {
        match function {
            Function::Tickets => "TicketsFunction",
            Function::Drawing => "DrawingFunction",
            Function::Orders => "OrdersFunction",
        }
    }

    #[test]
    fn each_route_is_an_event_of_the_function_that_serves_it_in_the_template() {
        let declared: BTreeSet<_> = declared()
            .into_iter()
            .flat_map(|route| {
                route.methods.into_iter().map(move |method| {
                    let function = resource(route.function).to_owned();
                    (function, method.to_string(), route.path.clone())
                })
            })
            .collect();
        let template = template_events();
        assert!(!declared.is_empty());
        let missing: Vec<_> = declared.difference(&template).collect();
        let unserved: Vec<_> = template.difference(&declared).collect();
        assert!(
            missing.is_empty() && unserved.is_empty(),
            "routes missing from template.yaml's Events: {missing:?}; \
             template events no route table declares: {unserved:?}"
        );
    }

    /// The `METHOD/PATH` patterns that api.md's "Who may call what" grants its roles.
    fn granted_in_api_md() -> Vec<&'static str> {
        let api = include_str!("../../docs/api.md");
        let section = api
            .split("\n## Who may call what\n")
            .nth(1)
            .and_then(|rest| rest.split("\n## ").next())
            .expect("api.md has a section \"Who may call what\"");
        let table = section.lines().filter(|line| line.starts_with("| "));
        table
            .flat_map(|line| line.split('`').skip(1).step_by(2))
            .filter(|span| {
                span.split_once('/').is_some_and(|(method, _)| {
                    matches!(method, "GET" | "POST" | "PUT" | "PATCH" | "DELETE")
                })
            })
            .collect()
    }

    /// Whether IAM's `pattern` covers `resource`: `*` matches any text, `/` included, and
    /// the whole of it must match.
    fn covers(pattern: &str, resource: &str) -> bool {
        match pattern.split_once('*') {
            None => pattern == resource,
            Some((head, tail)) => resource.strip_prefix(head).is_some_and(|rest| {
                (0..=rest.len())
                    .filter(|&at| rest.is_char_boundary(at))
                    .any(|at| covers(tail, &rest[at..]))
            }),
        }
    }

    #[test]
    fn api_md_grants_each_route_to_a_role_and_names_no_other() {
        let resources: Vec<String> = declared()
            .into_iter()
            .flat_map(|route| {
                let path = route.path.clone();
                route
                    .methods
                    .into_iter()
                    .map(move |method| format!("{method}{path}"))
            })
            .collect();
        let granted = granted_in_api_md();
        let ungranted: Vec<_> = resources
            .iter()
            .filter(|resource| !granted.iter().any(|pattern| covers(pattern, resource)))
            .collect();
        let stale: Vec<_> = granted
            .iter()
            .filter(|pattern| !resources.iter().any(|resource| covers(pattern, resource)))
            .collect();
        assert!(
            ungranted.is_empty() && stale.is_empty(),
            "routes no role of api.md is granted: {ungranted:?}; \
             patterns of api.md no route matches: {stale:?}"
        );
    }

    #[test]
    fn an_iam_pattern_covers_whole_paths_only() {
        assert!(covers(
            "GET/draws/*",
            "GET/draws/{draw_id}/tickets/{number}"
        ));
        assert!(covers(
            "POST/draws/*/purchases",
            "POST/draws/{draw_id}/purchases"
        ));
        assert!(!covers(
            "POST/draws/*/purchases",
            "POST/draws/{draw_id}/purchases/{payment_id}/void"
        ));
        assert!(!covers("GET/draws", "GET/draws/{draw_id}"));
    }

    #[test]
    fn only_the_whole_draw_routes_get_the_longer_deadline() {
        assert!(is_drawing(&Method::POST, "/draws/{draw_id}/close"));
        assert!(is_drawing(&Method::GET, "/draws/{draw_id}/eligible"));
        assert!(is_drawing(&Method::POST, "/draws/{draw_id}/winners"));
        assert!(!is_drawing(&Method::GET, "/draws/{draw_id}/winners"));
        assert!(!is_drawing(&Method::POST, "/draws/{draw_id}/purchases"));
    }
}
