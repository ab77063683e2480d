//! The JSON shape of order requests, shared by the HTTP API, the queue consumer and the
//! file import: one order, or a batch whose items are checked one by one.

use serde::Deserialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::{OrderInput, Rejection, RejectionCode};
use crate::json_input::read_object;
use tally_domain::ids::{ExternalRef, InvalidId, SeriesId, SourceId};
use tally_domain::order::{
    MAX_BATCH, MAX_NUMBER_TEXT, NewOrder, OrderData, OrderDataError, is_number_text,
};
use tally_domain::text::excerpt;

/// `POST /orders`: one order to number.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SingleOrder {
    /// The series that numbers it.
    #[schema(pattern = "^[A-Za-z0-9_-]{1,32}$")]
    pub series: String,
    /// The system that posts it.
    #[schema(pattern = "^[A-Za-z0-9._:-]{1,128}$")]
    pub source: String,
    /// The source's own reference (`SO/2026/0001`): with `source`, the idempotency key,
    /// unique per source across all series.
    #[schema(pattern = "^[A-Za-z0-9._~!$&'()*+,;=:@/-]{1,128}$")]
    pub external_ref: String,
    /// Any JSON object up to 16 KiB and 32 levels deep, kept exactly as sent: numbers are never rounded.
    #[schema(value_type = Option<Object>)]
    pub data: Option<Box<RawValue>>,
    /// A credit note: the number of the invoice it corrects, in the series this series
    /// credits. Required in such a series, refused in any other.
    #[schema(pattern = "^[A-Za-z0-9_./-]{1,256}$")]
    pub corrects: Option<String>,
}

/// `POST /series/{series_id}/orders`: one order to number in the series of the path.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeriesOrder {
    /// The system that posts it.
    #[schema(pattern = "^[A-Za-z0-9._:-]{1,128}$")]
    pub source: String,
    /// The source's own reference (`SO/2026/0001`): with `source`, the idempotency key,
    /// unique per source across all series.
    #[schema(pattern = "^[A-Za-z0-9._~!$&'()*+,;=:@/-]{1,128}$")]
    pub external_ref: String,
    /// Any JSON object up to 16 KiB, kept exactly as sent: numbers are never rounded.
    #[schema(value_type = Option<Object>)]
    pub data: Option<Box<RawValue>>,
    /// A credit note: the number of the invoice it corrects, in the series this series
    /// credits. Required in such a series, refused in any other.
    #[schema(pattern = "^[A-Za-z0-9_./-]{1,256}$")]
    pub corrects: Option<String>,
}

/// `POST /orders/batch`: 1 to 1,000 orders of one series and source. Items stay raw so
/// that a bad one is rejected alone.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderBatch {
    #[schema(pattern = "^[A-Za-z0-9_-]{1,32}$")]
    pub series: String,
    #[schema(pattern = "^[A-Za-z0-9._:-]{1,128}$")]
    pub source: String,
    /// Numbered in this order; an invalid item is rejected alone.
    #[schema(value_type = Vec<BatchItem>, min_items = 1, max_items = 1_000)]
    pub orders: Vec<Box<RawValue>>,
}

/// `POST /series/{series_id}/orders/batch`: 1 to 1,000 orders of one source, numbered in
/// the series of the path.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeriesOrderBatch {
    #[schema(pattern = "^[A-Za-z0-9._:-]{1,128}$")]
    pub source: String,
    /// Numbered in this order; an invalid item is rejected alone.
    #[schema(value_type = Vec<BatchItem>, min_items = 1, max_items = 1_000)]
    pub orders: Vec<Box<RawValue>>,
}

/// One order of a batch.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct BatchItem {
    #[schema(pattern = "^[A-Za-z0-9._~!$&'()*+,;=:@/-]{1,128}$")]
    external_ref: String,
    /// Any JSON object up to 16 KiB and 32 levels deep, kept exactly as sent.
    #[schema(value_type = Option<Object>)]
    data: Option<Box<RawValue>>,
    /// A credit note: the number of the invoice it corrects.
    #[schema(pattern = "^[A-Za-z0-9_./-]{1,256}$")]
    corrects: Option<String>,
}

/// The reference of an item that is otherwise invalid, to echo it in the answer: as sent
/// when it is a valid reference, as an excerpt when it is not (it may be megabytes long).
#[derive(Deserialize)]
struct ReferenceOnly {
    external_ref: Option<serde_json::Value>,
}

/// A request ready for [`super::OrderService::create_orders`].
#[derive(Debug)]
pub struct OrderRequest {
    pub series: SeriesId,
    pub source: SourceId,
    pub inputs: Vec<OrderInput>,
}

