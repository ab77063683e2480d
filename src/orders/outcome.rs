//! What one order of a request becomes: created, found, or rejected with a typed code.

use crate::domain::order::{NewOrder, Order};

/// Why one order of a request was not numbered. Callers branch on it (the queue retries
/// what may pass, the API picks a status), so it is a type, not a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectionCode {
    /// The reference is not `[A-Za-z0-9._:-]{1,128}`.
    InvalidExternalRef,
    /// `data` is not a JSON object.
    InvalidData,
    /// `data` is larger than its limit.
    DataTooLarge,
    /// The item is not an object with `external_ref` and optional `data`.
    InvalidOrder,
    /// The reference already has an order with another body.
    IdempotencyConflict,
    /// Too many writers at once; posting the item again is safe.
    Contention,
}

impl RejectionCode {
    pub const ALL: [RejectionCode; 6] = [
        Self::InvalidExternalRef,
        Self::InvalidData,
        Self::DataTooLarge,
        Self::InvalidOrder,
        Self::IdempotencyConflict,
        Self::Contention,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidExternalRef => "invalid_external_ref",
            Self::InvalidData => "invalid_data",
            Self::DataTooLarge => "data_too_large",
            Self::InvalidOrder => "invalid_order",
            Self::IdempotencyConflict => "idempotency_conflict",
            Self::Contention => "contention",
        }
    }

    pub fn parse(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == code)
    }

    /// Whether the same item posted again may succeed.
    pub fn is_retryable(self) -> bool {
        match self {
            Self::Contention => true,
            Self::InvalidExternalRef
            | Self::InvalidData
            | Self::DataTooLarge
            | Self::InvalidOrder
            | Self::IdempotencyConflict => false,
        }
    }
}

impl std::fmt::Display for RejectionCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why one order of a request was not numbered, with a sentence for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub code: RejectionCode,
    pub detail: String,
}

impl Rejection {
    pub fn new(code: RejectionCode, detail: impl Into<String>) -> Self {
        Self {
            code,
            detail: detail.into(),
        }
    }
}

/// One order of a request: what was asked, already checked.
#[derive(Debug, Clone)]
pub struct OrderInput {
    /// As sent, for the answer, even when it is not a valid reference.
    pub external_ref: Option<String>,
    pub order: Result<NewOrder, Rejection>,
}

#[derive(Debug, Clone)]
pub enum ItemOutcome {
    Created(Order),
    Existing(Order),
    Rejected(Rejection),
}

impl ItemOutcome {
    /// The rejection, if the item was not numbered.
    pub fn rejection(&self) -> Option<&Rejection> {
        match self {
            Self::Rejected(rejection) => Some(rejection),
            Self::Created(_) | Self::Existing(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_only_contention_is_retryable() {
        for code in RejectionCode::ALL {
            assert_eq!(RejectionCode::parse(code.as_str()), Some(code));
            assert_eq!(code.is_retryable(), code == RejectionCode::Contention);
        }
        assert_eq!(RejectionCode::parse("nope"), None);
    }
}
