//! The draw item's attributes: settings, secrets, status, voids, the frozen eligible
//! list, the record of the winners and a pending redraw.

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::super::codec::{Item, Reader, derived, key, n, parse_timestamp, s, timestamp};
use super::super::{StoreError, keys, kind};
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
const PERM_KEY: &str = "perm_key";
/// The draw's secret seed, revealed with the winners.
const SEED: &str = "seed";
/// A priced draw's price of one ticket, in minor units, and its ISO 4217 currency.
const TICKET_PRICE: &str = "ticket_price";
const CURRENCY: &str = "currency";
pub(crate) const STATUS: &str = "status";
pub(super) const BEACON: &str = "beacon";
const CREATED_BEACON: &str = "created_beacon";
/// Set before the first purchase or hold of the draw commits: the beacon is fixed.
pub(super) const BEACON_FIXED: &str = "beacon_fixed";
pub(super) const CLOSES_AT: &str = "closes_at";
/// Tickets of purchases voided before the freeze, and of those, postal entries.
pub(crate) const VOIDED: &str = "voided";
pub(crate) const POSTAL_VOIDED: &str = "postal_voided";
/// Tickets of purchases voided after the freeze.
pub(crate) const LATE_VOIDED: &str = "late_voided";
/// Payment ids of bundles whose void is not finished (`Draw::voiding`).
pub(crate) const VOIDING: &str = "voiding";
/// The eligible list fixed at the close (a map), once it is.
pub(crate) const FROZEN: &str = "frozen";
/// A redraw whose round is not resolved yet (a map).
pub(crate) const PENDING_REDRAW: &str = "pending_redraw";
/// What the draw records of its winners (a map), once drawn.
pub(crate) const WINNERS: &str = "winners";
/// Picks made: the prizes, then one per redraw.
pub(crate) const PICKS: &str = "picks";
/// When a read of the counts first found every ticket sold.
pub(super) const SOLD_OUT_AT: &str = "sold_out_at";
/// The instant prizes (a list of maps) and the commitment to their key.
const INSTANT_PRIZES: &str = "instant_prizes";
const INSTANT_COMMITMENT: &str = "instant_commitment";
/// The number of prizes declared at the create; draws that declared none, and draws
/// stored before declarations, have none.
const PRIZES: &str = "prizes";

pub(crate) fn encode_draw(draw: &Draw) -> Result<Item, StoreError> {
    let (config, id) = (&draw.config, draw.draw_id.as_str());
    let created_at = timestamp(draw.created_at);
    let list_sk = keys::newest_first(created_at.as_s().map_or("", String::as_str), id);
    let beacon = draw.beacon.as_ref().map(encode_network).transpose()?;
    let instant = draw.instant_wins.as_ref();
    let instant_prizes = instant.map(|i| derived(&i.prizes())).transpose()?;
    let blob = |bytes: &[u8]| Some(AttributeValue::B(Blob::new(bytes)));
    let attributes = [
        (kind::ATTRIBUTE, Some(s(kind::DRAW))),
        ("draw_id", Some(s(id))),
        ("name", draw.name.as_deref().map(s)),
        ("total_tickets", Some(n(config.total_tickets()))),
        ("max_per_purchase", Some(n(config.max_per_purchase()))),
        ("stripes", Some(n(config.stripes()))),
        ("max_per_payer", config.max_per_payer().map(n)),
        ("hold_seconds", Some(n(config.hold_seconds()))),
        ("max_held_per_payer", Some(n(config.max_held_per_payer()))),
        ("max_held_percent", Some(n(config.max_held_percent()))),
        (PRIZES, config.prizes().map(n)),
        (BEACON, beacon),
        (CREATED_BEACON, draw.created_beacon.as_deref().map(s)),
        (PERM_KEY, blob(draw.key.as_bytes())),
        (SEED, blob(draw.seed.as_bytes())),
        (INSTANT_PRIZES, instant_prizes),
        (INSTANT_COMMITMENT, instant.map(|i| s(&i.commitment))),
        (STATUS, Some(s(draw.status.as_str()))),
        (keys::LIST_PK, Some(s(keys::draw_list()))),
        (keys::LIST_SK, Some(s(list_sk))),
        ("created_at", Some(created_at)),
    ];
    let mut item = key(keys::draw(&draw.draw_id));
    let present = attributes
        .into_iter()
        .filter_map(|(name, v)| Some((name.to_owned(), v?)));
    item.extend(present);
    encode_terms(&mut item, config.price(), &draw.schedule);
    Ok(item)
}

