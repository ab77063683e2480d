//! Every problem code, declared once with its HTTP status and what it means for the
//! caller: a problem is made from its code, so a new code cannot forget its status, the
//! OpenAPI document says each code's sentence, and no code is spelled anywhere else.

use std::borrow::Cow;

use axum::http::StatusCode;

use crate::orders::RejectionCode;

/// `Name = STATUS "code" ["member", ...]: "meaning",` declares [`Code::Name`], answered
/// with `StatusCode::STATUS`, whose problem documents carry the members listed (if any),
/// and which means for the caller what the sentence says (and what to do about it).
macro_rules! problem_codes {
    ($($code:ident = $status:ident $text:literal $([$($member:literal),+])?: $meaning:literal,)+) => {
        /// What went wrong, for programs: the `code` of a problem document.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Code {
            $($code,)+
            /// A member of the body or a parameter of the path of the wrong type or out of
            /// range: `invalid_<name>`.
            Invalid(Cow<'static, str>),
        }

        impl Code {
            /// Every code but the `invalid_<name>` family.
            #[cfg(test)]
            pub const FIXED: &'static [Code] = &[$(Self::$code),+];

            pub fn status(&self) -> StatusCode {
                match self {
                    $(Self::$code => StatusCode::$status,)+
                    Self::Invalid(_) => StatusCode::BAD_REQUEST,
                }
            }

            /// The members a problem of this code carries besides the standard ones.
            pub fn members(&self) -> &'static [&'static str] {
                match self {
                    $(Self::$code => &[$($($member),+)?],)+
                    Self::Invalid(_) => &[],
                }
            }

            pub fn as_str(&self) -> Cow<'static, str> {
                match self {
                    $(Self::$code => Cow::Borrowed($text),)+
                    Self::Invalid(name) => Cow::Owned(format!("invalid_{name}")),
                }
            }

            /// One sentence: what the code means for the caller, and what to do.
            pub fn meaning(&self) -> Cow<'static, str> {
                match self {
                    $(Self::$code => Cow::Borrowed($meaning),)+
                    Self::Invalid(name) => Cow::Owned(format!(
                        "`{name}` has the wrong type, is out of range or breaks its format; \
                         the `detail` says what it takes."
                    )),
                }
            }
        }
    };
}

