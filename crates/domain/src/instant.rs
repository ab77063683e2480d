//! Instant wins as a draw holds them: the prizes asked for at creation (validated), the
//! per-draw key their numbers derive from, and what one transaction's tickets win. The
//! map itself, and its public check, are in `winners::instant` (docs/winners.md).

use std::collections::BTreeSet;
use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::hex;
use super::ids::{PayerId, PaymentId};
use super::secret::DeploymentSecret;
use super::seed::DrawSeed;
use super::text::{FREE_TEXT_RULE, is_blank, refused_in_text};
use super::winners::InstantMap;

/// The most instant prizes (winning numbers) a draw may have. The map is derived again
/// each time a process loads the draw (one SHA-256 a number: 14 ms for 1,000 in a debug
/// build, `tally bench`'s winners part), the
/// winners publish it whole (about 50 KB of JSON for 1,000), and the prize entries live in
/// the draw's item.
pub const MAX_INSTANT_PRIZES: u32 = 1_000;
/// The most prize entries (distinct prizes) a draw may have.
pub const MAX_INSTANT_ENTRIES: usize = 100;
/// The longest prize text, in characters.
pub const MAX_PRIZE_LEN: usize = 200;

/// Why the instant wins of a new draw were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstantWinsError {
    #[error(
        "`instant_wins` takes 1 to {MAX_INSTANT_ENTRIES} prizes, each with a text of 1 to {MAX_PRIZE_LEN} characters {}, told apart by their text, and a `count` of at least 1",
        FREE_TEXT_RULE
    )]
    Entries,
    #[error(
        "`instant_wins` asks for {asked} winning numbers; a draw may have at most {MAX_INSTANT_PRIZES}, and no more than its `total_tickets`"
    )]
    TooMany { asked: u64 },
}

/// One prize entry: its text and how many numbers win it. The draw item stores it as it
/// derives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstantPrize {
    pub prize: String,
    pub count: u32,
}

/// A draw's instant wins: the prize entries and the commitment to the key of their map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstantWins {
    prizes: Vec<InstantPrize>,
    /// Hex SHA-256 of the draw's [`InstantKey`], shown with the draw from its creation on.
    pub commitment: String,
}

impl InstantWins {
    /// Validates the entries of a draw of `total_tickets` numbers, and commits to `key`.
    pub fn new(
        prizes: Vec<InstantPrize>,
        total_tickets: u64,
        key: &InstantKey,
    ) -> Result<Self, InstantWinsError> {
        let texts: BTreeSet<&str> = prizes.iter().map(|p| p.prize.as_str()).collect();
        let well_formed = prizes.iter().all(|p| {
            p.count >= 1
                && !is_blank(&p.prize)
                && p.prize.chars().count() <= MAX_PRIZE_LEN
                && refused_in_text(&p.prize).is_none()
        });
        if prizes.is_empty()
            || prizes.len() > MAX_INSTANT_ENTRIES
            || texts.len() != prizes.len()
            || !well_formed
        {
            return Err(InstantWinsError::Entries);
        }
        let asked: u64 = prizes.iter().map(|p| u64::from(p.count)).sum();
        if asked > u64::from(MAX_INSTANT_PRIZES) || asked > total_tickets {
            return Err(InstantWinsError::TooMany { asked });
        }
        Ok(Self {
            prizes,
            commitment: key.commitment(),
        })
    }

    /// As stored: trusted, checked when it was created.
    pub fn stored(prizes: Vec<InstantPrize>, commitment: String) -> Self {
        Self { prizes, commitment }
    }

    pub fn prizes(&self) -> &[InstantPrize] {
        &self.prizes
    }

    /// The map of a draw of `total_tickets` numbers under `key`.
    pub fn map(&self, key: &InstantKey, total_tickets: u64) -> InstantMap {
        let counts: Vec<u32> = self.prizes.iter().map(|p| p.count).collect();
        InstantMap::derive(&key.0, total_tickets, &counts)
    }

    /// What `tickets` (of one transaction) win under `map`, in ascending ticket order.
    pub fn wins(&self, map: &InstantMap, tickets: &[u64]) -> Vec<InstantWin> {
        let mut wins: Vec<InstantWin> = tickets
            .iter()
            .filter_map(|&ticket| {
                map.prize_of(ticket).map(|entry| InstantWin {
                    ticket,
                    prize: self.prizes[entry].prize.clone(),
                })
            })
            .collect();
        wins.sort_by_key(|w| w.ticket);
        wins
    }
}

/// A ticket that wins an instant prize. The award item stores it as it derives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstantWin {
    pub ticket: u64,
    pub prize: String,
}