/// A drand network as the draw keeps it: its definition when it was declared, so that a
/// change of the deployment's networks never changes a draw's.
pub(super) fn encode_network(network: &BeaconNetwork) -> Result<AttributeValue, StoreError> {
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

/// The winners a draw item records, read without the rest of the item.
pub(crate) fn winners_of(item: &Item) -> Result<Option<WinnersRecord>, StoreError> {
    let r = Reader::new(item);
    let stored: Option<StoredWinners> = r.opt_derived(WINNERS)?;
    let picks = r.opt_num(PICKS)?.unwrap_or(0);
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
    let schedule = Schedule::new(opt_time(r, "opens_at")?, opt_time(r, CLOSES_AT)?)
        .map_err(|e| r.corrupt(e.to_string()))?;
    Ok((price, schedule))
}

fn opt_time(r: &Reader, name: &str) -> Result<Option<Timestamp>, StoreError> {
    r.opt_str(name)?
        .map(|v| parse_timestamp(v).ok_or_else(|| r.corrupt(format!("`{name}` is not a time"))))
        .transpose()
}

pub(crate) fn decode_draw(item: &Item) -> Result<Draw, StoreError> {
    let r = Reader::new(item);
    let max_per_payer = r.opt_num("max_per_payer")?;
    let hold_seconds = r.opt_num("hold_seconds")?;
    let max_held_per_payer = r.num("max_held_per_payer")?;
    let max_held_percent = r.num("max_held_percent")?;
    let prizes = r.opt_num(PRIZES)?;
    let instant_wins = decode_instant(&r)?;
    let (price, schedule) = decode_terms(&r)?;
    let config = DrawConfig::new(
        r.num("total_tickets")?,
        Some(r.num("max_per_purchase")?),
        Some(r.num("stripes")?),
    )
    .and_then(|c| c.with_max_per_payer(max_per_payer))
    .and_then(|c| c.with_hold_seconds(hold_seconds))
    .and_then(|c| c.with_max_held_per_payer(Some(max_held_per_payer)))
    .and_then(|c| c.with_max_held_percent(Some(max_held_percent)))
    .and_then(|c| c.with_prizes(prizes))
    .map_err(|e| r.corrupt(e.to_string()))?
    .with_instant_wins(instant_wins.is_some())
    .with_price(price);
    let wrong_length = |name: &str| r.corrupt(format!("`{name}` has the wrong length"));
    Ok(Draw {
        draw_id: r.parsed("draw_id", |v| DrawId::parse(v).ok())?,
        name: r.opt_str("name")?.map(str::to_owned),
        config,
        schedule,
        beacon: decode_network(&r)?,
        created_beacon: r.opt_str(CREATED_BEACON)?.map(str::to_owned),
        beacon_fixed: r.flag(BEACON_FIXED),
        key: PermutationKey::from_bytes(r.bytes(PERM_KEY)?)
            .ok_or_else(|| wrong_length(PERM_KEY))?,
        seed: DrawSeed::from_bytes(r.bytes(SEED)?).ok_or_else(|| wrong_length(SEED))?,
        instant_wins,
        status: r.parsed(STATUS, DrawStatus::parse)?,
        voided: r.opt_num(VOIDED)?.unwrap_or(0),
        late_voided: r.opt_num(LATE_VOIDED)?.unwrap_or(0),
        voiding: r
            .str_set(VOIDING)?
            .into_iter()
            .map(|p| {
                PaymentId::parse(p).map_err(|_| r.corrupt("`voiding` holds an invalid id".into()))
            })
            .collect::<Result<_, _>>()?,
        frozen: r.opt_derived(FROZEN)?,
        postal_voided: r.opt_num(POSTAL_VOIDED)?.unwrap_or(0),
        winners: winners_of(item)?,
        pending_redraw: r.opt_derived(PENDING_REDRAW)?,
        sold_out_at: opt_time(&r, SOLD_OUT_AT)?,
        created_at: r.parsed("created_at", parse_timestamp)?,
    })
}
