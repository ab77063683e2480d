//! Instant wins (`tally-instant-v1`, specified in docs/winners.md): prizes fixed on ticket
//! numbers when the draw is created, from a per-draw key whose SHA-256 every draw answer
//! shows from the creation on, and revealed with the winners. This file derives the map
//! from the key and checks what the winners publish of it; it imports only its siblings
//! and sha2, so that the browser verifier compiles it too.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use sha2::{Digest, Sha256};

use super::eligible::EligibleSet;
use crate::hex;

/// The name of the derivation, also the first bytes of every hashed message.
pub const INSTANT_ALGORITHM: &str = "tally-instant-v1";

/// The winning numbers of a draw, slot by slot: slot `s` (from 1) of prize entry `p`
/// (from 0), where entry 0 takes the first `count` slots, entry 1 the next, and so on.
/// Its `Debug` output never shows a number: before the winners the map is a secret.
#[derive(Clone, PartialEq, Eq)]
pub struct InstantMap {
    /// Per slot, in slot order: (ticket, prize entry).
    slots: Vec<(u64, usize)>,
    /// Ticket to its slot's position in `slots`.
    by_ticket: BTreeMap<u64, usize>,
}

impl InstantMap {
    /// Derives the map of a draw of `total_tickets` numbers whose prize entries have
    /// `counts` winning numbers each (at most `total_tickets` in all). Slot `s` takes, for
    /// attempt `a` = 0, 1, ..., `x` = the first 8 bytes (big-endian) of
    /// `SHA-256("tally-instant-v1" || key || u64be(total_tickets) || u64be(s) || u64be(a))`,
    /// rejects `x` in the top `2^64 mod total_tickets` values (no modulo bias) and any
    /// number an earlier slot holds, and else wins ticket `x mod total_tickets + 1`: each
    /// slot is uniform over the numbers the earlier slots left.
    pub fn derive(key: &[u8; 32], total_tickets: u64, counts: &[u32]) -> Self {
        let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        assert!(
            total_tickets >= 1 && total <= total_tickets,
            "more winning numbers than tickets"
        );
        let cut = (u64::MAX % total_tickets + 1) % total_tickets;
        let mut slots = Vec::with_capacity(total as usize);
        let mut by_ticket = BTreeMap::new();
        let entries = counts
            .iter()
            .enumerate()
            .flat_map(|(entry, &count)| std::iter::repeat_n(entry, count as usize));
        for (slot, entry) in (1u64..).zip(entries) {
            let ticket = (0u64..)
                .map(|attempt| draw(key, total_tickets, slot, attempt))
                .filter(|&x| x <= u64::MAX - cut)
                .map(|x| x % total_tickets + 1)
                .find(|t| !by_ticket.contains_key(t))
                .expect("a slot always finds a number while numbers are left");
            by_ticket.insert(ticket, slots.len());
            slots.push((ticket, entry));
        }
        Self { slots, by_ticket }
    }

    /// The prize entry that `ticket` wins, if any.
    pub fn prize_of(&self, ticket: u64) -> Option<usize> {
        self.by_ticket.get(&ticket).map(|&at| self.slots[at].1)
    }

    /// Every slot in order: (ticket, prize entry).
    pub fn slots(&self) -> &[(u64, usize)] {
        &self.slots
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

impl fmt::Debug for InstantMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InstantMap(<{} secret numbers>)", self.slots.len())
    }
}

fn draw(key: &[u8; 32], total_tickets: u64, slot: u64, attempt: u64) -> u64 {
    let hash = Sha256::new()
        .chain_update(INSTANT_ALGORITHM.as_bytes())
        .chain_update(key)
        .chain_update(total_tickets.to_be_bytes())
        .chain_update(slot.to_be_bytes())
        .chain_update(attempt.to_be_bytes())
        .finalize();
    u64::from_be_bytes(hash[..8].try_into().expect("8 bytes"))
}