problem_codes! {
    BeaconNotDeclared = BAD_REQUEST "beacon_not_declared":
        "the draw declared no beacon, so its winners take no `beacon_signature`; send the \
         request without one.",
    BeaconSignatureRequired = BAD_REQUEST "beacon_signature_required" ["round"]:
        "the winners rest on beacon round `round`: send that round's signature as \
         `beacon_signature`.",
    CharacterNotAllowed = BAD_REQUEST "character_not_allowed" ["number", "character"]:
        "`number` would hold `character`, which the series' `allowed_characters` refuse; \
         change the format or the rule.",
    CorrectsRequired = BAD_REQUEST "corrects_required":
        "the series numbers credit notes: name the invoice each one corrects in `corrects`.",
    DataTooLarge = BAD_REQUEST "data_too_large":
        "the order's `data` is larger than its limit; send less of it.",
    FormatMissingDateToken = BAD_REQUEST "format_missing_date_token":
        "a series that resets needs a date token of its period in `format` (such as `{yy}` \
         for yearly), or its numbers would repeat; add one.",
    InvalidAllowedCharacters = BAD_REQUEST "invalid_allowed_characters":
        "`allowed_characters` is empty, too long or not characters and ranges such as \
         `A-Za-z0-9/-`; correct it.",
    InvalidBatchSize = BAD_REQUEST "invalid_batch_size":
        "the batch has no orders, or more than one batch may hold; split it into smaller \
         batches.",
    InvalidBeacon = BAD_REQUEST "invalid_beacon":
        "`beacon.network` is not a network name (letters, digits, `-` and `_`); correct it.",
    InvalidBeaconSignature = BAD_REQUEST "invalid_beacon_signature" ["round"]:
        "`beacon_signature` is not the network's signature of round `round`; send the one \
         the network published.",
    InvalidBody = BAD_REQUEST "invalid_body":
        "the body is not a JSON object, lacks a required member or has one the route does \
         not take; the `detail` names it.",
    InvalidChannel = BAD_REQUEST "invalid_channel":
        "`channel` is neither `online` nor `postal`; send one of them, or leave it out for \
         `online`.",
    InvalidClosesAt = BAD_REQUEST "invalid_closes_at":
        "`closes_at` is not an RFC 3339 date and time, or it has passed: a new draw must \
         close in the future.",
    InvalidCorrects = BAD_REQUEST "invalid_corrects":
        "`corrects` is not an order number, or the series credits no other series; name an \
         invoice of the series it credits.",
    InvalidCredits = BAD_REQUEST "invalid_credits":
        "`credits` names a series that does not exist, or the series itself; name another \
         existing series.",
    InvalidCursor = BAD_REQUEST "invalid_cursor":
        "`cursor` is not one this listing gave; start again from the first page.",
    InvalidData = BAD_REQUEST "invalid_data":
        "the order's `data` is not a JSON object (PHP encodes an empty array as `[]`); send \
         an object or leave it out.",
    InvalidExternalRef = BAD_REQUEST "invalid_external_ref":
        "`external_ref` is missing or not a valid reference; send the order's own reference \
         in its source system.",
    InvalidFiscalYearStart = BAD_REQUEST "invalid_fiscal_year_start":
        "`fiscal_year_start` is not a month from 1 to 12.",
    InvalidFormat = BAD_REQUEST "invalid_format":
        "`format` cannot number orders (an unknown token, no `{seq}`, a width out of \
         range); the `detail` says what to fix.",
    InvalidHoldSeconds = BAD_REQUEST "invalid_hold_seconds":
        "`hold_seconds` is outside 30 to 3600; choose a hold's lifetime within them.",
    InvalidInstantWins = BAD_REQUEST "invalid_instant_wins":
        "`instant_wins` is not a list of prizes this draw can hold; the `detail` says which \
         one and why.",
    InvalidLimit = BAD_REQUEST "invalid_limit":
        "`limit` is not a page size this listing takes; ask for a smaller page.",
    InvalidMaxLength = BAD_REQUEST "invalid_max_length":
        "`max_length` is outside the lengths a number may have; choose one within them.",
    InvalidMaxHeldPerPayer = BAD_REQUEST "invalid_max_held_per_payer":
        "`max_held_per_payer` is outside 1 to 500; choose how many numbers one payer's \
         live holds may take within them.",
    InvalidMaxHeldPercent = BAD_REQUEST "invalid_max_held_percent":
        "`max_held_percent` is outside 1 to 100; choose the share of the draw that live \
         holds may take within them.",
    InvalidMaxPerPayer = BAD_REQUEST "invalid_max_per_payer":
        "`max_per_payer` is 0 or larger than a draw can be; send a positive cap, or none.",
    InvalidMaxPerPurchase = BAD_REQUEST "invalid_max_per_purchase":
        "`max_per_purchase` is 0 or larger than one purchase may take; send a smaller \
         positive number.",
    InvalidNext = BAD_REQUEST "invalid_next":
        "`next` is not a counter a series can move to (2 up to the largest counter); \
         correct it.",
    InvalidNumbers = BAD_REQUEST "invalid_numbers":
        "`numbers` are not 1 to `max_per_purchase` distinct numbers of the draw, or came \
         with `quantity`; the `detail` says which.",
    InvalidOrder = BAD_REQUEST "invalid_order":
        "an item of the batch is not an object with `external_ref` and optional `data`; \
         correct that item.",
    InvalidOrderNumber = BAD_REQUEST "invalid_order_number":
        "the path's order number holds characters no order number has; send it as issued, a \
         `/` as `%2F`.",
    InvalidPath = BAD_REQUEST "invalid_path":
        "a parameter of the path cannot be decoded (broken percent-encoding); encode it \
         again.",
    InvalidPeriod = BAD_REQUEST "invalid_period":
        "`period` is not a period of the series' reset (such as `2026`, `2026-05`, \
         `2026-05-31` or `all`); correct it.",
    InvalidPrize = BAD_REQUEST "invalid_prize":
        "the path's prize is not a positive whole number; name a prize as the winners list \
         it.",
    InvalidPrizes = BAD_REQUEST "invalid_prizes":
        "`prizes` is 0 or more than a draw may award, or (at the create) than its \
         `total_tickets` (ask for fewer), or missing from a winners request of a draw that \
         fixed none.",
    InvalidQuantity = BAD_REQUEST "invalid_quantity" ["max_per_purchase"]:
        "`quantity` is 0 or more than `max_per_purchase`; buy at most that many at once.",
    InvalidQuery = BAD_REQUEST "invalid_query":
        "the query has a parameter the route does not take or a value of the wrong type; \
         the `detail` says which.",
    InvalidRangeLowPercent = BAD_REQUEST "invalid_range_low_percent":
        "`range_low_percent` is outside 1 to 100.",
    InvalidRanges = BAD_REQUEST "invalid_ranges":
        "`ranges` are not ordered, disjoint counter ranges with an authority reference \
         each; the `detail` says which one is wrong.",
    InvalidReason = BAD_REQUEST "invalid_reason": "`reason` is empty or too long; say briefly why.",
    InvalidReset = BAD_REQUEST "invalid_reset":
        "`reset` is not one of `never`, `yearly`, `monthly`, `daily`, `fiscal_yearly`.",
    InvalidSchedule = BAD_REQUEST "invalid_schedule":
        "`opens_at` is not before `closes_at`; give the draw a time to sell.",
    InvalidStart = BAD_REQUEST "invalid_start":
        "`start` is 0, too large, or wider than the format's exact width; choose a first \
         counter that fits.",
    InvalidStripes = BAD_REQUEST "invalid_stripes":
        "`stripes` is out of range, more than `total_tickets`, or too many for one purchase \
         to fit a transaction; use fewer.",
    InvalidStatus = BAD_REQUEST "invalid_status":
        "`status` is not one this listing filters by: a draw's `scheduled`, `open`, \
         `sold_out`, `closing` or `closed`, a purchase's `active` or `void`.",
    InvalidTicketNumber = BAD_REQUEST "invalid_ticket_number":
        "the path's ticket number is not a positive whole number.",
    InvalidTimezone = BAD_REQUEST "invalid_timezone":
        "`timezone` is not an IANA time zone name such as `Europe/Berlin`.",
    InvalidTotalTickets = BAD_REQUEST "invalid_total_tickets":
        "`total_tickets` is 0 or more than a draw may hold.",
    InvalidValidationCode = BAD_REQUEST "invalid_validation_code":
        "`validation_code` is not a short run of letters and digits; correct it.",
    MalformedJson = BAD_REQUEST "malformed_json":
        "the body is not JSON (or holds a number JSON cannot carry); the `detail` says \
         where it breaks.",
    NumberTooLong = BAD_REQUEST "number_too_long" ["number", "max_length"]:
        "`number` would be longer than the series' `max_length`; shorten the format or \
         allow longer numbers.",
    PayerIdRequired = BAD_REQUEST "payer_id_required":
        "the draw caps tickets per payer, so a purchase must name its `payer_id`.",
    TicketOutOfRange = BAD_REQUEST "ticket_out_of_range":
        "the ticket number is beyond the draw's `total_tickets`.",
    UnknownBeaconNetwork = BAD_REQUEST "unknown_beacon_network" ["known"]:
        "this deployment knows no beacon network of that name; choose one of `known`.",
    UnreadableBody = BAD_REQUEST "unreadable_body":
        "the body could not be read to its end (a broken connection or encoding); nothing \
         was done, so send it again.",
    ValidationCodeRequired = BAD_REQUEST "validation_code_required":
        "the format shows `{code}`: give the series a `validation_code`.",
    WrongBeaconRound = BAD_REQUEST "wrong_beacon_round" ["round"]:
        "the signature is of another round than the one that counts; send the signature of \
         `round`.",
    ForeignOrigin = FORBIDDEN "foreign_origin":
        "the local server answers a browser only from its own pages, not from another \
         site's; open the page the server serves, or call it from a program.",
    IdentityRequired = FORBIDDEN "identity_required":
        "the deployment binds callers to order sources and the request has no identity (IAM \
         or a token); call the route through the API with its authorizer.",
    SeriesNotAllowed = FORBIDDEN "series_not_allowed":
        "a series is defined and changed only by callers the deployment binds to every \
         source (`*`): it numbers every source's orders; this caller is bound to some \
         sources only.",
    JournalNotAllowed = FORBIDDEN "journal_not_allowed":
        "the operator journal is read only by callers the deployment binds to every source \
         (`*`); this caller is bound to some sources only.",
    PayerExcluded = FORBIDDEN "payer_excluded" ["excluded_until"]:
        "the payer excluded themselves from every draw until `excluded_until` (`null`: \
         with no end); nothing of theirs is sold, held or entered meanwhile.",
    SourceNotAllowed = FORBIDDEN "source_not_allowed":
        "the caller's role may not act as that `source`; call with the role bound to it.",
    DrawNotFound = NOT_FOUND "draw_not_found":
        "no draw has this id; create it first, or check the id.",
    HoldNotFound = NOT_FOUND "hold_not_found": "no hold has this id in the draw.",
    NoInstantWins = NOT_FOUND "no_instant_wins":
        "the draw was created without instant wins, so it has none to show.",
    OrderNotFound = NOT_FOUND "order_not_found":
        "no order that this caller may see has that number or reference.",
    PrizeNotFound = NOT_FOUND "prize_not_found": "the draw has no prize of that number.",
    PurchaseNotFound = NOT_FOUND "purchase_not_found":
        "no purchase has this payment id in the draw.",
    RouteNotFound = NOT_FOUND "route_not_found": "no route has this path.",
    SeriesNotFound = NOT_FOUND "series_not_found":
        "no series has this id; define it first with `PUT /series/{series_id}`.",
    TicketNotSold = NOT_FOUND "ticket_not_sold":
        "nobody holds this ticket: it is not sold (a ticket of a voided purchase reads `void`).",
    VerifyPageNotBuilt = NOT_FOUND "verify_page_not_built":
        "the local server has no browser verifier to serve; build it with \
         `scripts/verify-page.sh`.",
    WinnersNotDrawn = NOT_FOUND "winners_not_drawn":
        "the draw's winners are not drawn yet; ask again once they are.",
    MethodNotAllowed = METHOD_NOT_ALLOWED "method_not_allowed":
        "the path does not take this method.",
    BodyTimeout = REQUEST_TIMEOUT "body_timeout":
        "the body did not all arrive within the body read timeout; nothing was done, and \
         the connection is closed.",
    AlreadyVoided = CONFLICT "already_voided" ["reason"]:
        "the order is void already, for the other `reason`; nothing changed.",
    AmbiguousOrderNumber = CONFLICT "ambiguous_order_number" ["candidates"]:
        "several orders have this number; ask again under the series and period of one of \
         the `candidates`.",
    BeaconFixed = CONFLICT "beacon_fixed":
        "the draw's beacon is fixed (a ticket was sold or held, or it was declared while \
         the draw may sell), so it can no longer be withdrawn or switched; nothing changed.",
    BeaconNotPublished = CONFLICT "beacon_not_published" ["round", "publishes_at"]:
        "beacon round `round` is not published yet; send its signature after \
         `publishes_at`.",
    CodeInUse = CONFLICT "code_in_use":
        "the series has issued numbers, so its validation code is fixed.",
    DrawClosed = CONFLICT "draw_closed": "the draw no longer sells or holds; nothing was bought.",
    DrawExists = CONFLICT "draw_exists":
        "a draw of this id exists with other settings; choose another id, or repeat the \
         first request as it was.",
    DrawNotOpen = CONFLICT "draw_not_open" ["opens_at"]:
        "the draw does not sell yet; try again from `opens_at`.",
    DrawOpen = CONFLICT "draw_open": "the draw still sells: close it before drawing its winners.",
    NotFrozen = CONFLICT "not_frozen":
        "the draw declared no number of prizes, so its eligible list waits to be frozen with \
         the one its close or winners call names; a read names none.",
    FormatOverlaps = CONFLICT "format_overlaps" ["series", "example"]:
        "another `series` of the issuer, or this one in another period, could render a \
         text this format could (such as `example`); choose a format whose numbers differ, \
         or another issuer.",
    FormatInUse = CONFLICT "format_in_use":
        "a series that never resets keeps its format once it has issued a number.",
    HoldExpired = CONFLICT "hold_expired":
        "the hold expired or was released, so its numbers may be someone else's; hold or \
         buy again.",
    HoldUsed = CONFLICT "hold_used": "another payment has already converted this hold.",
    HoldsFull = CONFLICT "holds_full" ["max_held_percent", "first_hold_ends_at"]:
        "live holds take as many numbers as the draw's `max_held_percent` allows where \
         these would lie; buy them without holding, or hold after `first_hold_ends_at` \
         (absent when no live hold is known there).",
    IdempotencyConflict = CONFLICT "idempotency_conflict":
        "this id or reference was used with another body; repeat the first body, or use a \
         new id.",
    IssuerFull = CONFLICT "issuer_full":
        "the issuer's series hold as many formats between them as one issuer keeps; name \
         another issuer for new series.",
    InvoiceCredited = CONFLICT "invoice_credited":
        "the invoice has credit notes, so it stays live, corrected by them; it cannot be \
         voided.",
    InvoiceNotFound = CONFLICT "invoice_not_found":
        "the series this one credits has no invoice with the number in `corrects`.",
    InvoiceVoid = CONFLICT "invoice_void":
        "the invoice named in `corrects` is void; a credit note corrects a live invoice \
         only.",
    CreditNotesFull = CONFLICT "credit_notes_full":
        "the invoice named in `corrects` has as many credit notes as one invoice takes; it \
         takes no more.",
    MoveNotForward = CONFLICT "move_not_forward" ["next"]:
        "a counter moves forward only, and the next counter is already `next`; move to a \
         later one.",
    NotEnoughEligible = CONFLICT "not_enough_eligible" ["eligible"]:
        "fewer tickets are eligible (`eligible`) than prizes asked for; ask for at most \
         that many.",
    NumbersTaken = CONFLICT "numbers_taken" ["numbers"]:
        "the chosen `numbers` are sold or held by someone else; choose others.",
    PeriodNotCurrent = CONFLICT "period_not_current" ["period"]:
        "the move names a period other than the current one, `period`, and no move like it \
         was made in the period it names; a move applies to the current period only.",
    PrizesFixed = CONFLICT "prizes_fixed" ["prizes"]:
        "the draw fixed the number of prizes, `prizes`, at its create or its close, before \
         the round was out (`null`: none, and it is too late to fix one); draw that many, or \
         leave `prizes` out.",
    PayerHoldLimit = CONFLICT "payer_hold_limit" ["max_held_per_payer", "left"]:
        "the payer's live holds would take more numbers than the draw's \
         `max_held_per_payer`; hold at most `left` more, or pay for or release a hold first.",
    PayerLimit = CONFLICT "payer_limit" ["max_per_payer", "left"]:
        "the payer would pass the draw's `max_per_payer`; buy at most `left` more.",
    SpendLimit = CONFLICT "spend_limit" ["span", "window", "currency", "spend_limit", "left"]:
        "the payer's `spend_limit` for a calendar `span` (day, week or month; `window` is \
         the one that runs now, in the deployment's time zone) leaves `left`; spend at most \
         that.",
    RangeExhausted = CONFLICT "range_exhausted":
        "every authorised range of the series is used up; add a range before numbering \
         more.",
    RangeExpired = CONFLICT "range_expired":
        "the series' remaining authorised ranges have expired; add a live range before \
         numbering more.",
    RangeInUse = CONFLICT "range_in_use":
        "the change would alter a range already numbered from, or add one before the next \
         counter; keep those as they are.",
    RedrawNotRequested = CONFLICT "redraw_not_requested":
        "ask for the redraw without a signature first: that fixes its round.",
    RedrawPending = CONFLICT "redraw_pending" ["prize"]:
        "the redraw of `prize` waits for its round's signature; resolve it first.",
    SeriesExhausted = CONFLICT "series_exhausted":
        "the next number would be longer than the series allows; change its format or \
         `max_length`.",
    SeriesExists = CONFLICT "series_exists":
        "a series of this id exists with another definition; change it with `PATCH`, or \
         choose another id.",
    SoldOut = CONFLICT "sold_out" ["remaining", "held"]:
        "fewer tickets are left than asked for, even once every live hold ends: `remaining` \
         are free (0 once the draw is sold out) and `held` in live holds; buy at most \
         `remaining`.",
    TicketsHeld = CONFLICT "tickets_held" ["remaining", "held", "first_hold_ends_at"]:
        "fewer tickets are free (`remaining`) than asked for, but live holds keep `held` \
         more, which come back unless paid for; buy at most `remaining`, or ask again after \
         `first_hold_ends_at`.",
    TicketsFragmented = CONFLICT "tickets_fragmented" ["remaining"]:
        "the `remaining` tickets are spread too thin for one purchase of this size; buy \
         fewer at once.",
    TooManyFormats = CONFLICT "too_many_formats":
        "the series has had as many formats as it keeps; no further format change is \
         possible.",
    WinnerChanged = CONFLICT "winner_changed":
        "the prize was redrawn meanwhile for another reason; read the winners again.",
    WinnersDrawn = CONFLICT "winners_drawn":
        "the draw's winners are drawn already, for another number of prizes or another \
         signature; they change only by a redraw with a reason: read them, or repeat the \
         first body.",
    BodyTooLarge = PAYLOAD_TOO_LARGE "body_too_large" ["limit"]:
        "the body is larger than `limit` bytes; send a smaller one (split a batch).",
    UnsupportedMediaType = UNSUPPORTED_MEDIA_TYPE "unsupported_media_type":
        "send the body as JSON, with `content-type: application/json`.",
    ForeignHost = MISDIRECTED_REQUEST "foreign_host":
        "the local server answers only requests addressed to a loopback name or address \
         with its own port, such as `127.0.0.1:3000`; use that address.",
    InternalError = INTERNAL_SERVER_ERROR "internal_error":
        "a bug in Tally, with its details only in the logs; report it.",
    Contention = SERVICE_UNAVAILABLE "contention":
        "too many requests wrote the same numbers at once; the outcome is unknown, so \
         repeat the request as it was after `Retry-After`.",
    OutcomeUnknown = SERVICE_UNAVAILABLE "outcome_unknown":
        "DynamoDB failed or did not answer in time, so whether the request took effect is \
         unknown; repeat it as it was after `Retry-After`.",
    Throttled = SERVICE_UNAVAILABLE "throttled":
        "DynamoDB throttled the request; repeat it as it was after `Retry-After`.",
}

