//! What one order of a request becomes: created, found, or rejected with a typed code.

use tally_domain::order::{NewOrder, Order};
use tally_domain::text::{MAX_DETAIL_CHARS, cut};

/// Declares each rejection code once, with its documentation and the string callers see:
/// [`RejectionCode::ALL`], [`RejectionCode::as_str`] and [`RejectionCode::parse`] follow
/// from the one list, so a new code cannot be left out of any of them.
macro_rules! rejection_codes {
    ($($(#[doc = $doc:literal])+ $code:ident => $text:literal,)+) => {
        /// Why one order of a request was not numbered. Callers branch on it (the queue
        /// retries what may pass, the API picks a status), so it is a type, not a string.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RejectionCode {
            $($(#[doc = $doc])+ $code,)+
        }

        impl RejectionCode {
            pub const ALL: &'static [RejectionCode] = &[$(Self::$code),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$code => $text,)+
                }
            }
        }
    };
}

rejection_codes! {
    /// The reference is not `[A-Za-z0-9._:-]{1,128}`.
    InvalidExternalRef => "invalid_external_ref",
    /// `data` is not a JSON object.
    InvalidData => "invalid_data",
    /// `data` is larger than its limit.
    DataTooLarge => "data_too_large",
    /// The item is not an object with `external_ref` and optional `data`.
    InvalidOrder => "invalid_order",
    /// The reference already has an order with another body.
    IdempotencyConflict => "idempotency_conflict",
    /// Too many writers at once; posting the item again is safe.
    Contention => "contention",
    /// A credit series' order does not name the invoice it corrects.
    CorrectsRequired => "corrects_required",
    /// `corrects` is not an order number, or the series credits no other series.
    InvalidCorrects => "invalid_corrects",
    /// The credited series has no invoice with that number.
    InvoiceNotFound => "invoice_not_found",
    /// The invoice is void: a credit note corrects a live invoice only.
    InvoiceVoid => "invoice_void",
    /// The invoice has as many credit notes as one invoice takes.
    CreditNotesFull => "credit_notes_full",
    /// The next number would break the series' `max_length` or exact width.
    SeriesExhausted => "series_exhausted",
    /// Every authorised range is used up.
    RangeExhausted => "range_exhausted",
    /// The authorised ranges left have expired.
    RangeExpired => "range_expired",
}

impl RejectionCode {
    pub fn parse(code: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == code)
    }

    /// Whether the same item posted again may succeed.
    pub fn is_retryable(self) -> bool {
        match self {
            Self::Contention => true,
            Self::InvalidExternalRef
            | Self::InvalidData
            | Self::DataTooLarge
            | Self::InvalidOrder
            | Self::IdempotencyConflict
            | Self::CorrectsRequired
            | Self::InvalidCorrects
            | Self::InvoiceNotFound
            | Self::InvoiceVoid
            | Self::CreditNotesFull
            | Self::SeriesExhausted
            | Self::RangeExhausted
            | Self::RangeExpired => false,
        }
    }

    /// Whether the same item may succeed later without changing: now (contention), or
    /// once something else has happened: its invoice landed, or an operator authorised a
    /// range or gave the series room. An import delivers such items again rather than
    /// dropping them.
    pub fn may_pass_later(self) -> bool {
        self.is_retryable()
            || matches!(
                self,
                Self::InvoiceNotFound
                    | Self::SeriesExhausted
                    | Self::RangeExhausted
                    | Self::RangeExpired
            )
    }

    /// Whether the item was refused by the state of the series or its invoice (`409`),
    /// rather than for what it says (`400`) or for the moment (`503`).
    pub fn is_conflict(self) -> bool {
        matches!(
            self,
            Self::IdempotencyConflict
                | Self::InvoiceNotFound
                | Self::InvoiceVoid
                | Self::CreditNotesFull
                | Self::SeriesExhausted
                | Self::RangeExhausted
                | Self::RangeExpired
        )
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
    /// For a retryable rejection: seconds after which posting again can pass.
    pub retry_after: Option<u32>,
}

impl Rejection {
    /// A rejection of `code`; `detail` is cut to [`MAX_DETAIL_CHARS`] characters, as a
    /// problem's is.
    pub fn new(code: RejectionCode, detail: impl Into<String>) -> Self {
        let detail: String = detail.into();
        Self {
            code,
            detail: cut(&detail, MAX_DETAIL_CHARS).into_owned(),
            retry_after: None,
        }
    }
}

/// One order of a request: what was asked, already checked.
#[derive(Debug, Clone)]
pub struct OrderInput {
    /// As sent, for the answer; an excerpt of one that is not a valid reference.
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
pub(crate) mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_only_contention_is_retryable() {
        for &code in RejectionCode::ALL {
            assert_eq!(RejectionCode::parse(code.as_str()), Some(code));
            assert_eq!(code.is_retryable(), code == RejectionCode::Contention);
        }
        assert_eq!(RejectionCode::parse("nope"), None);
    }

    /// `InvalidExternalRef` as `invalid_external_ref`.
    pub(crate) fn snake_case(name: &str) -> String {
        let mut snake = String::new();
        for c in name.chars() {
            if c.is_ascii_uppercase() && !snake.is_empty() {
                snake.push('_');
            }
            snake.push(c.to_ascii_lowercase());
        }
        snake
    }

    #[test]
    fn each_code_reads_as_its_name_in_snake_case() {
        for &code in RejectionCode::ALL {
            assert_eq!(code.as_str(), snake_case(&format!("{code:?}")));
        }
    }
}
