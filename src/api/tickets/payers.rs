//! A payer's rules across every draw: spend limits per currency and calendar window,
//! and self-exclusion. Both are enforced in the transaction of each sale.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use jiff::Timestamp;
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::super::AppState;
use super::super::caller::Acting;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::{Code, Problem};
use super::super::timestamp;
use crate::json_input::{optional_rfc3339, unique_entries};
use crate::tickets::PayerTerms;
use tally_domain::ids::PayerId;
use tally_domain::spend::{Currency, Exclusion, LimitChange, MAX_LIMIT_CURRENCIES, Span, left_in};
use utoipa::openapi::{ObjectBuilder, Ref, RefOr, Schema, Type};

/// A payer, across every draw.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct PayerPath {
    /// As purchases give it (compared in Unicode NFC), URL-encoded.
    #[param(
        pattern = "^[^\\s\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0](?:[^\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0]{0,254}[^\\s\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0])?$"
    )]
    payer_id: String,
}

/// Amounts in minor units (0 and up) for a calendar `day`, `week` (Monday first) and
/// `month` in the deployment's time zone; a span left out has no limit.
#[derive(Deserialize, Serialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct SpanAmounts {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_u64)]
    day: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_u64)]
    week: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_u64)]
    month: Option<u64>,
}

/// The payer's limits, by ISO 4217 currency: each currency named replaces that
/// currency's limits; currencies left out keep theirs. A currency named twice is refused.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct LimitsBody {
    #[schema(inline)]
    limits: CurrencyLimits,
}

/// Amounts by currency, in at most [`MAX_LIMIT_CURRENCIES`] currencies, each named once
/// (a map would keep the last of a currency named twice).
struct CurrencyLimits(Vec<(String, SpanAmounts)>);

impl<'de> Deserialize<'de> for CurrencyLimits {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        unique_entries(deserializer).map(Self)
    }
}

impl PartialSchema for CurrencyLimits {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .additional_properties(Some(Ref::from_schema_name(SpanAmounts::name())))
            .property_names(Some(ObjectBuilder::new().schema_type(Type::String)))
            .max_properties(Some(MAX_LIMIT_CURRENCIES))
            .into()
    }
}

impl ToSchema for CurrencyLimits {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((SpanAmounts::name().into_owned(), SpanAmounts::schema()));
        SpanAmounts::schemas(schemas);
    }
}

/// A self-exclusion from every draw.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ExclusionBody {
    /// When it ends (RFC 3339, in the future); `null` or absent: it has no end.
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(default, deserialize_with = "optional_rfc3339")]
    excluded_until: Option<Timestamp>,
}

/// One span's limit in one currency.
#[derive(Serialize, ToSchema)]
pub(super) struct LimitBody {
    /// In force now, minor units; `null`: no limit.
    #[schema(required = true)]
    limit: Option<u64>,
    /// A higher limit (or none, `null`) waiting for its cooling-off span.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    raise: Option<RaiseBody>,
    /// The calendar window that runs now (`2026-12-05`, `2026-W49`, `2026-12`).
    window: String,
    /// Spent in it, voids given back.
    spent: u64,
    /// What is left in it; `null` without a limit.
    #[schema(required = true)]
    left: Option<u64>,
}

/// A raised limit and when it applies.
#[derive(Serialize, ToSchema)]
pub(super) struct RaiseBody {
    #[schema(required = true)]
    limit: Option<u64>,
    #[schema(format = DateTime)]
    applies_at: String,
}

/// A payer's limits, exclusion and spend as they are now.
#[derive(Serialize, ToSchema)]
pub(super) struct PayerTermsBody {
    payer_id: String,
    /// By currency, then span: the payer's own limits, or the deployment's default for
    /// a currency the payer set none in, with the spend of the windows that run now.
    #[schema(value_type = BTreeMap<String, BTreeMap<String, LimitBody>>)]
    limits: BTreeMap<String, BTreeMap<&'static str, LimitBody>>,
    /// Whether the payer is excluded now.
    excluded: bool,
    /// When the exclusion ends; `null` when it has no end or none runs.
    #[schema(required = true, format = DateTime)]
    excluded_until: Option<String>,
}