/// Why a whole request was refused.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error(transparent)]
    Id(#[from] InvalidId),
    #[error("a batch holds 1 to {MAX_BATCH} orders")]
    BatchSize,
    #[error("{}", .0.detail)]
    Order(Rejection),
    #[error("{0}")]
    Shape(String),
}

impl SingleOrder {
    pub fn into_request(self) -> Result<OrderRequest, RequestError> {
        let order = SeriesOrder {
            source: self.source,
            external_ref: self.external_ref,
            data: self.data,
            corrects: self.corrects,
        };
        order.into_request(&self.series)
    }
}

impl SeriesOrder {
    /// The request for the series `series`.
    pub fn into_request(self, series: &str) -> Result<OrderRequest, RequestError> {
        let series = SeriesId::parse(series)?;
        let source = SourceId::parse(&self.source)?;
        let order =
            new_order(&self.external_ref, self.data, self.corrects).map_err(RequestError::Order)?;
        Ok(OrderRequest {
            series,
            source,
            inputs: vec![OrderInput {
                external_ref: Some(self.external_ref),
                order: Ok(order),
            }],
        })
    }
}

impl OrderBatch {
    pub fn into_request(self) -> Result<OrderRequest, RequestError> {
        let batch = SeriesOrderBatch {
            source: self.source,
            orders: self.orders,
        };
        batch.into_request(&self.series)
    }
}

impl SeriesOrderBatch {
    /// The request for the series `series`.
    pub fn into_request(self, series: &str) -> Result<OrderRequest, RequestError> {
        let series = SeriesId::parse(series)?;
        let source = SourceId::parse(&self.source)?;
        if self.orders.is_empty() || self.orders.len() > MAX_BATCH {
            return Err(RequestError::BatchSize);
        }
        Ok(OrderRequest {
            series,
            source,
            inputs: self
                .orders
                .into_iter()
                .map(|raw| batch_input(&raw))
                .collect(),
        })
    }
}

impl OrderRequest {
    /// A request from JSON text of either shape: a batch has `orders`, a single order has
    /// not.
    pub fn from_json(text: &str) -> Result<Self, RequestError> {
        #[derive(Deserialize)]
        struct Shape {
            orders: Option<serde::de::IgnoredAny>,
        }
        const WHOLE: &str = "the message";
        if read_object::<Shape>(text, WHOLE)
            .map_err(RequestError::Shape)?
            .orders
            .is_some()
        {
            read_object::<OrderBatch>(text, WHOLE)
                .map_err(RequestError::Shape)?
                .into_request()
        } else {
            read_object::<SingleOrder>(text, WHOLE)
                .map_err(RequestError::Shape)?
                .into_request()
        }
    }
}

fn data_rejection(err: OrderDataError) -> Rejection {
    let code = match err {
        OrderDataError::TooLarge => RejectionCode::DataTooLarge,
        OrderDataError::NotAnObject(_)
        | OrderDataError::TooDeep
        | OrderDataError::DuplicateKey(_)
        | OrderDataError::Malformed(_) => RejectionCode::InvalidData,
    };
    Rejection::new(code, err.to_string())
}

fn new_order(
    external_ref: &str,
    data: Option<Box<RawValue>>,
    corrects: Option<String>,
) -> Result<NewOrder, Rejection> {
    let external_ref = ExternalRef::parse(external_ref)
        .map_err(|e| Rejection::new(RejectionCode::InvalidExternalRef, e.to_string()))?;
    let data = OrderData::parse(data.as_deref().map(RawValue::get)).map_err(data_rejection)?;
    if let Some(invoice) = &corrects
        && !is_number_text(invoice)
    {
        return Err(Rejection::new(
            RejectionCode::InvalidCorrects,
            format!(
                "`corrects` must be an order number: 1 to {MAX_NUMBER_TEXT} letters, digits, '-', '_', '/' and '.'"
            ),
        ));
    }
    Ok(NewOrder {
        external_ref,
        data,
        corrects,
    })
}

fn batch_input(raw: &RawValue) -> OrderInput {
    let external_ref = serde_json::from_str::<ReferenceOnly>(raw.get())
        .ok()
        .and_then(|item| match item.external_ref {
            Some(serde_json::Value::String(text)) if ExternalRef::parse(&text).is_ok() => {
                Some(text)
            }
            Some(serde_json::Value::String(text)) => Some(excerpt(&text).into_owned()),
            _ => None,
        });
    let order = read_object::<BatchItem>(raw.get(), "the order")
        .map_err(|detail| Rejection::new(RejectionCode::InvalidOrder, detail))
        .and_then(|item| new_order(&item.external_ref, item.data, item.corrects));
    OrderInput {
        external_ref,
        order,
    }
}
