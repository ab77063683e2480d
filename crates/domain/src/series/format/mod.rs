//! Number formats: reading a format, rendering a number, and reading a number's text back
//! into what it says. Every token but `{seq:N}` has a fixed width, so the length of a text
//! decides the width of its counter and reading it back has at most one result. An
//! exact-width counter (`{seq:N!}`) is never wider than N: a series refuses the counter
//! that would not fit instead.

mod dates;
mod read;
mod texts;

use super::SeriesError;
use super::calendar::LocalDate;
use crate::ids::SeriesId;

pub use read::ReadNumber;
pub use texts::Texts;

/// The widest `{seq:N}`.
pub const MAX_SEQ_WIDTH: usize = 18;
/// The longest format string.
pub const MAX_FORMAT_LEN: usize = 64;
/// The format used when a series does not give one.
pub const DEFAULT_FORMAT: &str = "{series}{yy}{seq:6}";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    Literal(String),
    Year4,
    Year2,
    Month,
    Day,
    FiscalYear,
    Series,
    /// The series' validation code from the tax authority.
    Code,
    /// The counter, zero-padded to `width`; `exact`: never wider.
    Seq {
        width: usize,
        exact: bool,
    },
}

/// What a number shows besides its date and counter: the series' id and its validation
/// code.
#[derive(Debug, Clone, Copy)]
pub struct Names<'a> {
    pub series: &'a SeriesId,
    pub code: Option<&'a str>,
}

impl Part {
    /// The width of the part in a rendered number; `None` for a counter whose width grows
    /// with it.
    pub(super) fn width(&self, names: Names<'_>) -> Option<usize> {
        match self {
            Self::Literal(text) => Some(text.len()),
            Self::Year4 | Self::FiscalYear => Some(4),
            Self::Year2 | Self::Month | Self::Day => Some(2),
            Self::Series => Some(names.series.as_str().len()),
            Self::Code => Some(names.code.map_or(0, str::len)),
            Self::Seq { width, exact: true } => Some(*width),
            Self::Seq { exact: false, .. } => None,
        }
    }
}

/// A parsed number format, such as `UABC{yy}{seq:6}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberFormat {
    source: String,
    parts: Vec<Part>,
}

impl NumberFormat {
    pub fn parse(source: &str) -> Result<Self, SeriesError> {
        let fail = |why: &str| Err(SeriesError::Format(why.to_owned()));
        if source.is_empty() || source.len() > MAX_FORMAT_LEN {
            return fail(&format!("must be 1 to {MAX_FORMAT_LEN} characters"));
        }
        let mut parts = Vec::new();
        let mut rest = source;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('{') {
                let Some(end) = after.find('}') else {
                    return fail("has a `{` without `}`");
                };
                let token = &after[..end];
                parts.push(match token {
                    "yyyy" => Part::Year4,
                    "yy" => Part::Year2,
                    "mm" => Part::Month,
                    "dd" => Part::Day,
                    "fy" => Part::FiscalYear,
                    "series" => Part::Series,
                    "code" => Part::Code,
                    _ => match seq_token(token) {
                        Some(part) => part,
                        None => {
                            return fail(&format!(
                                "has an unknown token {{{token}}}: use {{yyyy}}, {{yy}}, {{mm}}, {{dd}}, {{fy}}, {{series}}, {{code}}, or {{seq:N}} or {{seq:N!}} with N from 1 to {MAX_SEQ_WIDTH}"
                            ));
                        }
                    },
                });
                rest = &after[end + 1..];
            } else {
                let end = rest.find('{').unwrap_or(rest.len());
                let literal = &rest[..end];
                if !literal
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.'))
                {
                    return fail(
                        "may hold only letters, digits, '-', '_', '/', '.' besides tokens",
                    );
                }
                parts.push(Part::Literal(literal.to_owned()));
                rest = &rest[end..];
            }
        }
        if parts
            .iter()
            .filter(|p| matches!(p, Part::Seq { .. }))
            .count()
            != 1
        {
            return fail("must hold exactly one {seq:N}");
        }
        if parts.iter().filter(|p| matches!(p, Part::Code)).count() > 1 {
            return fail("may hold {code} once");
        }
        Ok(Self {
            source: source.to_owned(),
            parts,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    pub(super) fn has(&self, wanted: impl Fn(&Part) -> bool) -> bool {
        self.parts.iter().any(wanted)
    }

    /// Whether the format shows the series' validation code.
    pub fn shows_code(&self) -> bool {
        self.has(|p| matches!(p, Part::Code))
    }

    /// The number for `counter` on the local `date`. A counter wider than `{seq:N}` is
    /// written in full: never cut, never wrapped (an exact width is kept by the series,
    /// which never numbers a counter that does not fit).
    pub fn render(&self, names: Names<'_>, date: &LocalDate, counter: u64) -> String {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Literal(text) => text.clone(),
                Part::Year4 => format!("{:04}", date.year),
                Part::Year2 => format!("{:02}", date.year.rem_euclid(100)),
                Part::Month => format!("{:02}", date.month),
                Part::Day => format!("{:02}", date.day),
                Part::FiscalYear => format!("{:04}", date.fiscal_year),
                Part::Series => names.series.to_string(),
                Part::Code => names.code.unwrap_or_default().to_owned(),
                Part::Seq { width, .. } => format!("{counter:0width$}"),
            })
            .collect()
    }