impl PayerTermsBody {
    fn new(payer: &PayerId, terms: PayerTerms, state: &AppState) -> Self {
        let (record, at) = (&terms.record, terms.at);
        let default = &state.tickets.spend_rules().default;
        let mut currencies: Vec<Currency> = record.limits.0.keys().copied().collect();
        currencies.extend(default.0.keys().copied());
        currencies.extend(record.spent.keys().map(|(c, _)| *c));
        currencies.sort();
        currencies.dedup();
        let mut limits = BTreeMap::new();
        for currency in currencies {
            let own = record
                .limits
                .0
                .get(&currency)
                .or_else(|| default.0.get(&currency));
            let mut spans = BTreeMap::new();
            for (span, window) in &terms.windows {
                let stored = own.and_then(|l| l.get(span)).copied().unwrap_or_default();
                let limit = stored.at(at);
                let counted = record.spent.get(&(currency, *span));
                let spent = counted
                    .filter(|c| &c.window == window)
                    .map_or(0, |c| c.amount);
                spans.insert(
                    span.as_str(),
                    LimitBody {
                        limit,
                        raise: stored.raise.filter(|r| r.from > at).map(|r| RaiseBody {
                            limit: r.to,
                            applies_at: timestamp(r.from),
                        }),
                        window: window.as_str().to_owned(),
                        spent,
                        left: limit.map(|l| left_in(l, window, counted)),
                    },
                );
            }
            limits.insert(currency.to_string(), spans);
        }
        let exclusion = record.exclusion.filter(|e| e.excludes(at));
        Self {
            payer_id: payer.to_string(),
            limits,
            excluded: exclusion.is_some(),
            excluded_until: exclusion.and_then(|e| e.until).map(timestamp),
        }
    }
}

pub(super) const SET_LIMITS_CODES: &[Code] = &[Code::member("limits"), Code::member("currency")];

/// Set a payer's spend limits
///
/// Limits hold across every draw, per currency, for the calendar day, week and month in
/// the deployment's time zone; 0 is a limit too. A lower limit applies at once; a higher
/// one (or none) only after the deployment's cooling-off span: the answer's `raise`
/// says when. Each purchase, hold and hold payment is checked in its own transaction.
#[utoipa::path(
    put,
    path = "/payers/{payer_id}/limits",
    tag = "payers",
    params(PayerPath),
    request_body = LimitsBody,
    responses((status = 200, description = "The payer's terms now", body = PayerTermsBody))
)]
pub(super) async fn set_limits(
    State(state): State<AppState>,
    Acting(by): Acting,
    PathParams(PayerPath { payer_id }): PathParams<PayerPath>,
    JsonBody(body): JsonBody<LimitsBody>,
) -> Result<Json<PayerTermsBody>, Problem> {
    let payer = PayerId::parse(&payer_id)?;
    let mut wanted = LimitChange::new();
    for (code, amounts) in body.limits.0 {
        let currency = Currency::parse(&code)?;
        let spans = [
            (Span::Day, amounts.day),
            (Span::Week, amounts.week),
            (Span::Month, amounts.month),
        ];
        wanted.insert(
            currency,
            spans
                .into_iter()
                .filter_map(|(p, a)| a.map(|a| (p, a)))
                .collect(),
        );
    }
    let terms = state.tickets.set_limits(&payer, &wanted, &by).await?;
    Ok(Json(PayerTermsBody::new(&payer, terms, &state)))
}

pub(super) const GET_LIMITS_CODES: &[Code] = &[];

/// Read a payer's limits and exclusion
#[utoipa::path(
    get,
    path = "/payers/{payer_id}/limits",
    tag = "payers",
    params(PayerPath),
    responses((status = 200, description = "The payer's terms now", body = PayerTermsBody))
)]
pub(super) async fn get_limits(
    State(state): State<AppState>,
    PathParams(PayerPath { payer_id }): PathParams<PayerPath>,
) -> Result<Json<PayerTermsBody>, Problem> {
    let payer = PayerId::parse(&payer_id)?;
    let terms = state.tickets.payer_terms(&payer).await?;
    Ok(Json(PayerTermsBody::new(&payer, terms, &state)))
}

pub(super) const SET_EXCLUSION_CODES: &[Code] = &[Code::member("excluded_until")];

/// Exclude a payer from every draw
///
/// From the moment this answers, no purchase, hold, hold payment or free entry of the
/// payer commits in any draw (`403 payer_excluded`) until `excluded_until` (never, without
/// it). An exclusion is extended by a later end, never shortened or lifted before it ends:
/// an earlier end leaves the one in force as it is.
#[utoipa::path(
    put,
    path = "/payers/{payer_id}/exclusion",
    tag = "payers",
    params(PayerPath),
    request_body = ExclusionBody,
    responses((status = 200, description = "The payer's terms now", body = PayerTermsBody))
)]
pub(super) async fn set_exclusion(
    State(state): State<AppState>,
    Acting(by): Acting,
    PathParams(PayerPath { payer_id }): PathParams<PayerPath>,
    JsonBody(body): JsonBody<ExclusionBody>,
) -> Result<Json<PayerTermsBody>, Problem> {
    let payer = PayerId::parse(&payer_id)?;
    let wanted = Exclusion {
        until: body.excluded_until,
    };
    let terms = state.tickets.set_exclusion(&payer, wanted, &by).await?;
    Ok(Json(PayerTermsBody::new(&payer, terms, &state)))
}
