//! Which sources a caller may act as: post, repost and read orders of.

use std::collections::BTreeSet;

use super::ids::SourceId;

/// The sources a caller is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceAccess {
    /// Every source: any caller of a deployment without bindings (the local server), the
    /// queue, or a caller the deployment binds to all.
    All,
    /// These sources only (none at all for an identity the deployment does not know).
    Only(BTreeSet<SourceId>),
}

impl SourceAccess {
    pub fn allows(&self, source: &SourceId) -> bool {
        match self {
            Self::All => true,
            Self::Only(sources) => sources.contains(source),
        }
    }

    /// Whether the caller is bound to some sources only: it reads no order of another
    /// source, and answers name no such order's number (a series' `last_number` neither).
    pub fn is_bound(&self) -> bool {
        matches!(self, Self::Only(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_caller_may_act_only_as_its_sources() {
        let erp = SourceId::parse("erp-1").unwrap();
        let shop = SourceId::parse("shop").unwrap();
        let bound = SourceAccess::Only(BTreeSet::from([erp.clone()]));
        assert!(bound.allows(&erp) && !bound.allows(&shop));
        assert!(SourceAccess::All.allows(&shop));
        assert!(!SourceAccess::Only(BTreeSet::new()).allows(&erp));
    }
}
