//! Query strings: every route refuses a parameter it does not take, with `400
//! invalid_query`, by one mechanism. Each extractor says which parameters it reads (only
//! [`QueryParams`] reads any: the fields of its type, as serde names them); the route
//! tables' `serve` asks a handler's whole list of extractors and puts [`only_taken`] in
//! front of it. So a new route refuses every parameter until its handler reads some, and a
//! handler with a new kind of extractor does not compile until the extractor says.

use axum::extract::{Query, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use tally_domain::text::excerpt;

use super::caller::{Acting, Caller};
use super::extract::{JsonBody, PathParams, QueryParams};
use super::problem::{Code, Problem};

/// The query parameters an extractor reads; `None` for one that does not read the query.
pub(super) trait QueryNames {
    fn query_names() -> Option<&'static [&'static str]> {
        None
    }
}

impl<T: DeserializeOwned> QueryNames for QueryParams<T> {
    fn query_names() -> Option<&'static [&'static str]> {
        Some(fields_of::<T>())
    }
}

impl<T> QueryNames for PathParams<T> {}
impl<T> QueryNames for JsonBody<T> {}
impl<T> QueryNames for Option<JsonBody<T>> {}
impl<S> QueryNames for State<S> {}
impl QueryNames for Caller {}
impl QueryNames for Acting {}

/// A handler's extractors, as axum lists them for its `Handler` impl: a marker, then
/// each extractor in order.
macro_rules! extractor_lists {
    ($($extractor:ident),*) => {
        impl<M, $($extractor: QueryNames),*> QueryNames for (M, $($extractor,)*) {
            fn query_names() -> Option<&'static [&'static str]> {
                None$(.or_else($extractor::query_names))*
            }
        }
    };
}

extractor_lists!();
extractor_lists!(T1);
extractor_lists!(T1, T2);
extractor_lists!(T1, T2, T3);
extractor_lists!(T1, T2, T3, T4);
extractor_lists!(T1, T2, T3, T4, T5);
extractor_lists!(T1, T2, T3, T4, T5, T6);

/// Answers `400 invalid_query` for a query parameter that is not one of `taken` (none when
/// `None`), before the handler reads anything.
pub(super) async fn only_taken(
    taken: Option<&'static [&'static str]>,
    request: Request,
    next: Next,
) -> Response {
    let taken = taken.unwrap_or_default();
    let pairs = match Query::<Vec<(String, String)>>::try_from_uri(request.uri()) {
        Ok(Query(pairs)) => pairs,
        Err(_) => {
            return Problem::new(Code::InvalidQuery, "the query string cannot be decoded")
                .into_response();
        }
    };
    match pairs
        .iter()
        .find(|(name, _)| !taken.contains(&name.as_str()))
    {
        None => next.run(request).await,
        Some((name, _)) => {
            let name = excerpt(name);
            let takes = match taken {
                [] => "takes no query parameters".to_owned(),
                names => format!("takes only `{}`", names.join("`, `")),
            };
            Problem::new(
                Code::InvalidQuery,
                format!("this route {takes}, not `{name}`"),
            )
            .into_response()
        }
    }
}

/// The fields of the struct `T` deserializes from, as serde names them: serde hands them to
/// the deserializer, which keeps them and stops there.
fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut fields));
    fields
}

struct FieldNames<'a>(&'a mut &'static [&'static str]);

/// How [`FieldNames`] stops a deserialization once it has what it wanted.
#[derive(Debug)]
struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("only the field names were asked for")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Stop
    }
}

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = fields;
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The most a page of a listing weighs as JSON, as the service reading it counts entries
/// (at least their size): with the largest entry on top, twice this (each `"` and `\`
/// escaped once more) stays within Lambda's response payload of 6 MB, so a page of large
/// entries ends short of its `limit`, with its cursor.
pub const MAX_PAGE_BYTES: usize = 2 * 1024 * 1024;

/// A listing's page size: `limit` as the query gave it (a whole number from 1 to `max`),
/// or `default`. A refusal names what was sent.
pub(super) fn page_limit(raw: Option<&str>, default: u32, max: u32) -> Result<u32, Problem> {
    let Some(raw) = raw else {
        return Ok(default);
    };
    raw.parse()
        .ok()
        .filter(|limit| (1..=max).contains(limit))
        .ok_or_else(|| {
            Problem::new(
                Code::InvalidLimit,
                format!(
                    "`limit` must be a whole number from 1 to {max}, not {}",
                    serde_json::Value::from(excerpt(raw))
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    #[expect(dead_code, reason = "the test reads the field names, never the values")]
    struct Page {
        limit: Option<String>,
        #[serde(rename = "cursor")]
        after: Option<String>,
    }

    #[test]
    fn a_handler_takes_the_fields_of_its_query_type_and_nothing_without_one() {
        type WithQuery = ((), State<()>, PathParams<String>, QueryParams<Page>);
        assert_eq!(WithQuery::query_names(), Some(&["limit", "cursor"][..]));
        type WithoutQuery = ((), State<()>, Caller, PathParams<String>, JsonBody<Page>);
        assert_eq!(WithoutQuery::query_names(), None);
        assert_eq!(<((),)>::query_names(), None);
    }
}
