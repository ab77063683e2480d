//! The series of one issuer, the company whose numbers they are: no two may render the
//! same text (S2). Each series is entered with what decides its texts (every format it
//! has had and its validation code), and a definition or change whose new texts could
//! coincide with another series' is refused. One item of the table holds an issuer's
//! entries at a version, written in the same transaction as the series: two racing
//! definitions write the same version, so only one commits, and the other reads the
//! entries again and is checked against the winner.

use std::collections::BTreeMap;

use super::Series;
use super::calendar::LocalDate;
use super::format::{Names, NumberFormat, Texts};
use super::rules::ValidationCode;
use crate::ids::{IssuerId, SeriesId};

/// What decides the texts a series renders: every format it has had, each once, and
/// the validation code `{code}` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub formats: Vec<NumberFormat>,
    pub code: Option<ValidationCode>,
}

impl Entry {
    pub fn of(series: &Series) -> Self {
        let mut formats: Vec<NumberFormat> = Vec::new();
        for version in &series.formats {
            if !formats.contains(&version.format) {
                formats.push(version.format.clone());
            }
        }
        Self {
            formats,
            code: series.definition.validation_code.clone(),
        }
    }

    fn names<'a>(&'a self, series: &'a SeriesId) -> Names<'a> {
        Names {
            series,
            code: self.code.as_ref().map(ValidationCode::as_str),
        }
    }

    /// The formats whose texts `self` renders and `before` did not: every one that is
    /// new, and, when the code changed, every one that shows it.
    fn new_since(&self, before: Option<&Entry>) -> Vec<&NumberFormat> {
        self.formats
            .iter()
            .filter(|format| match before {
                None => true,
                Some(before) => {
                    !before.formats.contains(format)
                        || (format.shows_code() && before.code != self.code)
                }
            })
            .collect()
    }
}

/// Two series of one issuer whose formats could render one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    pub issuer: IssuerId,
    /// The format of the series at hand.
    pub format: String,
    /// The other series, and its format.
    pub series: SeriesId,
    pub other_format: String,
    /// A text both formats could render.
    pub example: String,
}

/// Why an entry was not admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Overlaps(Overlap),
    /// The issuer's entries would hold more formats than its item keeps.
    Full {
        max: usize,
    },
}

/// Every series of one issuer, as its item holds them at `version` (0: no item yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issuer {
    pub issuer: IssuerId,
    pub version: u64,
    pub series: BTreeMap<SeriesId, Entry>,
}

impl Issuer {
    /// An issuer no series has named yet.
    pub fn new(issuer: IssuerId) -> Self {
        Self {
            issuer,
            version: 0,
            series: BTreeMap::new(),
        }
    }

    /// The formats its entries hold, of every series.
    pub fn format_count(&self) -> usize {
        self.series.values().map(|e| e.formats.len()).sum()
    }

    /// The issuer with `changed` entered as it is now, once the texts it renders and
    /// `read` (the series as it was, `None` for a new one) did not are checked against
    /// every other series': the first overlap refuses. What `read` rendered already is
    /// not checked again, so a series entered with overlaps it had before the rule keeps
    /// them (and [`Issuer::overlaps`] names them). `None`: the entry is as written.
    pub fn admit(
        &self,
        read: Option<&Series>,
        changed: &Series,
        today: &LocalDate,
        max_formats: usize,
    ) -> Result<Option<Issuer>, Refusal> {
        let entry = Entry::of(changed);
        if self.series.get(&changed.series_id) == Some(&entry) {
            return Ok(None);
        }
        let before = read.map(Entry::of);
        for format in entry.new_since(before.as_ref()) {
            let texts = Texts::of(format, entry.names(&changed.series_id), today);
            if let Some(overlap) = self.first_overlap(&changed.series_id, format, &texts, today) {
                return Err(Refusal::Overlaps(overlap));
            }
        }
        let mut next = self.clone();
        next.version += 1;
        next.series.insert(changed.series_id.clone(), entry);
        if next.format_count() > max_formats {
            return Err(Refusal::Full { max: max_formats });
        }
        Ok(Some(next))
    }

