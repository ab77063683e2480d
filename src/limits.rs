//! Every public limit of Tally in one place: each is declared where it is enforced (the
//! domain's rules, the store's DynamoDB bounds, the HTTP layer's bodies and pages) and
//! named here, and a test reads docs/limits.md against them, so that a limit changed in
//! the code and not on the page, or on the page and not in the code, fails.

pub use crate::api::{
    AUDIT_PART_LISTED, MAX_BODY_BYTES, MAX_LIST_TOKEN_CHARS, MAX_ORDER_BODY_BYTES, MAX_PAGE_BYTES,
    MAX_PURCHASES_TOKEN_CHARS,
};
pub use crate::store::issuers::MAX_ISSUER_FORMATS;
pub use crate::store::limits::{MAX_TRANSACTION_ITEMS, STRIPE_HOLD_MARKS};
pub use crate::tickets::{DEFAULT_CACHED_DRAWS, FACTS_FRESH};
pub use tally_domain::draw::{
    DEFAULT_HOLD_SECONDS, DEFAULT_MAX_HELD_PERCENT, DEFAULT_MAX_PER_PURCHASE, HOLD_SECONDS,
    MAX_HELD_PERCENT, MAX_NAME_LEN, MAX_PER_PURCHASE_CAP, MAX_SIGNATURE_HEX_LEN,
    MAX_STRIPE_TICKETS, MAX_STRIPES, MAX_TOTAL_TICKETS,
};
pub use tally_domain::instant::{MAX_INSTANT_ENTRIES, MAX_INSTANT_PRIZES, MAX_PRIZE_LEN};
pub use tally_domain::order::{
    MAX_BATCH, MAX_CREDIT_NOTES, MAX_DATA_BYTES, MAX_DATA_DEPTH, MAX_REASON_CHARS,
};
pub use tally_domain::purchase::{MAX_FREE_TEXT_LEN, MAX_REASON_LEN};
pub use tally_domain::secret::MIN_SECRET_BYTES;
pub use tally_domain::series::{
    DEFAULT_LOW_PERCENT, MAX_AUTHORITY_REF_CHARS, MAX_BLOCK, MAX_CHARACTER_RULE_LEN, MAX_CODE_LEN,
    MAX_COUNTER, MAX_FORMAT_LEN, MAX_FORMAT_VERSIONS, MAX_NUMBER_LEN, MAX_RANGES, MAX_SEQ_WIDTH,
    MAX_START, MAX_TIMEZONE_LEN,
};
pub use tally_domain::spend::{MAX_LIMIT_CURRENCIES, MAX_SPEND_LIMIT, MAX_TICKET_PRICE};
pub use tally_domain::stripes::{BUNDLE_STRIPES, CHOSEN_ALWAYS_FIT, STRIPE_WRITE_TICKETS};
pub use tally_domain::text::{EXCERPT_CHARS, MAX_DETAIL_CHARS};
pub use tally_domain::winners::MAX_PRIZES;

/// A page of draws or of purchases: `limit`'s default and largest value.
pub const TICKET_PAGE: Page = Page {
    default: 20,
    most: 100,
};
/// A page of a series' listing or audit.
pub const LISTING_PAGE: Page = Page {
    default: 100,
    most: 1_000,
};

/// A page of the operator journal: a page is read by number, up to 100 keys a request.
pub const JOURNAL_PAGE: Page = Page {
    default: 100,
    most: 1_000,
};

