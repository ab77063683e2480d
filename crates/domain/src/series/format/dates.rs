//! Whether two formats of one series tell its periods apart by their texts alone.
//!
//! Each period of a series numbers in one format version (its counter fixes it), so two
//! versions could share a text only across two periods. Every format of the series shows
//! the dates that name its periods (the fields its reset needs). When each of them is the
//! same token at the same offset in both formats, an offset no counter moves (only
//! fixed-width parts before it), a text shows one value of each field whichever format
//! reads it: one text, one period, so the two versions never render the same text. A
//! two-digit year comes round each century, which is accepted.

use super::super::period::DateField;
use super::{Names, NumberFormat, Part};

impl Part {
    /// The date the part shows, if it shows one.
    fn field(&self) -> Option<DateField> {
        match self {
            Self::Year4 | Self::Year2 => Some(DateField::Year),
            Self::Month => Some(DateField::Month),
            Self::Day => Some(DateField::Day),
            Self::FiscalYear => Some(DateField::FiscalYear),
            Self::Literal(_) | Self::Series | Self::Code | Self::Seq { .. } => None,
        }
    }
}

impl NumberFormat {
    /// Whether the format shows `field`.
    pub(in crate::series) fn shows(&self, field: DateField) -> bool {
        self.has(|p| p.field() == Some(field))
    }

    /// Whether a text both `self` and `other` render with `names` shows, in both
    /// readings, the same value of every one of `fields`: each is shown by the same token
    /// at the same fixed offset in both formats.
    pub fn same_dates(&self, other: &Self, fields: &[DateField], names: Names<'_>) -> bool {
        let (mine, theirs) = (self.fixed_dates(names), other.fixed_dates(names));
        fields.iter().all(|&field| {
            mine.iter()
                .any(|&(at, part)| part.field() == Some(field) && theirs.contains(&(at, part)))
        })
    }