    /// The issuer with `series` entered as it is, overlaps and all, unless it has an
    /// entry already (`None`): how a series defined before the rule joins its issuer. The
    /// entries stay within `max_formats` as [`Issuer::admit`] keeps them: a series that
    /// would pass it is refused, not entered.
    pub fn enter_existing(
        &self,
        series: &Series,
        max_formats: usize,
    ) -> Result<Option<Issuer>, Refusal> {
        if self.series.contains_key(&series.series_id) {
            return Ok(None);
        }
        let mut next = self.clone();
        next.version += 1;
        next.series
            .insert(series.series_id.clone(), Entry::of(series));
        if next.format_count() > max_formats {
            return Err(Refusal::Full { max: max_formats });
        }
        Ok(Some(next))
    }

    /// Every other series that could render a text `series` could, each once.
    pub fn overlaps(&self, series: &Series, today: &LocalDate) -> Vec<Overlap> {
        let entry = Entry::of(series);
        let mut found: Vec<Overlap> = Vec::new();
        for format in &entry.formats {
            let texts = Texts::of(format, entry.names(&series.series_id), today);
            for (other, other_entry) in &self.series {
                if *other == series.series_id || found.iter().any(|o| o.series == *other) {
                    continue;
                }
                if let Some(overlap) = self.overlap_with(other, other_entry, format, &texts, today)
                {
                    found.push(overlap);
                }
            }
        }
        found
    }

    /// The first other series that could render a text of `texts`.
    fn first_overlap(
        &self,
        own: &SeriesId,
        format: &NumberFormat,
        texts: &Texts,
        today: &LocalDate,
    ) -> Option<Overlap> {
        self.series
            .iter()
            .filter(|(other, _)| *other != own)
            .find_map(|(other, entry)| self.overlap_with(other, entry, format, texts, today))
    }