impl Code {
    /// `invalid_<name>`, for a member or parameter called `name`.
    pub fn invalid(name: impl Into<Cow<'static, str>>) -> Self {
        Self::Invalid(name.into())
    }

    /// [`Self::invalid`] for the lists of a route's codes.
    pub const fn member(name: &'static str) -> Self {
        Self::Invalid(Cow::Borrowed(name))
    }
}

impl From<RejectionCode> for Code {
    fn from(code: RejectionCode) -> Self {
        match code {
            RejectionCode::InvalidExternalRef => Self::InvalidExternalRef,
            RejectionCode::InvalidData => Self::InvalidData,
            RejectionCode::DataTooLarge => Self::DataTooLarge,
            RejectionCode::InvalidOrder => Self::InvalidOrder,
            RejectionCode::IdempotencyConflict => Self::IdempotencyConflict,
            RejectionCode::Contention => Self::Contention,
            RejectionCode::CorrectsRequired => Self::CorrectsRequired,
            RejectionCode::InvalidCorrects => Self::InvalidCorrects,
            RejectionCode::InvoiceNotFound => Self::InvoiceNotFound,
            RejectionCode::InvoiceVoid => Self::InvoiceVoid,
            RejectionCode::CreditNotesFull => Self::CreditNotesFull,
            RejectionCode::SeriesExhausted => Self::SeriesExhausted,
            RejectionCode::RangeExhausted => Self::RangeExhausted,
            RejectionCode::RangeExpired => Self::RangeExpired,
        }
    }
}

#[cfg(test)]
mod tests;
