//! The series of one issuer, the company whose numbers they are: no two may render the
//! same text (S2). Each series is entered with what decides its texts (every format it
//! has had and its validation code), and a definition or change whose new texts could
//! coincide with another series' is refused. One item of the table holds an issuer's
//! entries at a version, written in the same transaction as the series: two racing
//! definitions write the same version, so only one commits, and the other reads the
//! entries again and is checked against the winner. A series is checked against its own
//! formats too: two of them may not render one text in two of its periods.

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
    /// Two formats of the series itself could render one text in two of its periods
    /// (the overlap names the series itself).
    Repeats(Overlap),
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
    /// its other formats and every other series': the first overlap refuses. What `read`
    /// rendered already is not checked again, so a series entered with overlaps it had
    /// before the rule keeps them (and [`Issuer::overlaps`] names them). `None`: the
    /// entry is as written.
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
            if let Some(repeat) = self.first_repeat(changed, &entry, format, &texts, today) {
                return Err(Refusal::Repeats(repeat));
            }
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

    /// The first other format of `series` (its `entry`) that could render a text of
    /// `texts` in another period: none when both show the dates of its periods alike
    /// ([`NumberFormat::same_dates`]), else the walk decides.
    fn first_repeat(
        &self,
        series: &Series,
        entry: &Entry,
        format: &NumberFormat,
        texts: &Texts,
        today: &LocalDate,
    ) -> Option<Overlap> {
        let names = entry.names(&series.series_id);
        let fields = series.definition.reset.fields();
        entry
            .formats
            .iter()
            .filter(|other| *other != format && !format.same_dates(other, fields, names))
            .find_map(|other| {
                let example = texts.shared(&Texts::of(other, names, today))?;
                Some(Overlap {
                    issuer: self.issuer.clone(),
                    format: format.as_str().to_owned(),
                    series: series.series_id.clone(),
                    other_format: other.as_str().to_owned(),
                    example,
                })
            })
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
mod tests;