/// The prizes one transaction won, as recorded with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstantAward {
    pub payment_id: PaymentId,
    pub payer_id: Option<PayerId>,
    pub wins: Vec<InstantWin>,
    pub awarded_at: Timestamp,
    /// The purchase was voided: its prizes with it.
    pub voided: bool,
}

impl InstantAward {
    /// The award of `wins` (ascending) to the purchase that sells them.
    pub fn of(purchase: &super::purchase::Purchase, wins: &[InstantWin]) -> Self {
        Self {
            payment_id: purchase.payment_id.clone(),
            payer_id: purchase.payer_id.clone(),
            wins: wins.to_vec(),
            awarded_at: purchase.created_at,
            voided: false,
        }
    }
}

/// The key a draw's instant-win map derives from: HMAC-SHA-256 under the deployment
/// secret of the label `instant-win` and the draw's seed. It is never stored, so reading
/// the table alone does not give the map; it is revealed with the winners, and its
/// SHA-256 is shown from the creation on. Its `Debug` output never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct InstantKey([u8; 32]);

impl InstantKey {
    pub fn derive(secret: &DeploymentSecret, seed: &DrawSeed) -> Self {
        Self(secret.derive("instant-win", seed.as_bytes()))
    }

    /// Hex SHA-256 of the key.
    pub fn commitment(&self) -> String {
        hex::encode(&Sha256::digest(self.0))
    }

    /// The key in hex, as the winners reveal it.
    pub fn reveal(&self) -> String {
        hex::encode(&self.0)
    }
}

impl fmt::Debug for InstantKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InstantKey(<secret>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prize(text: &str, count: u32) -> InstantPrize {
        InstantPrize {
            prize: text.into(),
            count,
        }
    }

    #[test]
    fn entries_are_bounded_distinct_and_fit_the_draw() {
        let key = InstantKey::derive(&DeploymentSecret::local(), &DrawSeed::generate());
        let ok = InstantWins::new(vec![prize("£50 voucher", 10), prize("car", 1)], 100, &key);
        assert_eq!(ok.unwrap().commitment, key.commitment());
        for bad in [
            vec![],
            vec![prize("a", 0)],
            vec![prize(" ", 1)],
            vec![prize("a\nb", 1)],
            vec![prize(&"x".repeat(MAX_PRIZE_LEN + 1), 1)],
            vec![prize("a", 1), prize("a", 2)],
            (0..=MAX_INSTANT_ENTRIES)
                .map(|i| prize(&i.to_string(), 1))
                .collect(),
        ] {
            assert_eq!(
                InstantWins::new(bad, 100, &key),
                Err(InstantWinsError::Entries)
            );
        }
        assert_eq!(
            InstantWins::new(vec![prize("a", 101)], 100, &key),
            Err(InstantWinsError::TooMany { asked: 101 })
        );
        assert_eq!(
            InstantWins::new(vec![prize("a", MAX_INSTANT_PRIZES + 1)], 1_000_000, &key),
            Err(InstantWinsError::TooMany { asked: 1_001 })
        );
    }

    #[test]
    fn the_key_depends_on_the_secret_and_the_seed_and_stays_hidden() {
        let seed = DrawSeed::generate();
        let local = InstantKey::derive(&DeploymentSecret::local(), &seed);
        let other = DeploymentSecret::new(&[9; 32]).unwrap();
        assert_ne!(local, InstantKey::derive(&other, &seed));
        assert_ne!(
            local,
            InstantKey::derive(&DeploymentSecret::local(), &DrawSeed::generate())
        );
        assert_eq!(format!("{local:?}"), "InstantKey(<secret>)");
        assert_eq!(local.reveal().len(), 64);
    }

    #[test]
    fn a_transaction_wins_exactly_its_numbers_on_the_map() {
        let key = InstantKey::derive(&DeploymentSecret::local(), &DrawSeed::generate());
        let wins = InstantWins::new(vec![prize("voucher", 3), prize("car", 1)], 50, &key).unwrap();
        let map = wins.map(&key, 50);
        let all: Vec<u64> = (1..=50).rev().collect();
        let won = wins.wins(&map, &all);
        assert_eq!(won.len(), 4);
        assert!(won.windows(2).all(|w| w[0].ticket < w[1].ticket));
        assert_eq!(won.iter().filter(|w| w.prize == "car").count(), 1);
        let losing: Vec<u64> = (1..=50).filter(|t| map.prize_of(*t).is_none()).collect();
        assert!(wins.wins(&map, &losing).is_empty());
    }
}