/// A prize won, as published: the ticket, the prize's text and whether it was voided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedAward {
    pub ticket: u64,
    pub prize: String,
    pub voided: bool,
}

/// What the winners publish of a draw's instant wins.
#[derive(Debug, Clone)]
pub struct InstantProof {
    pub key: [u8; 32],
    pub commitment: [u8; 32],
    /// The prize entries as created: (prize, count).
    pub prizes: Vec<(String, u32)>,
    /// The map as published: (ticket, prize), in slot order.
    pub map: Vec<(u64, String)>,
    pub awards: Vec<PublishedAward>,
}

/// Checks the instant wins: the key against its commitment (the proof's and the one kept
/// from before the sale), the map recomputed from the key, every award on a number of its
/// prize, at most one award a number, and every eligible winning number awarded to a
/// purchase that holds it, live (a void is published as such).
pub(super) fn check_instant(
    proof: &InstantProof,
    total_tickets: u64,
    kept_commitment: Option<[u8; 32]>,
    eligible: Option<&EligibleSet>,
) -> Result<String, String> {
    if <[u8; 32]>::from(Sha256::digest(proof.key)) != proof.commitment {
        return Err("SHA-256 of the instant-win key is not its commitment".into());
    }
    if kept_commitment.is_some_and(|kept| kept != proof.commitment) {
        return Err("the draw's answer you kept publishes another instant-win commitment".into());
    }
    let counts: Vec<u32> = proof.prizes.iter().map(|(_, c)| *c).collect();
    let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    if total > total_tickets {
        return Err("more instant prizes than tickets".into());
    }
    let map = InstantMap::derive(&proof.key, total_tickets, &counts);
    let recomputed: Vec<(u64, &str)> = map
        .slots()
        .iter()
        .map(|&(ticket, entry)| (ticket, proof.prizes[entry].0.as_str()))
        .collect();
    let published: Vec<(u64, &str)> = proof.map.iter().map(|(t, p)| (*t, p.as_str())).collect();
    if recomputed != published {
        let first = recomputed
            .iter()
            .zip(&published)
            .position(|(a, b)| a != b)
            .unwrap_or(recomputed.len().min(published.len()));
        return Err(format!(
            "the published map differs from the one the key gives, from slot {}",
            first + 1
        ));
    }
    let mut awarded = BTreeSet::new();
    for award in &proof.awards {
        match map.prize_of(award.ticket) {
            Some(entry) if proof.prizes[entry].0 == award.prize => {}
            _ => {
                return Err(format!(
                    "ticket {} is awarded {:?}, which the map does not give it",
                    award.ticket, award.prize
                ));
            }
        }
        if !awarded.insert(award.ticket) {
            return Err(format!("ticket {} is awarded twice", award.ticket));
        }
    }
    let live = proof.awards.iter().filter(|a| !a.voided).count();
    if let Some(eligible) = eligible {
        if let Some(&(ticket, _)) = map
            .slots()
            .iter()
            .find(|(t, _)| eligible.contains(*t) && !awarded.contains(t))
        {
            return Err(format!(
                "ticket {ticket} was sold and wins an instant prize, but no award names it"
            ));
        }
        if let Some(award) = proof
            .awards
            .iter()
            .find(|a| !a.voided && !eligible.contains(a.ticket))
        {
            return Err(format!(
                "ticket {} has a live award but is not in the eligible list",
                award.ticket
            ));
        }
    }
    Ok(format!(
        "{} winning numbers recomputed from key {}; {} awarded ({live} live)",
        map.len(),
        hex::encode(&proof.commitment),
        proof.awards.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_is_distinct_in_range_fixed_by_its_key_and_hidden_from_debug() {
        let key = [7u8; 32];
        let map = InstantMap::derive(&key, 2_000, &[10, 40]);
        assert_eq!(map.len(), 50);
        let tickets: BTreeSet<u64> = map.slots().iter().map(|s| s.0).collect();
        assert_eq!(tickets.len(), 50);
        assert!(tickets.iter().all(|t| (1..=2_000).contains(t)));
        assert!(map.slots()[..10].iter().all(|s| s.1 == 0));
        assert!(map.slots()[10..].iter().all(|s| s.1 == 1));
        assert_eq!(map, InstantMap::derive(&key, 2_000, &[10, 40]));
        assert_ne!(map, InstantMap::derive(&[8u8; 32], 2_000, &[10, 40]));
        let (ticket, entry) = map.slots()[12];
        assert_eq!(map.prize_of(ticket), Some(entry));
        assert_eq!(format!("{map:?}"), "InstantMap(<50 secret numbers>)");
        // Every number of a draw can win: the last slot still finds the last number.
        let all = InstantMap::derive(&key, 64, &[64]);
        let every: BTreeSet<u64> = all.slots().iter().map(|s| s.0).collect();
        assert_eq!(every, (1..=64).collect());
    }

    #[test]
    fn the_first_slot_follows_the_specified_hash() {
        // Slot 1, attempt 0, of a draw of 10 numbers: x mod 10 + 1, as the spec says
        // (2^64 mod 10 = 6 values are rejected at the top, very unlikely here).
        let key = [1u8; 32];
        let mut message = b"tally-instant-v1".to_vec();
        message.extend_from_slice(&key);
        message.extend_from_slice(&10u64.to_be_bytes());
        message.extend_from_slice(&1u64.to_be_bytes());
        message.extend_from_slice(&0u64.to_be_bytes());
        let hash = Sha256::digest(&message);
        let x = u64::from_be_bytes(hash[..8].try_into().unwrap());
        assert_eq!(InstantMap::derive(&key, 10, &[1]).slots()[0].0, x % 10 + 1);
    }

    #[test]
    fn a_moved_number_a_double_award_or_an_unawarded_sale_fails() {
        let key = [3u8; 32];
        let map = InstantMap::derive(&key, 100, &[2, 1]);
        let prizes = vec![("voucher".to_owned(), 2), ("car".to_owned(), 1)];
        let names = ["voucher", "voucher", "car"];
        let published: Vec<(u64, String)> = map
            .slots()
            .iter()
            .zip(names)
            .map(|(s, n)| (s.0, n.to_owned()))
            .collect();
        let award = |ticket: u64, prize: &str| PublishedAward {
            ticket,
            prize: prize.to_owned(),
            voided: false,
        };
        let sold = map.slots()[0].0;
        let mut eligible = EligibleSet::from_bitmap(100, &[0; 13]).unwrap();
        eligible = {
            let mut bitmap = eligible.to_bitmap();
            bitmap[((sold - 1) / 8) as usize] |= 1 << ((sold - 1) % 8);
            EligibleSet::from_bitmap(100, &bitmap).unwrap()
        };
        let good = InstantProof {
            key,
            commitment: Sha256::digest(key).into(),
            prizes,
            map: published,
            awards: vec![award(sold, "voucher")],
        };
        let commitment = good.commitment;
        assert!(check_instant(&good, 100, Some(commitment), Some(&eligible)).is_ok());
        let mut moved = good.clone();
        moved.map[2].0 = (1..=100).find(|t| map.prize_of(*t).is_none()).unwrap();
        assert!(check_instant(&moved, 100, None, None).is_err());
        let mut twice = good.clone();
        twice.awards.push(award(sold, "voucher"));
        assert!(check_instant(&twice, 100, None, None).is_err());
        let mut wrong_prize = good.clone();
        wrong_prize.awards[0].prize = "car".into();
        assert!(check_instant(&wrong_prize, 100, None, None).is_err());
        let mut unawarded = good.clone();
        unawarded.awards.clear();
        assert!(check_instant(&unawarded, 100, None, Some(&eligible)).is_err());
        assert!(check_instant(&good, 100, Some([0; 32]), None).is_err());
        let mut other_key = good;
        other_key.key = [4u8; 32];
        assert!(check_instant(&other_key, 100, None, None).is_err());
    }
}