    fn overlap_with(
        &self,
        other: &SeriesId,
        entry: &Entry,
        format: &NumberFormat,
        texts: &Texts,
        today: &LocalDate,
    ) -> Option<Overlap> {
        entry.formats.iter().find_map(|other_format| {
            let example = texts.shared(&Texts::of(other_format, entry.names(other), today))?;
            Some(Overlap {
                issuer: self.issuer.clone(),
                format: format.as_str().to_owned(),
                series: other.clone(),
                other_format: other_format.as_str().to_owned(),
                example,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::{FormatVersion, Period, Reset, SeriesDefinition};

    const MAX: usize = 100;

    fn today() -> LocalDate {
        LocalDate {
            year: 2026,
            month: 11,
            day: 29,
            fiscal_year: 2026,
        }
    }

    fn series(id: &str, format: &str) -> Series {
        let definition = SeriesDefinition::new(format, Reset::Never, true, 1).unwrap();
        let created = jiff::tz::Offset::UTC
            .to_timestamp(jiff::civil::date(2026, 1, 1).at(0, 0, 0, 0))
            .unwrap();
        Series::new(SeriesId::parse(id).unwrap(), definition, created)
    }

    fn with_format(mut series: Series, format: &str) -> Series {
        let format = NumberFormat::parse(format).unwrap();
        series.formats.push(FormatVersion {
            version: series.latest_version() + 1,
            format: format.clone(),
            from: Period::parse(Reset::Never, "all").ok(),
        });
        series.definition.format = format;
        series
    }

    fn issuer() -> Issuer {
        Issuer::new(IssuerId::deployment())
    }

    #[test]
    fn a_second_series_that_could_render_the_firsts_numbers_is_refused_with_an_example() {
        let uabc = series("UABC", "{series}{yy}{seq:6}");
        let entered = issuer().admit(None, &uabc, &today(), MAX).unwrap().unwrap();
        assert_eq!(entered.version, 1);
        let typo = series("UABX", "UABC{yy}{seq:6}");
        let Err(Refusal::Overlaps(overlap)) = entered.admit(None, &typo, &today(), MAX) else {
            panic!("UABX was admitted");
        };
        assert_eq!(overlap.series.as_str(), "UABC");
        assert_eq!(overlap.example, "UABC26000001");
        assert_eq!(overlap.other_format, "{series}{yy}{seq:6}");
        // Another prefix is welcome.
        let other = series("UABD", "{series}{yy}{seq:6}");
        assert!(
            entered
                .admit(None, &other, &today(), MAX)
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn past_formats_count_and_only_new_texts_are_checked() {
        let old = with_format(series("A", "A{yy}{seq:4}"), "AA{yy}{seq:4}");
        let entered = issuer().admit(None, &old, &today(), MAX).unwrap().unwrap();
        // `B`'s format meets `A`'s first format, which `A` numbered with once.
        let b = series("B", "A{yy}{seq:4}");
        assert!(entered.admit(None, &b, &today(), MAX).is_err());
        // A change that renders nothing new is entered as it is; so is a repeat.
        assert_eq!(entered.admit(Some(&old), &old, &today(), MAX), Ok(None));
        // A series entered before the rule keeps its overlaps and changes its ranges.
        let clash = series("C", "AA{yy}{seq:4}");
        let both = entered.enter_existing(&clash, MAX).unwrap().unwrap();
        assert_eq!(both.overlaps(&clash, &today()).len(), 1);
        assert_eq!(both.overlaps(&old, &today())[0].series.as_str(), "C");
        assert_eq!(both.enter_existing(&clash, MAX), Ok(None));
        // But a new format of it is checked.
        let changed = with_format(clash.clone(), "A{yy}-{seq:4}");
        assert!(both.admit(Some(&clash), &changed, &today(), MAX).is_ok());
        let clashing = with_format(clash.clone(), "A{yy}{seq:5}");
        assert!(both.admit(Some(&clash), &clashing, &today(), MAX).is_err());
    }

    #[test]
    fn a_new_code_is_checked_where_formats_show_it_and_the_formats_are_bounded() {
        let mut pt = series("PT", "FT{code}/{seq:1}");
        pt.definition.validation_code = Some(ValidationCode::parse("AAA").unwrap());
        let entered = issuer().admit(None, &pt, &today(), MAX).unwrap().unwrap();
        let other = series("Q", "FTBBB/{seq:1}");
        assert!(entered.admit(None, &other, &today(), MAX).is_ok());
        let both = entered.admit(None, &other, &today(), MAX).unwrap().unwrap();
        let mut recoded = pt.clone();
        recoded.definition.validation_code = Some(ValidationCode::parse("BBB").unwrap());
        let Err(Refusal::Overlaps(overlap)) = both.admit(Some(&pt), &recoded, &today(), MAX) else {
            panic!("the new code was admitted");
        };
        assert_eq!(overlap.example, "FTBBB/1");
        assert_eq!(
            both.admit(None, &series("S", "S{yy}{seq:2}"), &today(), 2),
            Err(Refusal::Full { max: 2 })
        );
    }

    #[test]
    fn a_series_defined_before_the_rule_is_not_entered_past_the_formats_an_issuer_keeps() {
        // Three formats between two series: the issuer keeps three, not four.
        let two = with_format(series("OLD", "O{yy}{seq:4}"), "O{yyyy}{seq:4}");
        let entered = issuer().enter_existing(&two, 3).unwrap().unwrap();
        let one = series("NEXT", "N{yy}{seq:4}");
        let full = entered.enter_existing(&one, 3).unwrap().unwrap();
        assert_eq!(full.format_count(), 3);
        let last = series("LAST", "L{yy}{seq:4}");
        assert_eq!(full.enter_existing(&last, 3), Err(Refusal::Full { max: 3 }));
        // A series entered already is answered as before, full or not.
        assert_eq!(full.enter_existing(&one, 3), Ok(None));
    }
}
