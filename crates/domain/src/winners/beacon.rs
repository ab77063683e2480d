//! Public randomness from a drand network: which round a draw uses, and the check of that
//! round's BLS signature, whose SHA-256 is the round's randomness.
//!
//! drand publishes round `r` at `genesis_time + (r - 1) * period`. A signature is checked
//! against the network's public key by `drand-verify`, a maintained implementation of
//! drand's own verification (BLS12-381 pairings), for the unchained schemes whose message
//! is SHA-256 of the round as 8 big-endian bytes.

use drand_verify::{G1Pubkey, G2PubkeyRfc, Pubkey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::hex;

/// How long after the freeze (or a redraw's request) a round must be published to be
/// chosen. It covers what lets a round be public before the moment it follows: a clock of
/// Tally behind the true time (Lambda's clocks follow Amazon Time Sync, well within a
/// second), the freeze's write still landing after its time was read (a store call gives
/// up within seconds), and a drand node publishing a moment early. 30 s is many times all
/// of them and costs a draw half a minute.
pub const ROUND_MARGIN_MS: i64 = 30_000;

/// The name every deployment knows.
pub const QUICKNET: &str = "quicknet";
const QUICKNET_PUBLIC_KEY: &str = "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a";
const QUICKNET_GENESIS_TIME: i64 = 1_692_803_367;
const QUICKNET_PERIOD: u32 = 3;

/// The longest network name.
pub const MAX_NETWORK_NAME_LEN: usize = 64;

/// How a drand network signs its rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// quicknet: signatures on G1 (48 bytes), public key on G2, RFC 9380 hashing.
    UnchainedG1Rfc9380,
    /// Signatures on G2 (96 bytes), public key on G1.
    PedersenUnchained,
}

impl Scheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnchainedG1Rfc9380 => "bls-unchained-g1-rfc9380",
            Self::PedersenUnchained => "pedersen-bls-unchained",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::UnchainedG1Rfc9380, Self::PedersenUnchained]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// Why a network definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetworkError {
    #[error(
        "the networks are not a JSON array of {{name, scheme, public_key, genesis_time, period}}: {0}"
    )]
    Json(String),
    #[error("network names are 1 to {MAX_NETWORK_NAME_LEN} letters, digits, `-` or `_`: {0:?}")]
    Name(String),
    #[error("network {0} is defined twice (quicknet is built in)")]
    Duplicate(String),
    #[error(
        "network {name}: unknown scheme {scheme:?} (known: bls-unchained-g1-rfc9380, pedersen-bls-unchained)"
    )]
    Scheme { name: String, scheme: String },
    #[error("network {0}: the public key is not a point of the scheme's group in hex")]
    PublicKey(String),
    #[error("network {0}: the period must be 1 s or more, the genesis time positive")]
    Timing(String),
}

/// Why a round's signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BeaconError {
    #[error("the signature is not hex")]
    NotHex,
    #[error("the signature is not the network's signature of round {round}")]
    Invalid { round: u64 },
}

/// A drand network: its key and its clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeaconNetwork {
    name: String,
    scheme: Scheme,
    public_key: Vec<u8>,
    genesis_time: i64,
    period: u32,
}

/// A network as configured, as proofs carry it and as a draw keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkFields {
    pub name: String,
    pub scheme: String,
    pub public_key: String,
    pub genesis_time: i64,
    pub period: u32,
}

impl BeaconNetwork {
    pub fn quicknet() -> Self {
        Self::new(
            QUICKNET,
            Scheme::UnchainedG1Rfc9380,
            QUICKNET_PUBLIC_KEY,
            QUICKNET_GENESIS_TIME,
            QUICKNET_PERIOD,
        )
        .expect("quicknet's definition is valid")
    }

