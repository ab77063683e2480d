//! The draw item's attributes: settings, secrets, status, voids, the frozen eligible
//! list, the record of the winners and a pending redraw.

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::super::codec::{Item, Reader, derived, key, n, parse_timestamp, s, timestamp};
use super::super::{PARTITION_KEY, StoreError, keys, kind};
use tally_domain::draw::{Draw, DrawConfig, DrawStatus, WinnersRecord};
use tally_domain::ids::{DrawId, PaymentId};
use tally_domain::instant::InstantWins;
use tally_domain::permutation::PermutationKey;
use tally_domain::schedule::Schedule;
use tally_domain::seed::DrawSeed;
use tally_domain::spend::Price;
use tally_domain::time::millis;
use tally_domain::winners::{BeaconNetwork, NetworkFields, RoundSignature};

/// The draw's secret permutation key, random per draw: also what tells a create its own
/// earlier write.
pub(super) const PERM_KEY: &str = "perm_key";
/// The draw's secret seed, revealed with the winners.
const SEED: &str = "seed";
/// A priced draw's price of one ticket, in minor units, and its ISO 4217 currency.
const TICKET_PRICE: &str = "ticket_price";
const CURRENCY: &str = "currency";
pub(crate) const STATUS: &str = "status";
pub(super) const BEACON: &str = "beacon";
const CREATED_BEACON: &str = "created_beacon";
pub(super) const CLOSES_AT: &str = "closes_at";
/// Tickets of purchases voided before the freeze.
pub(crate) const VOIDED: &str = "voided";
/// Tickets of purchases voided after the freeze.
pub(crate) const LATE_VOIDED: &str = "late_voided";
/// Payment ids of bundles whose void is not finished (`Draw::voiding`).
pub(crate) const VOIDING: &str = "voiding";
/// The eligible list fixed at the close (a map), once it is.
pub(crate) const FROZEN: &str = "frozen";
/// A redraw whose round is not resolved yet (a map).
pub(crate) const PENDING_REDRAW: &str = "pending_redraw";
/// Of those, postal entries.
pub(crate) const POSTAL_VOIDED: &str = "postal_voided";
/// What the draw records of its winners (a map), once drawn.
pub(crate) const WINNERS: &str = "winners";
/// Picks made: the prizes, then one per redraw.
pub(crate) const PICKS: &str = "picks";
/// When a read of the counts first found every ticket sold.
pub(super) const SOLD_OUT_AT: &str = "sold_out_at";
/// The instant prizes (a list of maps) and the commitment to their key.
const INSTANT_PRIZES: &str = "instant_prizes";
const INSTANT_COMMITMENT: &str = "instant_commitment";

pub(crate) fn encode_draw(draw: &Draw) -> Result<Item, StoreError> {
    let mut item = key(keys::draw(&draw.draw_id));
    item.insert(kind::ATTRIBUTE.into(), s(kind::DRAW));
    item.insert("draw_id".into(), s(draw.draw_id.as_str()));
    if let Some(name) = &draw.name {
        item.insert("name".into(), s(name));
    }
    item.insert("total_tickets".into(), n(draw.config.total_tickets()));
    item.insert("max_per_purchase".into(), n(draw.config.max_per_purchase()));
    item.insert("stripes".into(), n(draw.config.stripes()));
    if let Some(max) = draw.config.max_per_payer() {
        item.insert("max_per_payer".into(), n(max));
    }
    item.insert("hold_seconds".into(), n(draw.config.hold_seconds()));
    item.insert(
        "max_held_per_payer".into(),
        n(draw.config.max_held_per_payer()),
    );
    item.insert("max_held_percent".into(), n(draw.config.max_held_percent()));
    encode_terms(&mut item, draw.config.price(), &draw.schedule);
    if let Some(beacon) = &draw.beacon {
        item.insert(BEACON.into(), encode_network(beacon)?);
    }
    if let Some(beacon) = &draw.created_beacon {
        item.insert(CREATED_BEACON.into(), s(beacon));
    }
    item.insert(
        PERM_KEY.into(),
        AttributeValue::B(Blob::new(draw.key.as_bytes())),
    );
    item.insert(
        SEED.into(),
        AttributeValue::B(Blob::new(draw.seed.as_bytes().as_slice())),
    );
    if let Some(instant) = &draw.instant_wins {
        item.insert(INSTANT_PRIZES.into(), derived(&instant.prizes())?);
        item.insert(INSTANT_COMMITMENT.into(), s(&instant.commitment));
    }
    item.insert(STATUS.into(), s(draw.status.as_str()));
    let created_at = timestamp(draw.created_at);
    item.insert(keys::LIST_PK.into(), s(keys::draw_list()));
    item.insert(
        keys::LIST_SK.into(),
        s(keys::newest_first(
            created_at.as_s().map_or("", String::as_str),
            draw.draw_id.as_str(),
        )),
    );
    item.insert("created_at".into(), created_at);
    Ok(item)
}