/// The `limit` a list route takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub default: u32,
    pub most: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_domain::ids::{DrawId, HoldId, IssuerId, PayerId, PaymentId, SeriesId, SourceId};

    const PAGE: &str = include_str!("../docs/limits.md");

    /// The limit cell of the table row whose first cell is `what`.
    fn row(what: &str) -> &'static str {
        PAGE.lines()
            .find_map(|line| {
                let cells: Vec<&str> = line.split(" | ").collect();
                (cells.len() >= 2 && cells[0].trim_start_matches("| ") == what)
                    .then(|| cells[1].trim_end_matches(" |"))
            })
            .unwrap_or_else(|| panic!("docs/limits.md has no row {what:?}"))
    }

    /// `10000000` as the page writes it: `10,000,000`.
    fn grouped(n: impl Into<u64>) -> String {
        let digits = n.into().to_string();
        let mut out = String::new();
        for (i, digit) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(digit);
        }
        out
    }

    fn kib(bytes: usize) -> String {
        format!("{} KiB", bytes / 1024)
    }

    #[test]
    fn each_limit_reads_on_the_page_as_the_code_enforces_it() {
        let says = |what: &str, text: String| (what.to_owned(), text);
        let usize_ = |n: usize| grouped(n as u64);
        let checks = [
            says(
                "tickets in a draw",
                format!("1 to {}", grouped(MAX_TOTAL_TICKETS)),
            ),
            says(
                "tickets in one purchase (`max_per_purchase`)",
                format!(
                    "1 to {}, default {DEFAULT_MAX_PER_PURCHASE}",
                    MAX_PER_PURCHASE_CAP
                ),
            ),
            says(
                "tickets in one purchase (`max_per_purchase`)",
                format!("at most {MAX_TRANSACTION_ITEMS} items"),
            ),
            says(
                "tickets in one purchase (`max_per_purchase`)",
                format!("at most {BUNDLE_STRIPES} stripes"),
            ),
            says(
                "tickets one stripe write takes",
                format!("at most {STRIPE_WRITE_TICKETS}"),
            ),
            says(
                "chosen `numbers` in one purchase or hold",
                format!("up to {CHOSEN_ALWAYS_FIT} always fit"),
            ),
            says(
                "`GET /tickets/{number}` without its item",
                format!("at most {MAX_PER_PURCHASE_CAP}, leaving the others"),
            ),
            says(
                "`hold_seconds`",
                format!(
                    "{} to {} seconds, default {DEFAULT_HOLD_SECONDS}",
                    HOLD_SECONDS.start(),
                    grouped(*HOLD_SECONDS.end())
                ),
            ),
            says(
                "`max_held_per_payer`",
                format!("1 to {MAX_PER_PURCHASE_CAP}, default `max_per_purchase`"),
            ),
            says(
                "`max_held_percent`",
                format!(
                    "{} to {}, default {DEFAULT_MAX_HELD_PERCENT}",
                    MAX_HELD_PERCENT.start(),
                    MAX_HELD_PERCENT.end()
                ),
            ),
            says(
                "hold marks on a stripe item",
                format!("at most {STRIPE_HOLD_MARKS}"),
            ),
            says(
                "`GET /facts`",
                format!("fresh for {} seconds", FACTS_FRESH.as_secs()),
            ),
            says(
                "`max_per_payer`",
                format!("1 to {}", grouped(MAX_TOTAL_TICKETS)),
            ),
            says(
                "`beacon_signature`",
                format!("at most {MAX_SIGNATURE_HEX_LEN} digits"),
            ),
            says(
                "`timezone`",
                format!("at most {MAX_TIMEZONE_LEN} characters"),
            ),
            says("prizes", format!("1 to {MAX_PRIZES}")),
            says(
                "`ticket_price`",
                format!("0 to {} minor units", grouped(MAX_TICKET_PRICE)),
            ),
            says(
                "spend limits of a payer",
                format!("0 to {} minor units", grouped(MAX_SPEND_LIMIT)),
            ),
            says(
                "spend limits of a payer",
                format!("in at most {MAX_LIMIT_CURRENCIES} currencies"),
            ),
            says(
                "`instant_wins`",
                format!(
                    "1 to {MAX_INSTANT_ENTRIES} distinct prizes of 1 to {MAX_PRIZE_LEN} characters"
                ),
            ),
            says(
                "`instant_wins`",
                format!("at most {} winning numbers", grouped(MAX_INSTANT_PRIZES)),
            ),
            says(
                "`reason` of a purchase's void or of a redraw (ticket routes)",
                format!("1 to {MAX_REASON_LEN} characters"),
            ),
            says(
                "list pages (draws, purchases)",
                format!(
                    "`limit` 1 to {}, default {}",
                    TICKET_PAGE.most, TICKET_PAGE.default
                ),
            ),
            says(
                "list pages (draws, purchases)",
                format!(
                    "at most {MAX_LIST_TOKEN_CHARS} characters for the draws and a payer's purchases, {MAX_PURCHASES_TOKEN_CHARS} for a draw's purchases"
                ),
            ),
            says(
                "stripes of a draw",
                format!("1 to {}", grouped(MAX_STRIPES)),
            ),
            says(
                "stripes of a draw",
                format!("at most {} tickets each", grouped(MAX_STRIPE_TICKETS)),
            ),
            says(
                "`draw_id`, `hold_id`",
                format!("{{1,{}}}", DrawId::MAX_LEN.max(HoldId::MAX_LEN)),
            ),
            says("`payment_id`", format!("{{1,{}}}", PaymentId::MAX_LEN)),
            says("`name`", format!("1 to {MAX_NAME_LEN} characters")),
            says(
                "`payer_id`",
                format!("1 to {} characters", PayerId::MAX_LEN),
            ),
            says("`token`", format!("1 to {MAX_FREE_TEXT_LEN} characters")),
            says(
                "draws kept in memory per process",
                format!("default {DEFAULT_CACHED_DRAWS}"),
            ),
            says("`series_id`", format!("{{1,{}}}", SeriesId::MAX_LEN)),
            says("`source`", format!("{{1,{}}}", SourceId::MAX_LEN)),
            says("`issuer`", format!("{{1,{}}}", IssuerId::MAX_LEN)),
            says(
                "order `data`",
                format!(
                    "at most {} and {MAX_DATA_DEPTH} levels",
                    kib(MAX_DATA_BYTES)
                ),
            ),
            says("orders in one batch", format!("1 to {}", usize_(MAX_BATCH))),
            says(
                "`tally import --batch`",
                format!("1 to {} orders", usize_(MAX_BATCH)),
            ),
            says("`format`", format!("1 to {MAX_FORMAT_LEN} characters")),
            says("`format`", format!("N from 1 to {MAX_SEQ_WIDTH}")),
            says(
                "`format`",
                format!("`start` from 1 to 10^{}", MAX_START.ilog10()),
            ),
            says("formats of one issuer", usize_(MAX_ISSUER_FORMATS)),
            says(
                "formats a series keeps",
                format!("{} versions", usize_(MAX_FORMAT_VERSIONS)),
            ),
            says(
                "`max_length`; `allowed_characters`",
                format!(
                    "1 to {MAX_NUMBER_LEN}; a character class of 1 to {MAX_CHARACTER_RULE_LEN} characters"
                ),
            ),
            says("`validation_code`", format!("1 to {MAX_CODE_LEN} letters")),
            says(
                "authorised `ranges`",
                format!(
                    "up to {MAX_RANGES} per series, counters 1 to 10^{}",
                    MAX_COUNTER.ilog10()
                ),
            ),
            says(
                "authorised `ranges`",
                format!("`authority_ref` 1 to {MAX_AUTHORITY_REF_CHARS} characters"),
            ),
            says(
                "authorised `ranges`",
                format!("default {DEFAULT_LOW_PERCENT}"),
            ),
            says(
                "`reason` of an order's void or of a counter move (order routes)",
                format!("1 to {MAX_REASON_CHARS} characters"),
            ),
            says(
                "listing page (`limit`)",
                format!(
                    "1 to {} entries, default {}",
                    grouped(LISTING_PAGE.most),
                    LISTING_PAGE.default
                ),
            ),
            says(
                "listing page (`limit`)",
                format!(
                    "a page ends at the entry that reaches {} KiB",
                    grouped((MAX_PAGE_BYTES / 1024) as u64)
                ),
            ),
            says(
                "an audit through the API",
                format!(
                    "or once it lists {} gaps, credited invoices and credit notes",
                    grouped(AUDIT_PART_LISTED as u64)
                ),
            ),
            says(
                "journal page (`limit`)",
                format!(
                    "a page ends at the entry that reaches {} KiB",
                    grouped((MAX_PAGE_BYTES / 1024) as u64)
                ),
            ),
            says(
                "journal page (`limit`)",
                format!(
                    "1 to {} entries, default {}",
                    grouped(JOURNAL_PAGE.most),
                    JOURNAL_PAGE.default
                ),
            ),
            says(
                "a fast series' block",
                format!("1 to {} counters", grouped(MAX_BLOCK)),
            ),
            says(
                "request body",
                format!(
                    "{} on ticket routes, {} KiB on order routes",
                    kib(MAX_BODY_BYTES),
                    grouped(MAX_ORDER_BODY_BYTES as u64 / 1024)
                ),
            ),
            says(
                "an error's `detail`",
                format!("its first {} characters and `…`", usize_(MAX_DETAIL_CHARS)),
            ),
            says(
                "an error's `detail`",
                format!("its first {EXCERPT_CHARS} characters"),
            ),
            says(
                "deployment secret",
                format!("{MIN_SECRET_BYTES} bytes or more"),
            ),
            says(
                "`corrects`",
                format!("at most {MAX_CREDIT_NOTES} credit notes an invoice"),
            ),
        ];
        let wrong: Vec<String> = checks
            .iter()
            .filter(|(what, text)| !row(what).contains(text.as_str()))
            .map(|(what, text)| format!("{what:?} should say {text:?}: {}", row(what)))
            .collect();
        assert!(wrong.is_empty(), "docs/limits.md:\n{}", wrong.join("\n"));
    }
}
