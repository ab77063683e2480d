//! Which callers may act as which order sources (`TALLY_SOURCE_BINDINGS`): IAM principals,
//! and token callers named by an OpenID Connect issuer and one claim (`TALLY_JWT_CLAIM`).
//! Read with the other settings; the HTTP API consults them for each order request with
//! the identity API Gateway's authorizer established (`api::caller`).

use std::collections::{BTreeSet, HashMap};

use tally_domain::access::SourceAccess;
use tally_domain::ids::SourceId;

/// The variable that declares the bindings.
pub const SOURCE_BINDINGS_VAR: &str = "TALLY_SOURCE_BINDINGS";
/// The variable that names the token claim JWT bindings name callers by.
pub const JWT_CLAIM_VAR: &str = "TALLY_JWT_CLAIM";
/// The claim JWT bindings name callers by unless [`JWT_CLAIM_VAR`] names another.
pub const DEFAULT_JWT_CLAIM: &str = "sub";

/// Who called, as API Gateway's authorizer established it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// The IAM principal that signed the request: its ARN.
    Iam(String),
    /// A JSON Web Token the JWT authorizer checked: its token issuer (`iss`), and the value of
    /// the claim the bindings name callers by, if the token has it.
    Jwt {
        token_issuer: String,
        name: Option<String>,
    },
}

/// Which callers may act as which sources:
/// `<principal ARN>=<source>,<source>;jwt:<issuer>#<claim value>=<source>;<ARN>=*;...`.
/// An IAM principal is a role or user (a role's sessions and a path in its ARN do not
/// matter); a token's caller is its issuer and the value of the bound claim.
#[derive(Debug, Clone)]
pub struct SourceBindings {
    bindings: Option<HashMap<String, SourceAccess>>,
    /// The token claim JWT bindings name callers by.
    claim: String,
}

impl Default for SourceBindings {
    fn default() -> Self {
        Self::open()
    }
}

impl SourceBindings {
    /// Every caller may act as every source.
    pub fn open() -> Self {
        Self {
            bindings: None,
            claim: DEFAULT_JWT_CLAIM.to_owned(),
        }
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Ok(Self::open());
        }
        let mut bindings = HashMap::new();
        for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            // Sources never hold `=`; a token's claim value may.
            let (principal, sources) = entry.rsplit_once('=').ok_or_else(|| {
                format!("{SOURCE_BINDINGS_VAR}: {entry:?} is not <principal>=<sources>")
            })?;
            let principal = bound_principal(principal.trim())?;
            let mut only = BTreeSet::new();
            let mut all = false;
            for source in sources.split(',').map(str::trim) {
                if source == "*" {
                    all = true;
                } else {
                    only.insert(
                        SourceId::parse(source)
                            .map_err(|e| format!("{SOURCE_BINDINGS_VAR}: {e}"))?,
                    );
                }
            }
            let access = if all {
                SourceAccess::All
            } else {
                SourceAccess::Only(only)
            };
            if bindings.insert(principal.clone(), access).is_some() {
                return Err(format!("{SOURCE_BINDINGS_VAR}: {principal} is bound twice"));
            }
        }
        Ok(Self {
            bindings: Some(bindings),
            claim: DEFAULT_JWT_CLAIM.to_owned(),
        })
    }

    /// The bindings naming token callers by `claim` (`None`: [`DEFAULT_JWT_CLAIM`]).
    pub fn with_token_claim(self, claim: Option<&str>) -> Result<Self, String> {
        let claim = claim.unwrap_or(DEFAULT_JWT_CLAIM);
        let valid = !claim.is_empty()
            && claim.len() <= 64
            && claim
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.' | '-'));
        if !valid {
            return Err(format!(
                "{JWT_CLAIM_VAR}: {claim:?} is not a claim name (1 to 64 letters, digits, '_', ':', '.', '-')"
            ));
        }
        Ok(Self {
            claim: claim.to_owned(),
            ..self
        })
    }

    /// The claim token callers are named by.
    pub fn token_claim(&self) -> &str {
        &self.claim
    }

    /// What the caller `identity` may act as. A caller the bindings do not name may act
    /// as no source; with bindings, a caller without an identity is not served at all.
    pub fn access(&self, identity: Option<&Identity>) -> Result<SourceAccess, Unidentified> {
        let Some(bindings) = &self.bindings else {
            return Ok(SourceAccess::All);
        };
        let principal = match identity.ok_or(Unidentified)? {
            Identity::Iam(arn) => Some(principal_of(arn)),
            Identity::Jwt { token_issuer, name } => {
                name.as_ref().map(|name| token_caller(token_issuer, name))
            }
        };
        Ok(principal
            .and_then(|principal| bindings.get(&principal).cloned())
            .unwrap_or_else(|| SourceAccess::Only(BTreeSet::new())))
    }
}

/// A principal as a binding writes it: an IAM role or user ARN, or `jwt:<issuer>#<value>`.
fn bound_principal(principal: &str) -> Result<String, String> {
    if principal.starts_with("arn:") {
        return Ok(principal_of(principal));
    }
    if let Some(token) = principal.strip_prefix("jwt:") {
        return match token.split_once('#') {
            Some((issuer, name)) if !issuer.is_empty() && !name.is_empty() => {
                Ok(token_caller(issuer, name))
            }
            _ => Err(format!(
                "{SOURCE_BINDINGS_VAR}: {principal:?} is not jwt:<token issuer>#<claim value>"
            )),
        };
    }
    Err(format!(
        "{SOURCE_BINDINGS_VAR}: {principal:?} is neither an IAM role or user ARN nor jwt:<token issuer>#<claim value>"
    ))
}

