//! The rules of Tally, free of AWS types: no SDK, no tokio, no HTTP. The service (the
//! `tally` crate), the command line and the browser verifier's WebAssembly all depend on
//! this crate, and it depends on none of them, so a rule cannot reach for the table.
//!
//! # A tour
//!
//! - Names: [`ids`] (parsed once, valid everywhere: a `#` never reaches a key), [`text`]
//!   (the characters free text may hold), [`time`] (how times are read and written, and
//!   the [`Clock`](time::Clock) services read), [`hex`].
//! - Draws: [`draw`] (settings and status), [`schedule`], [`stripes`] and [`permutation`]
//!   (which number the i-th sale gets, and how purchases share the draw),
//!   [`availability`], [`hold`], [`purchase`], [`instant`] (instant wins), [`seed`],
//!   [`secret`] (the deployment secret and what is derived from it), [`winners`] (the
//!   draw anyone can check).
//! - Numbering: [`series`] (formats, calendars, periods, blocks, ranges, and the issuers
//!   whose series may not render one text), [`order`],
//!   [`access`] (which sources a caller may act as), [`chain`] (the hash chain of a
//!   gapless period) and [`audit`].
//! - [`events`]: the facts told to integrators; [`journal`]: the numbered, chained record
//!   of every operator action.
//!
//! # Features
//!
//! - `openapi`: the `utoipa` schemas of the types that answers and events carry, and the
//!   events' JSON Schemas. The service turns it on; the verifier does without.
//! - `os-rng`: fresh draw ids, seeds and permutation keys from the operating system's
//!   random source. Without it the crate needs no random source of its own, so that the
//!   WebAssembly build needs no `getrandom` backend.

pub mod access;
pub mod audit;
pub mod availability;
pub mod chain;
pub mod draw;
pub mod events;
pub mod hex;
pub mod hold;
pub mod ids;
pub mod instant;
pub mod journal;
pub mod order;
pub mod permutation;
pub mod purchase;
pub mod schedule;
pub mod secret;
pub mod seed;
pub mod series;
pub mod spend;
pub mod stripes;
pub mod text;
pub mod time;
pub mod winners;

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    /// Each package of Cargo.lock and the names of the packages it depends on.
    fn locked_packages() -> BTreeMap<String, Vec<String>> {
        let lock = include_str!("../../../Cargo.lock");
        let mut packages = BTreeMap::new();
        for block in lock.split("[[package]]").skip(1) {
            let name = block
                .lines()
                .find_map(|l| l.strip_prefix("name = "))
                .expect("a package has a name")
                .trim_matches('"')
                .to_owned();
            let dependencies: Vec<String> = block
                .split_once("dependencies = [")
                .map(|(_, list)| {
                    list.split(']')
                        .next()
                        .unwrap_or("")
                        .lines()
                        .filter_map(|l| {
                            let entry = l.trim().trim_end_matches(',').trim_matches('"');
                            entry.split_whitespace().next().map(str::to_owned)
                        })
                })
                .into_iter()
                .flatten()
                .filter(|name| !name.is_empty())
                .collect();
            // A package locked at two versions: what either depends on.
            packages
                .entry(name)
                .or_insert_with(Vec::new)
                .extend(dependencies);
        }
        packages
    }

    /// The rules stay free of the AWS SDK, of an async runtime and of HTTP, whatever
    /// features are on: no package they reach, however indirectly, is one of those.
    #[test]
    fn the_rules_reach_no_aws_sdk_no_async_runtime_and_no_http() {
        let packages = locked_packages();
        let mut reached = BTreeSet::new();
        let mut next = vec!["tally-domain".to_owned()];
        while let Some(name) = next.pop() {
            if reached.insert(name.clone()) {
                next.extend(packages.get(&name).cloned().unwrap_or_default());
            }
        }
        let forbidden = |name: &str| {
            name == "tally"
                || [
                    "aws", "tokio", "hyper", "http", "axum", "lambda", "tower", "reqwest",
                ]
                .iter()
                .any(|prefix| name.starts_with(prefix))
        };
        let found: Vec<&String> = reached.iter().filter(|name| forbidden(name)).collect();
        assert!(found.is_empty(), "tally-domain reaches {found:?}");
        assert!(reached.len() > 20, "the lock was not read: {reached:?}");
    }
}
