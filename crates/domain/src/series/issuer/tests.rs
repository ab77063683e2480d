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
    resetting(id, format, Reset::Never)
}

fn resetting(id: &str, format: &str, reset: Reset) -> Series {
    let definition = SeriesDefinition::new(format, reset, true, 1).unwrap();
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
fn a_format_that_could_repeat_a_number_of_another_period_of_its_series_is_refused() {
    for (first, changed) in [
        ("A{yy}{seq:4}", "A{seq:4}{yy}"),
        ("D{yy}{dd}{mm}-{seq:3}", "D{yy}{mm}{dd}-{seq:3}"),
    ] {
        let reset = if first.contains("{dd}") {
            Reset::Daily
        } else {
            Reset::Yearly
        };
        let read = resetting("S", first, reset);
        let entered = issuer().admit(None, &read, &today(), MAX).unwrap().unwrap();
        let swapped = with_format(read.clone(), changed);
        let Err(Refusal::Repeats(repeat)) = entered.admit(Some(&read), &swapped, &today(), MAX)
        else {
            panic!("{changed} was admitted after {first}");
        };
        assert_eq!(repeat.series.as_str(), "S");
        assert_eq!(repeat.other_format, first);
        for format in [first, changed] {
            let format = NumberFormat::parse(format).unwrap();
            assert!(format.read(read.names(), &repeat.example).is_some());
        }
    }
    // A wider counter or another prefix keeps the year where it was: welcome.
    let read = resetting("S", "A{yy}{seq:4}", Reset::Yearly);
    let entered = issuer().admit(None, &read, &today(), MAX).unwrap().unwrap();
    for format in ["A{yy}{seq:5}", "B{yy}{seq:4}", "A{yyyy}-{seq:4}"] {
        let changed = with_format(read.clone(), format);
        assert!(entered.admit(Some(&read), &changed, &today(), MAX).is_ok());
    }
    // A version the change replaces is not checked; one it keeps is.
    let pending = with_format(read.clone(), "A{seq:4}{yy}");
    let both = issuer().enter_existing(&pending, MAX).unwrap().unwrap();
    let replaced = with_format(read.clone(), "A{yy}{seq:5}");
    assert!(both.admit(Some(&pending), &replaced, &today(), MAX).is_ok());
    let kept = with_format(pending.clone(), "A{yy}{seq:5}");
    assert!(matches!(
        both.admit(Some(&pending), &kept, &today(), MAX),
        Err(Refusal::Repeats(_))
    ));
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