    /// A network whose key is a valid point of its scheme.
    pub fn new(
        name: &str,
        scheme: Scheme,
        public_key: &str,
        genesis_time: i64,
        period: u32,
    ) -> Result<Self, NetworkError> {
        let valid_name = (1..=MAX_NETWORK_NAME_LEN).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid_name {
            return Err(NetworkError::Name(name.to_owned()));
        }
        if period == 0 || genesis_time <= 0 {
            return Err(NetworkError::Timing(name.to_owned()));
        }
        let key = hex::decode(public_key).ok_or_else(|| NetworkError::PublicKey(name.into()))?;
        let valid_key = match scheme {
            Scheme::UnchainedG1Rfc9380 => G2PubkeyRfc::from_variable(&key).is_ok(),
            Scheme::PedersenUnchained => G1Pubkey::from_variable(&key).is_ok(),
        };
        if !valid_key {
            return Err(NetworkError::PublicKey(name.to_owned()));
        }
        Ok(Self {
            name: name.to_owned(),
            scheme,
            public_key: key,
            genesis_time,
            period,
        })
    }

    pub fn from_fields(fields: &NetworkFields) -> Result<Self, NetworkError> {
        let scheme = Scheme::parse(&fields.scheme).ok_or_else(|| NetworkError::Scheme {
            name: fields.name.clone(),
            scheme: fields.scheme.clone(),
        })?;
        Self::new(
            &fields.name,
            scheme,
            &fields.public_key,
            fields.genesis_time,
            fields.period,
        )
    }

    /// What [`BeaconNetwork::from_fields`] reads back.
    pub fn fields(&self) -> NetworkFields {
        NetworkFields {
            name: self.name.clone(),
            scheme: self.scheme.as_str().to_owned(),
            public_key: self.public_key_hex(),
            genesis_time: self.genesis_time,
            period: self.period,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    pub fn public_key_hex(&self) -> String {
        hex::encode(&self.public_key)
    }

    /// Unix seconds of round 1.
    pub fn genesis_time(&self) -> i64 {
        self.genesis_time
    }

    /// Seconds between rounds.
    pub fn period(&self) -> u32 {
        self.period
    }

    /// When round `round` (from 1) is published, in Unix milliseconds.
    pub fn published_at_ms(&self, round: u64) -> i64 {
        let steps = i64::try_from(round.saturating_sub(1)).unwrap_or(i64::MAX / 2);
        (self.genesis_time + steps.saturating_mul(i64::from(self.period))).saturating_mul(1_000)
    }

    /// The round a draw frozen at `at_ms` (Unix milliseconds) uses: the first one
    /// published more than [`ROUND_MARGIN_MS`] after it.
    pub fn round_after(&self, at_ms: i64) -> u64 {
        let after = at_ms.saturating_add(ROUND_MARGIN_MS) - self.genesis_time * 1_000;
        if after < 0 {
            return 1;
        }
        (after / (i64::from(self.period) * 1_000)) as u64 + 2
    }

    /// The randomness of `round`: SHA-256 of its signature, once the signature is the
    /// network's.
    pub fn randomness(&self, round: u64, signature_hex: &str) -> Result<[u8; 32], BeaconError> {
        let signature = hex::decode(signature_hex).ok_or(BeaconError::NotHex)?;
        let valid = match self.scheme {
            Scheme::UnchainedG1Rfc9380 => G2PubkeyRfc::from_variable(&self.public_key)
                .map(|key| key.verify(round, &[], &signature))
                .ok(),
            Scheme::PedersenUnchained => G1Pubkey::from_variable(&self.public_key)
                .map(|key| key.verify(round, &[], &signature))
                .ok(),
        };
        match valid {
            Some(Ok(true)) => Ok(Sha256::digest(&signature).into()),
            _ => Err(BeaconError::Invalid { round }),
        }
    }
}

/// The networks a deployment (or a verifier) trusts: quicknet, and those configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeaconNetworks {
    networks: Vec<BeaconNetwork>,
}

impl Default for BeaconNetworks {
    fn default() -> Self {
        Self {
            networks: vec![BeaconNetwork::quicknet()],
        }
    }
}

impl BeaconNetworks {
    /// quicknet and the networks of `json` (a JSON array of network fields), if any.
    pub fn with_json(json: Option<&str>) -> Result<Self, NetworkError> {
        let mut known = Self::default();
        let Some(json) = json.filter(|j| !j.trim().is_empty()) else {
            return Ok(known);
        };
        let list: Vec<NetworkFields> =
            serde_json::from_str(json).map_err(|e| NetworkError::Json(e.to_string()))?;
        for fields in &list {
            known.add(BeaconNetwork::from_fields(fields)?)?;
        }
        Ok(known)
    }

