//! Who calls: behind API Gateway, the IAM identity that signed the request (the request
//! context's `authorizer.iam.userArn`) decides which sources the caller may post, repost
//! and read orders of, by the bindings the stack declares (`TALLY_SOURCE_BINDINGS`).
//! Without bindings (the local server), every source is allowed. With bindings, a request
//! without an identity (a route left without IAM auth, a direct invocation) is refused:
//! the bindings fail closed.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use lambda_http::request::RequestContext;

use super::AppState;
use super::problem::{Code, Problem};
use tally_domain::access::SourceAccess;

use crate::settings::Unidentified;

impl From<Unidentified> for Problem {
    fn from(_: Unidentified) -> Self {
        Problem::new(
            Code::IdentityRequired,
            "this deployment binds callers to order sources, and the request carries no IAM identity: call it through the API with IAM auth",
        )
    }
}

/// The IAM identity of a request that came through API Gateway with IAM auth.
fn identity(parts: &Parts) -> Option<&str> {
    match parts.extensions.get::<RequestContext>()? {
        RequestContext::ApiGatewayV2(context) => context
            .authorizer
            .as_ref()?
            .iam
            .as_ref()?
            .user_arn
            .as_deref(),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// The sources the caller may act as. Every order route extracts it (a layer of the
/// order routes does, for those whose handler does not), so none serves a request the
/// bindings refuse.
pub struct Caller(pub SourceAccess);

impl FromRequestParts<AppState> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Problem> {
        Ok(Caller(state.sources.access(identity(parts))?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_without_an_identity_where_callers_are_bound_is_told_to_use_iam() {
        assert_eq!(
            Problem::from(Unidentified).code().as_str(),
            "identity_required"
        );
    }
}
