//! Reading a number's text back into what it says, against one format: every part but a
//! growing counter has a fixed width, so the text's length fixes the counter's and there
//! is one reading at most.

use super::{Names, NumberFormat, Part};

/// What a number's text says, read against one format. Date fields are those the format
/// shows; the counter is always there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadNumber {
    pub year: Option<i32>,
    /// `{yy}`: the year modulo 100.
    pub year2: Option<u32>,
    pub month: Option<u32>,
    pub day: Option<u32>,
    pub fiscal_year: Option<i32>,
    pub counter: u64,
}

impl NumberFormat {
    /// Reads `text` as a number of this format, or `None` when this format cannot have
    /// rendered it. Only the counter varies in width, so the text's length fixes it and
    /// there is one reading at most. A counter wider than its `{seq:N}` never starts with
    /// `0`, as rendering would not have padded it.
    pub fn read(&self, names: Names<'_>, text: &str) -> Option<ReadNumber> {
        if !text.is_ascii() {
            return None;
        }
        let fixed: usize = self.parts.iter().filter_map(|p| p.width(names)).sum();
        let seq_width = text.len().checked_sub(fixed)?;
        let mut read = ReadNumber::default();
        let mut at = 0;
        for part in &self.parts {
            let width = part.width(names).unwrap_or(seq_width);
            let field = text.get(at..at + width)?;
            at += width;
            let digits = || {
                field
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| field.parse::<u64>().ok())
                    .flatten()
            };
            match part {
                Part::Literal(literal) => (field == literal).then_some(())?,
                Part::Series => (field == names.series.as_str()).then_some(())?,
                Part::Code => (Some(field) == names.code).then_some(())?,
                Part::Year4 => agree(&mut read.year, digits()? as i32)?,
                Part::Year2 => agree(&mut read.year2, digits()? as u32)?,
                Part::Month => agree(&mut read.month, digits()? as u32)?,
                Part::Day => agree(&mut read.day, digits()? as u32)?,
                Part::FiscalYear => agree(&mut read.fiscal_year, digits()? as i32)?,
                Part::Seq { width, exact } => {
                    let padded_past = seq_width > *width && field.starts_with('0');
                    if !*exact && (*width > seq_width || padded_past) {
                        return None;
                    }
                    read.counter = digits()?;
                }
            }
        }
        // An exact-width counter leaves nothing for the rest of the text to be.
        (at == text.len()).then_some(read)
    }
}

/// A token that appears twice must say the same both times.
fn agree<T: PartialEq + Copy>(slot: &mut Option<T>, value: T) -> Option<()> {
    match slot {
        Some(seen) if *seen != value => None,
        _ => {
            *slot = Some(value);
            Some(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SeriesId;
    use crate::series::calendar::LocalDate;

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
    fn every_rendered_number_reads_back_to_its_fields() {
        let series = SeriesId::parse("SO").unwrap();
        let formats = [
            "UABC{yy}{seq:6}",
            "{series}-{yyyy}{mm}{dd}-{seq:2}",
            "FY{fy}/{seq:4}",
            "{seq:3}{yy}",
            "2{yy}{seq:1}9",
        ];
        let on = date(2026, 11, 29, 2027);
        for source in formats {
            let format = NumberFormat::parse(source).unwrap();
            for counter in [1, 9, 10, 99, 100, 12_345, 10_000_000] {
                let text = format.render(plain(&series), &on, counter);
                let read = format
                    .read(plain(&series), &text)
                    .unwrap_or_else(|| panic!("{text}"));
                assert_eq!(read.counter, counter, "{text}");
                assert_eq!(format.render(plain(&series), &on, read.counter), text);
            }
        }
        let format = NumberFormat::parse("{series}-{yyyy}{mm}{dd}-{seq:2}").unwrap();
        let read = format.read(plain(&series), "SO-20261129-07").unwrap();
        assert_eq!(
            (read.year, read.month, read.day, read.counter),
            (Some(2026), Some(11), Some(29), 7)
        );
    }

    #[test]
    fn texts_a_format_cannot_render_are_not_read() {
        let series = SeriesId::parse("SO").unwrap();
        let format = NumberFormat::parse("Q{seq:3}").unwrap();
        assert_eq!(
            format.read(plain(&series), "Q101").map(|r| r.counter),
            Some(101)
        );
        assert_eq!(
            format.read(plain(&series), "Q1001").map(|r| r.counter),
            Some(1001)
        );
        for bad in ["Q01", "Q0101", "X101", "Q1a1", "Q", "Qé01"] {
            assert_eq!(format.read(plain(&series), bad), None, "{bad}");
        }
        let twice = NumberFormat::parse("{yy}-{seq:2}-{yy}").unwrap();
        assert!(twice.read(plain(&series), "26-01-26").is_some());
        assert_eq!(twice.read(plain(&series), "26-01-27"), None);
    }
}