/// How a token's caller is named: its issuer and the bound claim's value.
pub fn token_caller(issuer: &str, name: &str) -> String {
    format!("jwt:{issuer}#{name}")
}

/// A request without an identity, where the deployment binds callers to sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unidentified;

/// The principal an ARN stands for: a role for its assumed-role sessions, without the
/// path a role's or user's ARN may carry (names are unique in an account without it).
fn principal_of(arn: &str) -> String {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [_, partition, service, _, account, resource] = parts.as_slice() else {
        return arn.to_owned();
    };
    let named: Vec<&str> = resource.split('/').collect();
    match (*service, named.as_slice()) {
        ("sts", ["assumed-role", role, ..]) => {
            format!("arn:{partition}:iam::{account}:role/{role}")
        }
        ("iam", [kind @ ("role" | "user"), .., name]) => {
            format!("arn:{partition}:iam::{account}:{kind}/{name}")
        }
        _ => arn.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ERP: &str = "arn:aws:iam::123456789012:role/erp-connector";

    #[test]
    fn a_bound_role_acts_as_its_sources_in_any_session() {
        let bindings = SourceBindings::parse(&format!(
            "{ERP}=erp-1,erp-2; arn:aws:iam::123456789012:role/ops/admin=*"
        ))
        .unwrap();
        let erp = SourceId::parse("erp-1").unwrap();
        let shop = SourceId::parse("shop").unwrap();
        let session = "arn:aws:sts::123456789012:assumed-role/erp-connector/lambda-7";
        let iam = |arn: &str| Identity::Iam(arn.to_owned());
        let access = bindings.access(Some(&iam(session))).unwrap();
        assert!(access.allows(&erp) && !access.allows(&shop));
        let admin = "arn:aws:sts::123456789012:assumed-role/admin/me";
        assert_eq!(bindings.access(Some(&iam(admin))), Ok(SourceAccess::All));
        let stranger = "arn:aws:sts::123456789012:assumed-role/web-shop/s";
        assert!(!bindings.access(Some(&iam(stranger))).unwrap().allows(&erp));
        assert!(
            !bindings
                .access(Some(&iam(
                    "arn:aws:sts::999999999999:assumed-role/erp-connector/s"
                )))
                .unwrap()
                .allows(&erp)
        );
        // Without bindings (the local server), every source, with or without IAM.
        for identity in [Some(iam(session)), None] {
            assert_eq!(
                SourceBindings::open().access(identity.as_ref()),
                Ok(SourceAccess::All)
            );
        }
    }

    #[test]
    fn with_bindings_a_caller_without_an_identity_has_no_access() {
        let bindings = SourceBindings::parse(&format!("{ERP}=erp-1")).unwrap();
        assert_eq!(bindings.access(None), Err(Unidentified));
    }

    #[test]
    fn a_token_caller_is_bound_by_its_issuer_and_the_bound_claim() {
        const ISSUER: &str = "https://auth.example.com/";
        let bindings = SourceBindings::parse(&format!(
            "jwt:{ISSUER}#shop-backend=shop; jwt:{ISSUER}#b64/x==erp-1; {ERP}=erp-1"
        ))
        .unwrap();
        let token = |issuer: &str, name: Option<&str>| Identity::Jwt {
            token_issuer: issuer.to_owned(),
            name: name.map(str::to_owned),
        };
        let shop = SourceId::parse("shop").unwrap();
        let erp = SourceId::parse("erp-1").unwrap();
        let access = bindings
            .access(Some(&token(ISSUER, Some("shop-backend"))))
            .unwrap();
        assert!(access.allows(&shop) && !access.allows(&erp));
        // A claim value may hold `=`.
        let access = bindings
            .access(Some(&token(ISSUER, Some("b64/x="))))
            .unwrap();
        assert!(access.allows(&erp));
        // The same name from another issuer, or a token without the claim, is no one.
        for stranger in [
            token("https://evil.example.com/", Some("shop-backend")),
            token(ISSUER, None),
        ] {
            assert_eq!(
                bindings.access(Some(&stranger)),
                Ok(SourceAccess::Only(BTreeSet::new()))
            );
        }
        assert_eq!(bindings.token_claim(), "sub");
        let by_client = bindings.with_token_claim(Some("client_id")).unwrap();
        assert_eq!(by_client.token_claim(), "client_id");
        assert!(
            SourceBindings::open()
                .with_token_claim(Some("a b"))
                .is_err()
        );
    }

    #[test]
    fn bad_bindings_are_refused_with_what_is_wrong() {
        assert!(SourceBindings::parse("").is_ok());
        for bad in [
            "erp-connector=erp-1",
            ERP,
            &format!("{ERP}=erp#1"),
            &format!("{ERP}=a;{ERP}=b"),
            "jwt:https://auth.example.com/=shop",
            "jwt:#sub=shop",
        ] {
            assert!(SourceBindings::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            principal_of("arn:aws:iam::1:user/team/alice"),
            "arn:aws:iam::1:user/alice"
        );
    }
}