/// A drand network as the draw keeps it: its definition when it was declared, so that a
/// change of the deployment's networks never changes a draw's.
pub(crate) fn encode_network(network: &BeaconNetwork) -> Result<AttributeValue, StoreError> {
    derived(&network.fields())
}

fn decode_network(draw: &Reader) -> Result<Option<BeaconNetwork>, StoreError> {
    let fields: Option<NetworkFields> = draw.opt_derived(BEACON)?;
    fields
        .map(|f| BeaconNetwork::from_fields(&f).map_err(|e| draw.corrupt(e.to_string())))
        .transpose()
}

/// What the draw records of its winners, as its `winners` map keeps it; the picks made
/// are counted apart (`PICKS`), as redraws move them.
#[derive(Serialize, Deserialize)]
struct StoredWinners {
    prizes: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    beacon_round: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    beacon_signature: Option<String>,
    eligible_count: u64,
    eligible_digest: String,
    #[serde(with = "millis")]
    drawn_at: Timestamp,
}

pub(crate) fn encode_winners(record: &WinnersRecord) -> Result<AttributeValue, StoreError> {
    let beacon = record.beacon.as_ref();
    derived(&StoredWinners {
        prizes: record.prizes,
        beacon_round: beacon.map(|b| b.round),
        beacon_signature: beacon.map(|b| b.signature.clone()),
        eligible_count: record.eligible_count,
        eligible_digest: record.eligible_digest.clone(),
        drawn_at: record.drawn_at,
    })
}

fn decode_winners(draw: &Reader, picks: u64) -> Result<Option<WinnersRecord>, StoreError> {
    let stored: Option<StoredWinners> = draw.opt_derived(WINNERS)?;
    Ok(stored.map(|w| WinnersRecord {
        prizes: w.prizes,
        beacon: w
            .beacon_round
            .zip(w.beacon_signature)
            .map(|(round, signature)| RoundSignature { round, signature }),
        eligible_count: w.eligible_count,
        eligible_digest: w.eligible_digest,
        picks,
        drawn_at: w.drawn_at,
    }))
}

/// The winners a draw item records, read without the rest of the item.
pub(crate) fn winners_of(item: &Item) -> Result<Option<WinnersRecord>, StoreError> {
    let r = Reader::new(item);
    decode_winners(&r, r.opt_num(PICKS)?.unwrap_or(0))
}

fn decode_instant(draw: &Reader) -> Result<Option<InstantWins>, StoreError> {
    let Some(commitment) = draw.opt_str(INSTANT_COMMITMENT)? else {
        return Ok(None);
    };
    let prizes = draw.opt_derived(INSTANT_PRIZES)?.unwrap_or_default();
    Ok(Some(InstantWins::stored(prizes, commitment.to_owned())))
}

/// A draw's price and times, as the draw item and its published facts keep them.
pub(super) fn encode_terms(item: &mut Item, price: Option<Price>, schedule: &Schedule) {
    if let Some(price) = price {
        item.insert(TICKET_PRICE.into(), n(price.minor));
        item.insert(CURRENCY.into(), s(price.currency.as_str()));
    }
    if let Some(at) = schedule.opens_at() {
        item.insert("opens_at".into(), timestamp(at));
    }
    if let Some(at) = schedule.closes_at() {
        item.insert(CLOSES_AT.into(), timestamp(at));
    }
}

