//! Creating, reading, changing and closing a draw; what the answers say is in
//! `response.rs`.

mod response;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::super::AppState;
use super::super::caller::Acting;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::{Code, Problem};
use super::{DrawPath, name_text, valid_prizes};
use crate::json_input::optional_rfc3339;
use crate::tickets::NewDraw;
use tally_domain::draw::{DrawConfig, MAX_NAME_LEN};
use tally_domain::ids::DrawId;
use tally_domain::instant::InstantPrize;
use tally_domain::schedule::Schedule;
use tally_domain::spend::Price;
use tally_domain::winners::MAX_NETWORK_NAME_LEN;

pub(super) use response::{BeaconFields, DrawBody, DrawFields};

/// A new draw. Only `total_tickets` is required.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateDrawBody {
    /// Makes the create safe to repeat; generated (`d-` and 16 characters) when absent.
    #[schema(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    draw_id: Option<String>,
    /// Free text, 1 to 200 characters without control characters, line or
    /// paragraph separators or bidirectional controls; not white space alone.
    #[schema(
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069]{1,200}$"
    )]
    name: Option<String>,
    /// The numbers sold are 1 to `total_tickets` (at most 10,000,000).
    #[schema(minimum = 1, maximum = 10_000_000)]
    total_tickets: u64,
    /// The most tickets of one purchase: 1 to 500, 20 by default. A purchase of more than
    /// about 90 tickets (a bundle) is still all or nothing; its ticket items that do not
    /// fit its deciding transaction are written right after it.
    #[schema(minimum = 1, maximum = 500)]
    max_per_purchase: Option<u32>,
    /// The cursors that concurrent buyers spread over (1 to 1,024); the default suits
    /// most draws.
    #[schema(minimum = 1, maximum = 1_024)]
    stripes: Option<u32>,
    /// The most non-voided tickets one payer may hold; purchases then need a `payer_id`.
    #[schema(minimum = 1, maximum = 10_000_000)]
    max_per_payer: Option<u64>,
    /// How long a hold keeps its numbers for the buyer: 30 to 3,600 seconds (600 by
    /// default), never past the close.
    #[schema(minimum = 30, maximum = 3_600)]
    hold_seconds: Option<u32>,
    /// The most numbers one payer's live holds may take at once: 1 to 500,
    /// `max_per_purchase` by default. Counted in the transaction that makes each hold.
    #[schema(minimum = 1, maximum = 500)]
    max_held_per_payer: Option<u32>,
    /// The share of the draw's numbers that live holds may take at once, in percent: 1 to
    /// 100, 25 by default. It applies to each stripe in proportion to its size.
    #[schema(minimum = 1, maximum = 100)]
    max_held_percent: Option<u8>,
    /// What one ticket costs, in minor units of `currency` (0 to 100,000,000): a
    /// purchase is charged `quantity` × this unless it passes its own `amount`, and counts
    /// toward its payer's spend limits. A draw without a price counts no spend.
    #[schema(minimum = 0, maximum = 100_000_000)]
    ticket_price: Option<u64>,
    /// The ISO 4217 code of `ticket_price`'s currency, given with it.
    #[schema(pattern = "^[A-Z]{3}$")]
    currency: Option<String>,
    /// When sales start (RFC 3339, years 2000 to 9999; second 60, a leap second, is
    /// refused).
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(default, deserialize_with = "optional_rfc3339")]
    opens_at: Option<Timestamp>,
    /// When sales end (RFC 3339, years 2000 to 9999, no leap second), after `opens_at` and
    /// in the future.
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(default, deserialize_with = "optional_rfc3339")]
    closes_at: Option<Timestamp>,
    /// The drand network whose round the winners will hash; Tally fixes the round at
    /// the close.
    beacon: Option<BeaconBody>,
    /// Prizes fixed on numbers now, each won at once by whoever buys its number: 1 to
    /// 100 distinct prizes, 1,000 winning numbers at most, no more than `total_tickets`.
    #[schema(max_items = 100)]
    instant_wins: Option<Vec<InstantPrizeBody>>,
    /// How many prizes the winners will draw, 1 to 97 and at most `total_tickets`: fixed
    /// now, before any sale, and by every freeze of the list, also one that a read past
    /// `closes_at` makes. A close or winners call may repeat it, never name another
    /// (`409 prizes_fixed`). Without it the close or the winners call names the number.
    #[schema(minimum = 1, maximum = 97)]
    prizes: Option<u32>,
}