    /// The largest counter this format numbers: one that fits an exact width, and whose
    /// number is at most `max_length` characters long. `0` when not even the narrowest
    /// counter fits.
    pub fn max_counter(&self, names: Names<'_>, max_length: Option<usize>) -> u64 {
        let fixed: usize = self
            .parts
            .iter()
            .filter(|p| !matches!(p, Part::Seq { .. }))
            .filter_map(|p| p.width(names))
            .sum();
        let Some((width, exact)) = self.parts.iter().find_map(|p| match p {
            Part::Seq { width, exact } => Some((*width, *exact)),
            _ => None,
        }) else {
            return 0;
        };
        let mut digits = if exact { width } else { usize::MAX };
        if let Some(max) = max_length {
            let room = max.saturating_sub(fixed);
            if room < width {
                return 0;
            }
            digits = digits.min(room);
        }
        u32::try_from(digits)
            .ok()
            .and_then(|d| 10u64.checked_pow(d))
            .map_or(u64::MAX, |limit| limit - 1)
    }
}

/// `seq:N` or `seq:N!`, N from 1 to [`MAX_SEQ_WIDTH`].
fn seq_token(token: &str) -> Option<Part> {
    let spec = token.strip_prefix("seq:")?;
    let (digits, exact) = match spec.strip_suffix('!') {
        Some(digits) => (digits, true),
        None => (spec, false),
    };
    let width = digits.parse::<usize>().ok()?;
    (digits.bytes().all(|b| b.is_ascii_digit()) && (1..=MAX_SEQ_WIDTH).contains(&width))
        .then_some(Part::Seq { width, exact })
}