    /// Each date token no counter moves (only fixed-width parts before it), with its
    /// offset.
    fn fixed_dates(&self, names: Names<'_>) -> Vec<(usize, &Part)> {
        let mut dates = Vec::new();
        let mut at = Some(0);
        for part in &self.parts {
            let Some(offset) = at else {
                break;
            };
            if part.field().is_some() {
                dates.push((offset, part));
            }
            at = part.width(names).map(|width| offset + width);
        }
        dates
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::super::super::period::Reset;
    use super::*;
    use crate::ids::SeriesId;

    fn same(a: &str, b: &str, reset: Reset) -> bool {
        let series = SeriesId::parse("AB").unwrap();
        let names = Names {
            series: &series,
            code: Some("C1"),
        };
        let (a, b) = (
            NumberFormat::parse(a).unwrap(),
            NumberFormat::parse(b).unwrap(),
        );
        a.same_dates(&b, reset.fields(), names)
    }

    #[test]
    fn formats_that_show_a_periods_dates_alike_tell_periods_apart() {
        for (a, b, reset) in [
            ("A{yy}{seq:4}", "A{yy}{seq:5}", Reset::Yearly),
            ("A{yy}{seq:4}", "B{yy}-{seq:4!}", Reset::Yearly),
            (
                "D{yy}{mm}{dd}-{seq:3}",
                "E{yy}{mm}{dd}/{seq:6}",
                Reset::Daily,
            ),
            // The widths of the series' id and code count.
            ("{series}{yy}{seq:3}", "XY{yy}{seq:3}", Reset::Yearly),
            ("{code}/{fy}/{seq:1}", "AB/{fy}{seq:2}", Reset::FiscalYearly),
            // Only the dates of the period count: the day moves in a monthly series.
            (
                "M{yyyy}{mm}{dd}{seq:2}",
                "M{yyyy}{mm}-{seq:2}",
                Reset::Monthly,
            ),
            // A series that never resets has one period.
            ("N{seq:3}", "{seq:3}N", Reset::Never),
        ] {
            assert!(same(a, b, reset), "{a} {b}");
            assert!(same(b, a, reset), "{b} {a}");
        }
    }

    #[test]
    fn a_date_moved_swapped_retyped_or_behind_a_counter_is_not_told_apart() {
        for (a, b, reset) in [
            ("A{yy}{seq:4}", "A{seq:4}{yy}", Reset::Yearly),
            ("A{yy}{seq:4}", "AB{yy}{seq:4}", Reset::Yearly),
            (
                "D{yy}{dd}{mm}-{seq:3}",
                "D{yy}{mm}{dd}-{seq:3}",
                Reset::Daily,
            ),
            ("A{yyyy}{seq:4}", "A{yy}{seq:6}", Reset::Yearly),
            ("A{seq:2!}{yy}", "A{seq:2}{yy}", Reset::Yearly),
            ("M{yy}{mm}{seq:2}", "M{yy}{seq:2}{mm}", Reset::Monthly),
        ] {
            assert!(!same(a, b, reset), "{a} {b}");
        }
        // An exact-width counter has a fixed width.
        assert!(same("A{seq:2!}{yy}", "B{seq:2!}{yy}", Reset::Yearly));
    }

    /// Random monthly formats, rendered for many months and the counters they number:
    /// whenever the rule holds for two of them, a text both render shows one month in
    /// both.
    #[test]
    fn formats_the_rule_accepts_never_render_one_text_in_two_months() {
        use rand::rngs::StdRng;
        use rand::seq::SliceRandom;
        use rand::{RngExt, SeedableRng};

        const TOKENS: [&str; 9] = [
            "A", "1", "-", "{yy}", "{mm}", "{seq:1}", "{seq:2}", "{seq:1!}", "{seq:2!}",
        ];
        let mut rng = StdRng::seed_from_u64(7);
        let series = SeriesId::parse("s").unwrap();
        let names = Names {
            series: &series,
            code: None,
        };
        let fields = Reset::Monthly.fields();
        let random = |rng: &mut StdRng, counts: std::ops::RangeInclusive<usize>| -> Vec<&str> {
            let count = rng.random_range(counts);
            (0..count)
                .map(|_| TOKENS[rng.random_range(0..TOKENS.len())])
                .collect()
        };
        let monthly = |tokens: &[&str]| {
            NumberFormat::parse(&tokens.concat())
                .ok()
                .filter(|f| fields.iter().all(|&field| f.shows(field)))
        };
        let months = super::super::sample_months();
        let (mut accepted, mut clashes) = (0, 0);
        while accepted < 60 {
            let a_tokens = random(&mut rng, 2..=5);
            let Some(a) = monthly(&a_tokens) else {
                continue;
            };
            // `b` is `a` in another order, or `a` up to its last date ending its own way,
            // or any format.
            let mut b_tokens = random(&mut rng, 0..=3);
            match rng.random_range(0..3) {
                0 => {
                    b_tokens = a_tokens.clone();
                    b_tokens.shuffle(&mut rng);
                }
                1 => {
                    let last = a_tokens.iter().rposition(|t| *t == "{yy}" || *t == "{mm}");
                    let mut kept = a_tokens[..=last.unwrap_or(0)].to_vec();
                    kept.append(&mut b_tokens);
                    b_tokens = kept;
                }
                _ => {}
            }
            let Some(b) = monthly(&b_tokens) else {
                continue;
            };
            let mut months_of: HashMap<String, HashSet<(i32, u32)>> = HashMap::new();
            for date in &months {
                for counter in 1..=a.max_counter(names, None).min(300) {
                    months_of
                        .entry(a.render(names, date, counter))
                        .or_default()
                        .insert((date.year % 100, date.month));
                }
            }
            let clash = months.iter().any(|date| {
                (1..=b.max_counter(names, None).min(300)).any(|counter| {
                    months_of
                        .get(&b.render(names, date, counter))
                        .is_some_and(|seen| {
                            seen.iter().any(|m| *m != (date.year % 100, date.month))
                        })
                })
            });
            if a.same_dates(&b, fields, names) {
                accepted += 1;
                assert!(!clash, "{a:?} {b:?} render one text in two months");
            }
            clashes += usize::from(clash);
        }
        assert!(
            clashes > 20,
            "only {clashes} pairs render one text in two months"
        );
    }
}