/// An instant prize and how many numbers win it.
#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct InstantPrizeBody {
    /// What the buyer wins, 1 to 200 characters (not white space alone), told apart from
    /// the others by it.
    #[schema(
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069]{1,200}$"
    )]
    prize: String,
    #[schema(minimum = 1, maximum = 1_000)]
    count: u32,
}

impl InstantPrizeBody {
    pub(super) fn new(prize: &str, count: u32) -> Self {
        Self {
            prize: prize.to_owned(),
            count,
        }
    }
}

/// A drand network by name: `quicknet`, or one the deployment adds.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct BeaconBody {
    #[schema(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    network: String,
}

impl BeaconBody {
    fn name(self) -> Result<String, Problem> {
        let valid = (1..=MAX_NETWORK_NAME_LEN).contains(&self.network.len())
            && self
                .network
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid {
            return Err(Problem::new(
                Code::InvalidBeacon,
                format!(
                    "`beacon.network` is 1 to {MAX_NETWORK_NAME_LEN} letters, digits, `-` or `_`"
                ),
            ));
        }
        Ok(self.network)
    }
}

/// The codes of `create_draw`'s own errors (the document adds those of its parameters and body).
pub(super) const CREATE_DRAW_CODES: &[Code] = &[
    Code::InvalidTotalTickets,
    Code::InvalidMaxPerPurchase,
    Code::InvalidMaxPerPayer,
    Code::InvalidHoldSeconds,
    Code::InvalidMaxHeldPerPayer,
    Code::InvalidMaxHeldPercent,
    Code::InvalidStripes,
    Code::InvalidClosesAt,
    Code::InvalidSchedule,
    Code::InvalidBeacon,
    Code::UnknownBeaconNetwork,
    Code::InvalidInstantWins,
    Code::InvalidPrizes,
    Code::DrawExists,
];

/// Create a draw
///
/// The same body again answers `200` with the existing draw, also once its `closes_at`
/// has passed; a new draw whose `closes_at` has passed is refused (`400
/// invalid_closes_at`).
#[utoipa::path(
    post,
    path = "/draws",
    tag = "draws",
    request_body = CreateDrawBody,
    responses(
        (status = 201, description = "Created", body = DrawBody,
            headers(("location" = String, description = "The draw's path"))),
        (status = 200, description = "The same draw existed", body = DrawBody,
            headers(("location" = String, description = "The draw's path"))),
    )
)]
pub(super) async fn create_draw(
    State(state): State<AppState>,
    Acting(by): Acting,
    JsonBody(body): JsonBody<CreateDrawBody>,
) -> Result<impl IntoResponse, Problem> {
    let new = NewDraw {
        draw_id: body.draw_id.as_deref().map(DrawId::parse).transpose()?,
        name: name_text("name", body.name, MAX_NAME_LEN)?,
        config: DrawConfig::new(body.total_tickets, body.max_per_purchase, body.stripes)?
            .with_max_per_payer(body.max_per_payer)?
            .with_hold_seconds(body.hold_seconds)?
            .with_max_held_per_payer(body.max_held_per_payer)?
            .with_max_held_percent(body.max_held_percent)?
            .with_prizes(body.prizes)?
            .with_price(Price::new(body.ticket_price, body.currency.as_deref())?),
        schedule: Schedule::new(body.opens_at, body.closes_at)?,
        beacon: body.beacon.map(BeaconBody::name).transpose()?,
        instant_wins: body
            .instant_wins
            .unwrap_or_default()
            .into_iter()
            .map(|p| InstantPrize {
                prize: p.prize,
                count: p.count,
            })
            .collect(),
        by,
    };
    let created = state.tickets.create_draw(new).await?;
    let location = format!("/draws/{}", created.summary.draw.draw_id);
    let mut headers = HeaderMap::new();
    if let Ok(value) = HeaderValue::from_str(&location) {
        headers.insert(header::LOCATION, value);
    }
    let status = if created.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, headers, Json(DrawBody::from(created.summary))))
}

/// The codes of `get_draw`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_DRAW_CODES: &[Code] = &[Code::member("draw_id"), Code::DrawNotFound];

