//! A drand network whose keys the tests hold (tests/fixtures/beacon.json, made with
//! py_ecc): its definition as TALLY_BEACON_NETWORKS takes it, and the signatures of its
//! rounds, so that a test decides when a round is published.

use serde_json::{Value, json};

/// Round 1 of the test network, in Unix seconds; a round every 10 s.
pub const GENESIS: i64 = 1_700_000_000;
pub const PERIOD: i64 = 10;

/// The keys' fixture: the public key and the signatures of rounds 1 to 48, and another
/// key's signatures of rounds 1 to 8.
pub fn fixture() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/beacon.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The network's definition, as TALLY_BEACON_NETWORKS takes it.
pub fn networks_json() -> String {
    network_json(GENESIS, PERIOD)
}

/// The test network named `test`, its round 1 at Unix second `genesis`, a round every
/// `period` seconds.
pub fn network_json(genesis: i64, period: i64) -> String {
    json!([{"name": "test", "scheme": "pedersen-bls-unchained",
            "public_key": fixture()["public_key"], "genesis_time": genesis, "period": period}])
    .to_string()
}

pub fn signature(round: u64) -> String {
    fixture()["signatures"][round.to_string()]
        .as_str()
        .unwrap_or_else(|| panic!("no signature of round {round} in the fixture"))
        .to_owned()
}

/// When round `round` is published, in Unix milliseconds.
pub fn published_ms(round: u64) -> i64 {
    (GENESIS + (round as i64 - 1) * PERIOD) * 1_000
}
