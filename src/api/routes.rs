//! One route table per group of routes, read from the handlers' `#[utoipa::path]`
//! annotations, so that the routes served and the OpenAPI document cannot disagree.
//!
//! The Lambda functions only serve: they take each handler's path and methods from its
//! annotation, which costs two small allocations, and never build the document. `tally`
//! collects the same handlers with their operations and schemas through `utoipa-axum`.

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodFilter, MethodRouter};
use utoipa_axum::PathItemExt;

use super::AppState;

/// Routes `handler` at the path and methods of its annotation `P`.
pub(super) fn serve<P, H, T>(router: Router<AppState>, handler: H) -> Router<AppState>
where
    P: utoipa::Path,
    H: Handler<T, AppState>,
    T: 'static,
{
    let filter = P::methods()
        .iter()
        .map(PathItemExt::to_method_filter)
        .reduce(MethodFilter::or)
        .expect("an annotated handler names at least one method");
    router.route(&P::path(), MethodRouter::new().on(filter, handler))
}

/// `route_table!(module::handler, ...)` defines `served()`, the router of these handlers,
/// and `documented()`, the same handlers with their OpenAPI paths and schemas.
macro_rules! route_table {
    ($($module:ident :: $handler:ident),+ $(,)?) => {
        fn served() -> axum::Router<$crate::api::AppState> {
            let router = axum::Router::new();
            $(
                let router = pastey::paste! {
                    $crate::api::routes::serve::<$module::[<__path_ $handler>], _, _>(
                        router,
                        $module::$handler,
                    )
                };
            )+
            router
        }

        pub(in crate::api) fn documented()
        -> utoipa_axum::router::OpenApiRouter<$crate::api::AppState> {
            utoipa_axum::router::OpenApiRouter::new()
                $(.routes(utoipa_axum::routes!($module::$handler)))+
        }
    };
}

pub(super) use route_table;