/// Read a draw
#[utoipa::path(
    get,
    path = "/draws/{draw_id}",
    tag = "draws",
    params(DrawPath),
    responses(
        (status = 200, description = "The draw with its live counts", body = DrawBody),
    )
)]
pub(super) async fn get_draw(
    State(state): State<AppState>,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
) -> Result<Json<DrawBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    Ok(Json(state.tickets.get_draw(&draw_id).await?.into()))
}

/// `{"beacon": {"network": "quicknet"}}` declares the beacon (or switches it, before any
/// sale or hold), `{"beacon": null}` withdraws it (before any sale or hold). A beacon
/// declared on a draw without one is fixed at once, unless the draw opens more than a
/// minute later.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct PatchDrawBody {
    /// A network by name, or `null`.
    #[schema(value_type = Option<BeaconBody>, required = true)]
    beacon: Value,
}

/// The codes of `patch_draw`'s own errors (the document adds those of its parameters and body).
pub(super) const PATCH_DRAW_CODES: &[Code] = &[
    Code::InvalidBeacon,
    Code::UnknownBeaconNetwork,
    Code::DrawNotFound,
    Code::DrawClosed,
    Code::BeaconFixed,
];

/// Declare or withdraw the beacon
///
/// Allowed while the draw sells, never once it is closing, closed or past `closes_at`
/// (`409 draw_closed`). Once a ticket was sold or held, buyers trusted the beacon: it can
/// no longer be withdrawn or switched (`409 beacon_fixed`); a draw without one may still
/// declare one. Setting the beacon the draw has answers `200` and changes nothing.
#[utoipa::path(
    patch,
    path = "/draws/{draw_id}",
    tag = "draws",
    params(DrawPath),
    request_body = PatchDrawBody,
    responses(
        (status = 200, description = "The draw", body = DrawBody),
    )
)]
pub(super) async fn patch_draw(
    State(state): State<AppState>,
    Acting(by): Acting,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
    JsonBody(body): JsonBody<PatchDrawBody>,
) -> Result<Json<DrawBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let beacon = match body.beacon {
        Value::Null => None,
        value => Some(
            serde_json::from_value::<BeaconBody>(value)
                .map_err(|_| {
                    Problem::new(
                        Code::InvalidBeacon,
                        "`beacon` must be {\"network\": NAME} or null",
                    )
                })?
                .name()?,
        ),
    };
    Ok(Json(
        state
            .tickets
            .set_beacon(&draw_id, beacon, &by)
            .await?
            .into(),
    ))
}

/// What the close fixes with the list; the body may be left out.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CloseDrawBody {
    /// How many prizes the winners will draw, 1 to 97: fixed with the list, before the
    /// beacon round is out; a draw that declared its number at the create takes only that
    /// one. Without either the verifiers cannot tell that the number was not chosen once
    /// the winners could be computed.
    #[schema(minimum = 1, maximum = 97)]
    prizes: Option<u32>,
}

/// The codes of `close_draw`'s own errors (the document adds those of its parameters and body).
pub(super) const CLOSE_DRAW_CODES: &[Code] = &[
    Code::member("draw_id"),
    Code::InvalidPrizes,
    Code::DrawNotFound,
    Code::PrizesFixed,
    Code::NotEnoughEligible,
];

/// Close a draw
///
/// Once it returns no purchase can commit, and the eligible list is frozen: its digest,
/// count, beacon round and number of prizes (the draw's own, else `prizes` if given) are
/// in the answer from then on. Closing a closed draw changes nothing; naming another
/// number of prizes than the draw declared or its close fixed is refused, before anything
/// changes for a draw that declared one (`409 prizes_fixed`).
#[utoipa::path(
    post,
    path = "/draws/{draw_id}/close",
    tag = "draws",
    params(DrawPath),
    request_body = Option<CloseDrawBody>,
    responses(
        (status = 200, description = "The closed draw", body = DrawBody),
    )
)]
pub(super) async fn close_draw(
    State(state): State<AppState>,
    Acting(by): Acting,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
    body: Option<JsonBody<CloseDrawBody>>,
) -> Result<Json<DrawBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let prizes = body
        .and_then(|JsonBody(b)| b.prizes)
        .map(valid_prizes)
        .transpose()?;
    Ok(Json(
        state
            .tickets
            .close_draw(&draw_id, prizes, &by)
            .await?
            .into(),
    ))
}
