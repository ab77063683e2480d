//! Who calls: behind API Gateway, the identity its authorizer established decides which
//! sources the caller may post, repost and read orders of, by the bindings the stack
//! declares (`settings::sources`). An identity is the IAM principal that signed the
//! request (the request context's `authorizer.iam.userArn`), or, where the API takes an
//! OpenID Connect issuer's tokens instead, the token's issuer and the claim the bindings
//! name callers by (`authorizer.jwt.claims`; `sub` unless `TALLY_JWT_CLAIM` names another).
//! Without bindings (the local server), every source is allowed. With bindings, a request
//! without an identity (a route left without its authorizer, a direct invocation) is
//! refused: the bindings fail closed.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use lambda_http::request::RequestContext;
use sha2::{Digest, Sha256};
use tally_domain::access::SourceAccess;
use tally_domain::hex;
use tally_domain::journal::Operator;
use tally_domain::text::refused_in_text;

use super::AppState;
use super::problem::{Code, Problem};
use crate::settings::{Identity, Unidentified, token_caller};

impl From<Unidentified> for Problem {
    fn from(_: Unidentified) -> Self {
        Problem::new(
            Code::IdentityRequired,
            "this deployment binds callers to order sources, and the request carries no identity (IAM or a token): call it through the API, with its authorizer",
        )
    }
}

/// The identity of a request that came through API Gateway with an authorizer: IAM's, or
/// a checked token's, named by `claim`.
fn identity(parts: &Parts, claim: &str) -> Option<Identity> {
    let RequestContext::ApiGatewayV2(context) = parts.extensions.get::<RequestContext>()? else {
        return None;
    };
    let authorizer = context.authorizer.as_ref()?;
    if let Some(arn) = authorizer
        .iam
        .as_ref()
        .and_then(|iam| iam.user_arn.as_deref())
    {
        return Some(Identity::Iam(arn.to_owned()));
    }
    let claims = &authorizer.jwt.as_ref()?.claims;
    Some(Identity::Jwt {
        token_issuer: claims.get("iss")?.clone(),
        name: claims.get(claim).cloned(),
    })
}

/// The sources the caller may act as. Every order route extracts it (a layer of the
/// order routes does, for those whose handler does not), so none serves a request the
/// bindings refuse.
pub struct Caller(pub SourceAccess);

impl FromRequestParts<AppState> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Problem> {
        let identity = identity(parts, state.sources.token_claim());
        Ok(Caller(state.sources.access(identity.as_ref())?))
    }
}

/// Who an operator action is journalled under: the IAM principal's ARN, the token's
/// `jwt:<token issuer>#<claim value>` (as bindings name callers), or `local` for a request
/// without an identity (the local server). Every operator route extracts it.
pub struct Acting(pub Operator);

impl FromRequestParts<AppState> for Acting {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Problem> {
        Ok(Acting(operator(identity(
            parts,
            state.sources.token_claim(),
        ))))
    }
}

fn operator(identity: Option<Identity>) -> Operator {
    match identity {
        Some(Identity::Iam(arn)) => Operator::named(arn),
        Some(Identity::Jwt {
            token_issuer,
            name: Some(name),
        }) => Operator::named(token_caller(&token_issuer, &journal_name(&name))),
        Some(Identity::Jwt {
            token_issuer,
            name: None,
        }) => Operator::named(format!("jwt:{token_issuer}")),
        None => Operator::local(),
    }
}

/// The longest claim value the journal names an operator by as it is.
const MAX_CLAIM_CHARS: usize = 256;

/// A token's claim value as the journal names its caller: as it is when it is free text
/// (no control or bidirectional characters) of at most [`MAX_CLAIM_CHARS`], else
/// `sha256:` and the first 16 bytes of its digest, so that the journal holds only text
/// that prints as it reads, and one name per value.
fn journal_name(claim: &str) -> String {
    if claim.chars().count() <= MAX_CLAIM_CHARS && refused_in_text(claim).is_none() {
        return claim.to_owned();
    }
    let digest = Sha256::digest(claim.as_bytes());
    format!("sha256:{}", hex::encode(&digest[..16]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_without_an_identity_where_callers_are_bound_is_told_to_use_an_authorizer() {
        assert_eq!(
            Problem::from(Unidentified).code().as_str(),
            "identity_required"
        );
    }

    #[test]
    fn an_operator_is_named_by_principal_token_or_as_local() {
        let arn = "arn:aws:sts::123456789012:assumed-role/ops/alice";
        assert_eq!(operator(Some(Identity::Iam(arn.to_owned()))).as_str(), arn);
        let token = Identity::Jwt {
            token_issuer: "https://id.example".to_owned(),
            name: Some("ops-1".to_owned()),
        };
        assert_eq!(
            operator(Some(token)).as_str(),
            "jwt:https://id.example#ops-1"
        );
        assert_eq!(operator(None).as_str(), "local");
    }

    #[test]
    fn a_claim_that_is_not_short_free_text_names_its_operator_by_its_digest() {
        let named = |claim: &str| {
            operator(Some(Identity::Jwt {
                token_issuer: "https://id.example".to_owned(),
                name: Some(claim.to_owned()),
            }))
            .as_str()
            .to_owned()
        };
        let reversed = named("ops\u{202e}nimda");
        assert!(
            reversed.starts_with("jwt:https://id.example#sha256:"),
            "{reversed}"
        );
        assert!(refused_in_text(&reversed).is_none());
        assert_ne!(reversed, named("ops\u{202e}other"));
        let long = named(&"x".repeat(5_000));
        assert_eq!(long.len(), "jwt:https://id.example#sha256:".len() + 32);
        assert_eq!(
            named(&"x".repeat(256)),
            format!("jwt:https://id.example#{}", "x".repeat(256))
        );
    }
}