pub(super) fn decode_terms(r: &Reader) -> Result<(Option<Price>, Schedule), StoreError> {
    // Draws stored before prices have none: they count no spend.
    let price = Price::new(r.opt_num(TICKET_PRICE)?, r.opt_str(CURRENCY)?)
        .map_err(|e| r.corrupt(e.to_string()))?;
    let time = |name| {
        r.opt_str(name)?
            .map(|v| parse_timestamp(v).ok_or_else(|| r.corrupt(format!("`{name}` is not a time"))))
            .transpose()
    };
    let schedule =
        Schedule::new(time("opens_at")?, time(CLOSES_AT)?).map_err(|e| r.corrupt(e.to_string()))?;
    Ok((price, schedule))
}

pub(crate) fn decode_draw(item: &Item) -> Result<Draw, StoreError> {
    let r = Reader::new(item);
    let corrupt = |reason: &str| StoreError::Corrupt {
        key: r.str(PARTITION_KEY).unwrap_or("<no key>").to_owned(),
        reason: reason.to_owned(),
    };
    let max_per_payer = r.opt_num("max_per_payer")?;
    let max_held_per_payer = r.num("max_held_per_payer")?;
    let max_held_percent = r.num("max_held_percent")?;
    let hold_seconds = r.opt_num("hold_seconds")?;
    let config = DrawConfig::new(
        r.num("total_tickets")?,
        Some(r.num("max_per_purchase")?),
        Some(r.num("stripes")?),
    )
    .and_then(|c| c.with_max_per_payer(max_per_payer))
    .and_then(|c| c.with_hold_seconds(hold_seconds))
    .and_then(|c| c.with_max_held_per_payer(Some(max_held_per_payer)))
    .and_then(|c| c.with_max_held_percent(Some(max_held_percent)))
    .map_err(|e| corrupt(&e.to_string()))?;
    let instant_wins = decode_instant(&r)?;
    let (price, schedule) = decode_terms(&r)?;
    let config = config
        .with_instant_wins(instant_wins.is_some())
        .with_price(price);
    let time = |name| {
        r.opt_str(name)?
            .map(|v| parse_timestamp(v).ok_or_else(|| corrupt(&format!("`{name}` is not a time"))))
            .transpose()
    };
    Ok(Draw {
        draw_id: r.parsed("draw_id", |v| DrawId::parse(v).ok())?,
        name: r.opt_str("name")?.map(str::to_owned),
        config,
        schedule,
        beacon: decode_network(&r)?,
        created_beacon: r.opt_str(CREATED_BEACON)?.map(str::to_owned),
        key: PermutationKey::from_bytes(r.bytes(PERM_KEY)?)
            .ok_or_else(|| corrupt("`perm_key` has the wrong length"))?,
        seed: DrawSeed::from_bytes(r.bytes(SEED)?)
            .ok_or_else(|| corrupt("`seed` has the wrong length"))?,
        instant_wins,
        status: r.parsed(STATUS, DrawStatus::parse)?,
        voided: r.opt_num(VOIDED)?.unwrap_or(0),
        late_voided: r.opt_num(LATE_VOIDED)?.unwrap_or(0),
        voiding: r
            .str_set(VOIDING)?
            .into_iter()
            .map(|p| PaymentId::parse(p).map_err(|_| corrupt("`voiding` holds an invalid id")))
            .collect::<Result<_, _>>()?,
        frozen: r.opt_derived(FROZEN)?,
        postal_voided: r.opt_num(POSTAL_VOIDED)?.unwrap_or(0),
        winners: decode_winners(&r, r.opt_num(PICKS)?.unwrap_or(0))?,
        pending_redraw: r.opt_derived(PENDING_REDRAW)?,
        sold_out_at: time(SOLD_OUT_AT)?,
        created_at: r.parsed("created_at", parse_timestamp)?,
    })
}
