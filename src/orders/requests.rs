//! The JSON shape of order requests, shared by the HTTP API, the queue consumer and the
//! file import: one order, or a batch whose items are checked one by one.

use serde::Deserialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::{OrderInput, Rejection, RejectionCode};
use crate::domain::ids::{ExternalRef, InvalidId, SeriesId, SourceId};
use crate::domain::order::{MAX_BATCH, NewOrder, OrderData, OrderDataError};

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
    /// The source's own reference: with `source`, the idempotency key.
    #[schema(pattern = "^[A-Za-z0-9._:-]{1,128}$")]
    pub external_ref: String,
    /// Any JSON object up to 16 KiB and 32 levels deep, kept exactly as sent: numbers are never rounded.
    #[schema(value_type = Option<Object>)]
    pub data: Option<Box<RawValue>>,
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

/// One order of a batch.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct BatchItem {
    #[schema(pattern = "^[A-Za-z0-9._:-]{1,128}$")]
    external_ref: String,
    /// Any JSON object up to 16 KiB and 32 levels deep, kept exactly as sent.
    #[schema(value_type = Option<Object>)]
    data: Option<Box<RawValue>>,
}

/// The reference of an item that is otherwise invalid, to echo it in the answer.
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
        let order = new_order(&self.external_ref, self.data).map_err(RequestError::Order)?;
        Ok(OrderRequest {
            series: SeriesId::parse(&self.series)?,
            source: SourceId::parse(&self.source)?,
            inputs: vec![OrderInput {
                external_ref: Some(self.external_ref),
                order: Ok(order),
            }],
        })
    }
}

impl OrderBatch {
    pub fn into_request(self) -> Result<OrderRequest, RequestError> {
        let series = SeriesId::parse(&self.series)?;
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
        struct Shape<'a> {
            #[serde(borrow)]
            orders: Option<&'a RawValue>,
        }
        let shape = |e: serde_json::Error| RequestError::Shape(e.to_string());
        if serde_json::from_str::<Shape>(text)
            .map_err(shape)?
            .orders
            .is_some()
        {
            serde_json::from_str::<OrderBatch>(text)
                .map_err(shape)?
                .into_request()
        } else {
            serde_json::from_str::<SingleOrder>(text)
                .map_err(shape)?
                .into_request()
        }
    }
}

fn data_rejection(err: OrderDataError) -> Rejection {
    let code = match err {
        OrderDataError::TooLarge => RejectionCode::DataTooLarge,
        OrderDataError::NotAnObject
        | OrderDataError::TooDeep
        | OrderDataError::DuplicateKey(_)
        | OrderDataError::Malformed(_) => RejectionCode::InvalidData,
    };
    Rejection::new(code, err.to_string())
}

fn new_order(external_ref: &str, data: Option<Box<RawValue>>) -> Result<NewOrder, Rejection> {
    let external_ref = ExternalRef::parse(external_ref)
        .map_err(|e| Rejection::new(RejectionCode::InvalidExternalRef, e.to_string()))?;
    let data = OrderData::parse(data.as_deref().map(RawValue::get)).map_err(data_rejection)?;
    Ok(NewOrder { external_ref, data })
}

fn batch_input(raw: &RawValue) -> OrderInput {
    let external_ref = serde_json::from_str::<ReferenceOnly>(raw.get())
        .ok()
        .and_then(|item| match item.external_ref {
            Some(serde_json::Value::String(text)) => Some(text),
            _ => None,
        });
    let order = serde_json::from_str::<BatchItem>(raw.get())
        .map_err(|e| Rejection::new(RejectionCode::InvalidOrder, e.to_string()))
        .and_then(|item| new_order(&item.external_ref, item.data));
    OrderInput {
        external_ref,
        order,
    }
}
