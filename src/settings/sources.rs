//! Which IAM principals may act as which order sources (`TALLY_SOURCE_BINDINGS`), read
//! with the other settings and consulted by the HTTP API for each order request.

use std::collections::{BTreeSet, HashMap};

use tally_domain::access::SourceAccess;
use tally_domain::ids::SourceId;

/// The variable that declares the bindings.
pub const SOURCE_BINDINGS_VAR: &str = "TALLY_SOURCE_BINDINGS";

/// Which principals may act as which sources:
/// `<principal ARN>=<source>,<source>;<principal ARN>=*;...`. A principal is an IAM role
/// or user; a role's sessions and a path in its ARN do not matter.
#[derive(Debug, Clone, Default)]
pub struct SourceBindings(Option<HashMap<String, SourceAccess>>);

impl SourceBindings {
    /// Every caller may act as every source.
    pub fn open() -> Self {
        Self(None)
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Ok(Self::open());
        }
        let mut bindings = HashMap::new();
        for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            let (principal, sources) = entry.split_once('=').ok_or_else(|| {
                format!("{SOURCE_BINDINGS_VAR}: {entry:?} is not <principal ARN>=<sources>")
            })?;
            let principal = principal.trim();
            if !principal.starts_with("arn:") {
                return Err(format!(
                    "{SOURCE_BINDINGS_VAR}: {principal:?} is not an IAM role or user ARN"
                ));
            }
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
            if bindings.insert(principal_of(principal), access).is_some() {
                return Err(format!("{SOURCE_BINDINGS_VAR}: {principal} is bound twice"));
            }
        }
        Ok(Self(Some(bindings)))
    }

    /// What the caller `identity` (an IAM ARN, `None` without IAM) may act as. A caller
    /// the bindings do not name may act as no source; with bindings, a caller without an
    /// identity is not served at all.
    pub fn access(&self, identity: Option<&str>) -> Result<SourceAccess, Unidentified> {
        match (&self.0, identity) {
            (None, _) => Ok(SourceAccess::All),
            (Some(_), None) => Err(Unidentified),
            (Some(bindings), Some(arn)) => Ok(bindings
                .get(&principal_of(arn))
                .cloned()
                .unwrap_or_else(|| SourceAccess::Only(BTreeSet::new()))),
        }
    }
}

/// A request without an IAM identity, where the deployment binds callers to sources.
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
        let access = bindings.access(Some(session)).unwrap();
        assert!(access.allows(&erp) && !access.allows(&shop));
        let admin = "arn:aws:sts::123456789012:assumed-role/admin/me";
        assert_eq!(bindings.access(Some(admin)), Ok(SourceAccess::All));
        let stranger = "arn:aws:sts::123456789012:assumed-role/web-shop/s";
        assert!(!bindings.access(Some(stranger)).unwrap().allows(&erp));
        assert!(
            !bindings
                .access(Some(
                    "arn:aws:sts::999999999999:assumed-role/erp-connector/s"
                ))
                .unwrap()
                .allows(&erp)
        );
        // Without bindings (the local server), every source, with or without IAM.
        for identity in [Some(session), None] {
            assert_eq!(
                SourceBindings::open().access(identity),
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
    fn bad_bindings_are_refused_with_what_is_wrong() {
        assert!(SourceBindings::parse("").is_ok());
        for bad in [
            "erp-connector=erp-1",
            ERP,
            &format!("{ERP}=erp#1"),
            &format!("{ERP}=a;{ERP}=b"),
        ] {
            assert!(SourceBindings::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            principal_of("arn:aws:iam::1:user/team/alice"),
            "arn:aws:iam::1:user/alice"
        );
    }
}