/// The first days of January, October and December in 2010 and 2026: the months the
/// random checks of formats render on, with one and two digit months and both decades.
#[cfg(test)]
fn sample_months() -> Vec<LocalDate> {
    [2010, 2026]
        .into_iter()
        .flat_map(|year| {
            [1, 10, 12].map(|month| LocalDate {
                year,
                month,
                day: 1,
                fiscal_year: year,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> SeriesId {
        SeriesId::parse(s).unwrap()
    }

    fn plain(series: &SeriesId) -> Names<'_> {
        Names { series, code: None }
    }

    fn date(year: i32, month: u32, day: u32, fiscal_year: i32) -> LocalDate {
        LocalDate {
            year,
            month,
            day,
            fiscal_year,
        }
    }

    #[test]
    fn renders_prefix_dates_and_padded_counter() {
        let on = date(2026, 3, 9, 2026);
        let format = NumberFormat::parse("UABC{yy}{seq:6}").unwrap();
        assert_eq!(format.render(plain(&id("x")), &on, 42), "UABC26000042");
        let format = NumberFormat::parse("INV/{yyyy}-{mm}-{dd}/{seq:4}").unwrap();
        assert_eq!(
            format.render(plain(&id("x")), &on, 7),
            "INV/2026-03-09/0007"
        );
        let format = NumberFormat::parse("FY{fy}-{seq:3}").unwrap();
        assert_eq!(
            format.render(plain(&id("x")), &date(2026, 11, 2, 2027), 5),
            "FY2027-005"
        );
        let format = NumberFormat::parse(DEFAULT_FORMAT).unwrap();
        assert_eq!(format.render(plain(&id("SO")), &on, 1), "SO26000001");
    }

    #[test]
    fn a_counter_wider_than_its_width_grows_and_is_never_cut() {
        let on = date(2026, 1, 1, 2026);
        let format = NumberFormat::parse("UABC{yy}{seq:6}").unwrap();
        assert_eq!(
            format.render(plain(&id("x")), &on, 2_245_444),
            "UABC262245444"
        );
        assert_eq!(format.render(plain(&id("x")), &on, 999_999), "UABC26999999");
        assert_eq!(
            format.render(plain(&id("x")), &on, 1_000_000),
            "UABC261000000"
        );
    }

    #[test]
    fn formats_need_exactly_one_sequence_and_known_tokens() {
        for bad in [
            "",
            "ABC",
            "{seq:6}{seq:2}",
            "A{seq:0}",
            "A{seq:19}",
            "A{seq}",
            "A{ww}{seq:3}",
            "A{seq:3",
            "A B{seq:3}",
            "A#{seq:3}",
            "A{seq:3!!}",
            "A{seq:!}",
            "A{seq:+3}",
            "A{code}{code}{seq:3}",
        ] {
            assert!(NumberFormat::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn an_exact_width_counter_reads_at_its_width_and_caps_the_counter() {
        let series = id("BG");
        let format = NumberFormat::parse("{seq:10!}").unwrap();
        let on = date(2026, 1, 1, 2026);
        assert_eq!(format.render(plain(&series), &on, 42), "0000000042");
        assert_eq!(
            format.read(plain(&series), "0000000042").map(|r| r.counter),
            Some(42)
        );
        assert_eq!(format.read(plain(&series), "10000000000"), None);
        assert_eq!(format.max_counter(plain(&series), None), 9_999_999_999);
        let growing = NumberFormat::parse("A{seq:3}").unwrap();
        assert_eq!(growing.max_counter(plain(&series), None), u64::MAX);
    }

    #[test]
    fn max_length_bounds_the_counter_and_the_code_is_rendered_and_read() {
        let series = id("FT");
        let names = Names {
            series: &series,
            code: Some("CSDF7T5H"),
        };
        let on = date(2026, 11, 29, 2026);
        let format = NumberFormat::parse("{code}-{seq:1}").unwrap();
        assert!(format.shows_code());
        assert_eq!(format.render(names, &on, 35), "CSDF7T5H-35");
        assert_eq!(
            format.read(names, "CSDF7T5H-35").map(|r| r.counter),
            Some(35)
        );
        assert_eq!(format.read(names, "CSDF7T5X-35"), None);
        // India: 16 characters at most. "INV/2026/" takes 9, leaving 7 digits.
        let india = NumberFormat::parse("INV/{yyyy}/{seq:5}").unwrap();
        assert_eq!(india.max_counter(plain(&series), Some(16)), 9_999_999);
        assert_eq!(india.max_counter(plain(&series), Some(13)), 0);
        assert_eq!(india.render(plain(&series), &on, 9_999_999).len(), 16);
    }
}