    pub fn add(&mut self, network: BeaconNetwork) -> Result<(), NetworkError> {
        if self.get(network.name()).is_some() {
            return Err(NetworkError::Duplicate(network.name));
        }
        self.networks.push(network);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&BeaconNetwork> {
        self.networks.iter().find(|n| n.name == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.networks.iter().map(|n| n.name.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// quicknet's round 657413, as drand published it.
    const ROUND: u64 = 657_413;
    const SIGNATURE: &str = "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b";
    const RANDOMNESS: &str = "fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587";

    #[test]
    fn a_quicknet_round_verifies_and_its_randomness_is_the_hash_of_its_signature() {
        let quicknet = BeaconNetwork::quicknet();
        let randomness = quicknet.randomness(ROUND, SIGNATURE).unwrap();
        assert_eq!(hex::encode(&randomness), RANDOMNESS);
        assert_eq!(
            quicknet.randomness(ROUND + 1, SIGNATURE),
            Err(BeaconError::Invalid { round: ROUND + 1 })
        );
        let mut forged = SIGNATURE.to_owned();
        forged.replace_range(10..12, "00");
        assert!(quicknet.randomness(ROUND, &forged).is_err());
        assert_eq!(quicknet.randomness(ROUND, "xyz"), Err(BeaconError::NotHex));
        assert!(quicknet.randomness(ROUND, "").is_err());
    }

    #[test]
    fn the_round_is_the_first_published_more_than_the_margin_after_the_moment() {
        let quicknet = BeaconNetwork::quicknet();
        let genesis_ms = QUICKNET_GENESIS_TIME * 1_000;
        assert_eq!(quicknet.published_at_ms(1), genesis_ms);
        assert_eq!(
            quicknet.published_at_ms(ROUND),
            genesis_ms + 3_000 * 657_412
        );
        // Frozen so that round 10 is published exactly at the margin: round 11.
        let at = quicknet.published_at_ms(10) - ROUND_MARGIN_MS;
        assert_eq!(quicknet.round_after(at), 11);
        assert_eq!(quicknet.round_after(at - 1), 10);
        assert_eq!(quicknet.round_after(0), 1);
        for at in [genesis_ms, genesis_ms + 1_234_567, genesis_ms + 99_999_999] {
            let round = quicknet.round_after(at);
            assert!(quicknet.published_at_ms(round) > at + ROUND_MARGIN_MS);
            assert!(quicknet.published_at_ms(round - 1) <= at + ROUND_MARGIN_MS);
        }
    }

    #[test]
    fn networks_are_data_and_bad_definitions_are_named() {
        let key = BeaconNetwork::quicknet().public_key_hex();
        let json = format!(
            r#"[{{"name": "mine", "scheme": "bls-unchained-g1-rfc9380", "public_key": "{key}", "genesis_time": 1700000000, "period": 30}}]"#
        );
        let known = BeaconNetworks::with_json(Some(&json)).unwrap();
        assert_eq!(known.names(), ["quicknet", "mine"]);
        assert_eq!(known.get("mine").unwrap().period(), 30);
        assert_eq!(
            BeaconNetworks::with_json(None).unwrap().names(),
            ["quicknet"]
        );
        let bad = |json: &str| BeaconNetworks::with_json(Some(json)).unwrap_err();
        assert!(matches!(bad("{}"), NetworkError::Json(_)));
        let twice = json.replace("mine", "quicknet");
        assert_eq!(bad(&twice), NetworkError::Duplicate("quicknet".into()));
        let scheme = json.replace("bls-unchained-g1-rfc9380", "pedersen-bls-chained");
        assert!(matches!(bad(&scheme), NetworkError::Scheme { .. }));
        // A G2 key is no key of a scheme whose keys are on G1.
        let group = json.replace("bls-unchained-g1-rfc9380", "pedersen-bls-unchained");
        assert_eq!(bad(&group), NetworkError::PublicKey("mine".into()));
        assert_eq!(
            bad(&json.replace("30}", "0}")),
            NetworkError::Timing("mine".into())
        );
        assert!(matches!(
            bad(&json.replace("mine", "a#b")),
            NetworkError::Name(_)
        ));
    }
}
