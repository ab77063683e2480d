//! Order numbering series: formats, reset periods and the numbers they render.

use chrono::{DateTime, Datelike, Utc};

use super::ids::SeriesId;

/// The widest `{seq:N}`.
pub const MAX_SEQ_WIDTH: usize = 18;
/// The largest `start`.
pub const MAX_START: u64 = 1_000_000_000_000_000;
/// The longest format string.
pub const MAX_FORMAT_LEN: usize = 64;
/// The format used when a series does not give one.
pub const DEFAULT_FORMAT: &str = "{series}{yy}{seq:6}";

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Year4,
    Year2,
    Month,
    Series,
    Seq { width: usize },
}

/// Why a series definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeriesError {
    #[error("`format` {0}")]
    Format(String),
    #[error("`reset` must be one of never, yearly, monthly")]
    Reset,
    #[error("a {reset} series needs {needs} in its format, or its numbers would repeat")]
    ResetNeedsToken {
        reset: &'static str,
        needs: &'static str,
    },
    #[error("`start` must be between 1 and {MAX_START}")]
    Start,
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
                    "series" => Part::Series,
                    _ => match token.strip_prefix("seq:").map(str::parse::<usize>) {
                        Some(Ok(width)) if (1..=MAX_SEQ_WIDTH).contains(&width) => {
                            Part::Seq { width }
                        }
                        _ => {
                            return fail(&format!(
                                "has an unknown token {{{token}}}: use {{yyyy}}, {{yy}}, {{mm}}, {{series}} or {{seq:N}} with N from 1 to {MAX_SEQ_WIDTH}"
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
        Ok(Self {
            source: source.to_owned(),
            parts,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    fn has(&self, wanted: impl Fn(&Part) -> bool) -> bool {
        self.parts.iter().any(wanted)
    }

    /// The number for `counter` issued at `at`. A counter wider than `{seq:N}` is written
    /// in full: never cut, never wrapped.
    pub fn render(&self, series: &SeriesId, at: DateTime<Utc>, counter: u64) -> String {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Literal(text) => text.clone(),
                Part::Year4 => format!("{:04}", at.year()),
                Part::Year2 => format!("{:02}", at.year().rem_euclid(100)),
                Part::Month => format!("{:02}", at.month()),
                Part::Series => series.to_string(),
                Part::Seq { width } => format!("{counter:0width$}"),
            })
            .collect()
    }
}

/// When a series starts counting again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reset {
    Never,
    Yearly,
    Monthly,
}

impl Reset {
    pub fn parse(value: &str) -> Result<Self, SeriesError> {
        match value {
            "never" => Ok(Self::Never),
            "yearly" => Ok(Self::Yearly),
            "monthly" => Ok(Self::Monthly),
            _ => Err(SeriesError::Reset),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Yearly => "yearly",
            Self::Monthly => "monthly",
        }
    }

    /// The counter period that `at` falls in (UTC): `all`, `2026` or `2026-11`.
    pub fn period(self, at: DateTime<Utc>) -> String {
        match self {
            Self::Never => "all".to_owned(),
            Self::Yearly => format!("{:04}", at.year()),
            Self::Monthly => format!("{:04}-{:02}", at.year(), at.month()),
        }
    }
}

/// A numbering series as defined by its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesDefinition {
    pub format: NumberFormat,
    pub reset: Reset,
    /// Every number 1..=last is used (counter and orders commit together), or numbers may
    /// be skipped after a failure in exchange for speed.
    pub gapless: bool,
    /// The first counter value of each period.
    pub start: u64,
}

impl SeriesDefinition {
    pub fn new(format: &str, reset: Reset, gapless: bool, start: u64) -> Result<Self, SeriesError> {
        let format = NumberFormat::parse(format)?;
        let has_year = format.has(|p| matches!(p, Part::Year4 | Part::Year2));
        let has_month = format.has(|p| matches!(p, Part::Month));
        match reset {
            Reset::Yearly if !has_year => {
                return Err(SeriesError::ResetNeedsToken {
                    reset: "yearly",
                    needs: "{yyyy} or {yy}",
                });
            }
            Reset::Monthly if !(has_year && has_month) => {
                return Err(SeriesError::ResetNeedsToken {
                    reset: "monthly",
                    needs: "a year token and {mm}",
                });
            }
            _ => {}
        }
        if !(1..=MAX_START).contains(&start) {
            return Err(SeriesError::Start);
        }
        Ok(Self {
            format,
            reset,
            gapless,
            start,
        })
    }
}

/// A series as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub series_id: SeriesId,
    pub definition: SeriesDefinition,
    pub created_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(y: i32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, m, 15, 12, 0, 0).unwrap()
    }

    fn id(s: &str) -> SeriesId {
        SeriesId::parse(s).unwrap()
    }

    #[test]
    fn renders_prefix_year_and_padded_counter() {
        let format = NumberFormat::parse("UABC{yy}{seq:6}").unwrap();
        assert_eq!(format.render(&id("x"), at(2026, 3), 42), "UABC26000042");
        let format = NumberFormat::parse("INV/{yyyy}-{mm}/{seq:4}").unwrap();
        assert_eq!(format.render(&id("x"), at(2027, 1), 7), "INV/2027-01/0007");
        let format = NumberFormat::parse(DEFAULT_FORMAT).unwrap();
        assert_eq!(format.render(&id("SO"), at(2026, 1), 1), "SO26000001");
    }

    #[test]
    fn a_counter_wider_than_its_width_grows_and_is_never_cut() {
        let format = NumberFormat::parse("UABC{yy}{seq:6}").unwrap();
        assert_eq!(
            format.render(&id("x"), at(2026, 1), 2_245_444),
            "UABC262245444"
        );
        assert_eq!(
            format.render(&id("x"), at(2026, 1), 999_999),
            "UABC26999999"
        );
        assert_eq!(
            format.render(&id("x"), at(2026, 1), 1_000_000),
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
            "A{dd}{seq:3}",
            "A{seq:3",
            "A B{seq:3}",
            "A#{seq:3}",
        ] {
            assert!(NumberFormat::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_resetting_series_needs_the_date_tokens_of_its_period() {
        assert_eq!(
            SeriesDefinition::new("A{seq:4}", Reset::Yearly, true, 1),
            Err(SeriesError::ResetNeedsToken {
                reset: "yearly",
                needs: "{yyyy} or {yy}"
            })
        );
        assert!(SeriesDefinition::new("A{yy}{seq:4}", Reset::Monthly, true, 1).is_err());
        assert!(SeriesDefinition::new("A{yy}{mm}{seq:4}", Reset::Monthly, true, 1).is_ok());
        assert!(SeriesDefinition::new("A{seq:4}", Reset::Never, false, 1).is_ok());
        assert_eq!(
            SeriesDefinition::new("A{seq:4}", Reset::Never, false, 0),
            Err(SeriesError::Start)
        );
    }

    #[test]
    fn periods_follow_the_reset() {
        assert_eq!(Reset::Never.period(at(2026, 12)), "all");
        assert_eq!(Reset::Yearly.period(at(2026, 12)), "2026");
        assert_eq!(Reset::Monthly.period(at(2026, 2)), "2026-02");
    }
}
