//! What the document adds to the types' schemas: the members some problems carry, and
//! what a counter's size means to a JavaScript caller.

use utoipa::PartialSchema;
use utoipa::openapi::schema::{ArrayBuilder, KnownFormat, Schema, SchemaFormat, SchemaType};
use utoipa::openapi::{ObjectBuilder, RefOr, Type};

use super::super::problem::ProblemBody;

/// The problem document, with the members that some problems add, each with its type.
pub(super) fn problem_schema() -> RefOr<Schema> {
    let mut schema = ProblemBody::schema();
    if let RefOr::T(Schema::Object(object)) = &mut schema {
        object.additional_properties = None;
        for (name, member) in problem_members() {
            object.properties.insert(name.to_owned(), RefOr::T(member));
        }
    }
    schema
}

/// The members some problems carry besides the standard five, and which problems.
pub(super) fn problem_members() -> Vec<(&'static str, Schema)> {
    let scalar = |kind: Type, format: Option<KnownFormat>, description: &str| {
        let builder = match kind {
            Type::Integer => ObjectBuilder::new().minimum(Some(0)),
            _ => ObjectBuilder::new(),
        };
        let builder = builder
            .schema_type(kind)
            .format(format.map(SchemaFormat::KnownFormat))
            .description(Some(description));
        Schema::Object(builder.build())
    };
    let whole = |description: &str| scalar(Type::Integer, None, description);
    let text = |description: &str| scalar(Type::String, None, description);
    let time = |description: &str| scalar(Type::String, Some(KnownFormat::DateTime), description);
    let nullable_time = |description: &str| {
        let builder = ObjectBuilder::new()
            .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .description(Some(description));
        Schema::Object(builder.build())
    };
    let list = |items: Schema, description: &str| {
        Schema::Array(
            ArrayBuilder::new()
                .items(RefOr::T(items))
                .description(Some(description))
                .build(),
        )
    };
    let candidate = ObjectBuilder::new()
        .property("series", text("The series"))
        .property("period", text("The period"))
        .property("counter", whole(COUNTER))
        .property("order_number", text("The number as text"))
        .required("series")
        .required("period")
        .required("counter")
        .required("order_number")
        .build();
    vec![
        (
            "remaining",
            whole("`sold_out`, `tickets_held`, `tickets_fragmented`: tickets free"),
        ),
        (
            "held",
            whole("`sold_out`, `tickets_held`: numbers that live holds keep"),
        ),
        (
            "first_hold_ends_at",
            time("`tickets_held`, `holds_full`: when the first of those live holds ends"),
        ),
        (
            "left",
            whole(
                "`payer_limit`, `payer_hold_limit`: how many more tickets the payer may buy, or \
                 numbers it may hold; `spend_limit`: what the payer may still spend in the \
                 window, in minor units",
            ),
        ),
        (
            "spend_limit",
            whole("`spend_limit`: the payer's limit of the window, in minor units"),
        ),
        (
            "span",
            text("`spend_limit`: the window's span, `day`, `week` or `month`"),
        ),
        (
            "window",
            text(
                "`spend_limit`: the calendar window that runs now (`2026-12-05`, `2026-W49`, `2026-12`)",
            ),
        ),
        (
            "currency",
            text("`spend_limit`: the ISO 4217 currency of the limit"),
        ),
        (
            "excluded_until",
            nullable_time("`payer_excluded`: when the exclusion ends; `null`: it has no end"),
        ),
        (
            "max_per_payer",
            whole("`payer_limit`: the draw's cap per payer"),
        ),
        (
            "max_held_per_payer",
            whole("`payer_hold_limit`: the most numbers one payer's live holds may take"),
        ),
        (
            "max_held_percent",
            whole("`holds_full`: the share of the draw live holds may take, in percent"),
        ),
        (
            "max_per_purchase",
            whole("`invalid_quantity`: the draw's largest purchase"),
        ),
        (
            "limit",
            whole("`body_too_large`: the largest body the route takes, in bytes"),
        ),
        ("opens_at", time("`draw_not_open`: when sales start")),
        (
            "publishes_at",
            time("`beacon_not_published`: when the round is published"),
        ),
        ("round", whole("Beacon problems: the round that counts")),
        (
            "prize",
            whole("`redraw_pending`: the prize whose redraw waits"),
        ),
        (
            "eligible",
            whole("`not_enough_eligible`: the eligible tickets"),
        ),
        (
            "prizes",
            Schema::Object(
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::Integer, Type::Null]))
                    .minimum(Some(1))
                    .description(Some(
                        "`prizes_fixed`: the number of prizes the draw fixed (declared at its create, or fixed at its close); `null`: none",
                    ))
                    .build(),
            ),
        ),
        (
            "numbers",
            list(
                whole("A ticket number"),
                "`numbers_taken`: the chosen numbers already sold",
            ),
        ),
        (
            "known",
            list(
                text("A network name"),
                "`unknown_beacon_network`: the networks this deployment knows",
            ),
        ),
        (
            "candidates",
            list(
                Schema::Object(candidate),
                "`ambiguous_order_number`: every order whose number has this text",
            ),
        ),
        (
            "reason",
            text("`already_voided`: the reason of the void that stands"),
        ),
        (
            "series",
            text("`format_overlaps`: the series of the issuer that could render the same text"),
        ),
        (
            "example",
            text("`format_overlaps`: a text both series could render"),
        ),
        (
            "next",
            whole(&format!(
                "`move_not_forward`: the next counter now. {COUNTER}"
            )),
        ),
        (
            "period",
            text("`period_not_current`: the current period, as `GET` on the series shows it"),
        ),
        (
            "number",
            text("`number_too_long`, `character_not_allowed`: the number refused"),
        ),
        (
            "max_length",
            whole("`number_too_long`: the series' longest number"),
        ),
        (
            "character",
            text("`character_not_allowed`: the character refused"),
        ),
    ]
}

/// Members that hold a series' counter, or a count of counters.
const COUNTER_MEMBERS: [&str; 8] = [
    "counter",
    "first_counter",
    "last_counter",
    "start",
    "next",
    "from",
    "to",
    "count",
];

/// Says of every integer counter member of `schema` that it may pass JavaScript's safe
/// integers.
pub(super) fn describe_counters(schema: &mut RefOr<Schema>) {
    let RefOr::T(Schema::Object(object)) = schema else {
        return;
    };
    for (name, member) in object.properties.iter_mut() {
        if let RefOr::T(Schema::Object(member)) = member
            && COUNTER_MEMBERS.contains(&name.as_str())
            && match &member.schema_type {
                SchemaType::Type(one) => *one == Type::Integer,
                SchemaType::Array(types) => types.contains(&Type::Integer),
                SchemaType::AnyValue => false,
            }
        {
            let described = member.description.take().unwrap_or_default();
            member.description = Some(format!("{described}\n\n{COUNTER}").trim().to_owned());
        }
    }
}

/// What a counter's description says of its size.
const COUNTER: &str = "Up to 10^18: beyond JavaScript's safe integers (2^53 - 1), \
so read it as a 64-bit integer or a big integer, never as a double.";
