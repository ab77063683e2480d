use super::*;

fn at(text: &str) -> Timestamp {
    parse_rfc3339(text).unwrap()
}

#[test]
fn a_callers_time_is_read_in_utc_without_leap_seconds() {
    let read = at("2099-06-30T23:59:59.5+02:00");
    assert_eq!(rfc3339_millis(read), "2099-06-30T21:59:59.500Z");
    for leap in [
        "2099-06-30T23:59:60.5Z",
        "2016-12-31T23:59:60Z",
        "2026-11-29T11:59:60+01:00",
        "2026-11-29T10:15:60Z",
    ] {
        assert_eq!(parse_rfc3339(leap), Err(TimeError::LeapSecond), "{leap}");
    }
    for bad in ["tomorrow", "2026-11-29", "2026-11-29T10:15:61Z", ""] {
        assert_eq!(parse_rfc3339(bad), Err(TimeError::NotRfc3339), "{bad}");
    }
}

#[test]
fn the_forms_rfc_3339_allows_are_taken() {
    for (given, read) in [
        ("2026-11-29t10:15:00z", "2026-11-29T10:15:00.000Z"),
        ("2026-11-29 10:15:00Z", "2026-11-29T10:15:00.000Z"),
        ("2026-11-29T10:15:00-00:00", "2026-11-29T10:15:00.000Z"),
        ("2026-11-29T10:15:00+23:59", "2026-11-28T10:16:00.000Z"),
        (
            "2026-11-29T10:15:00\u{2212}05:30",
            "2026-11-29T15:45:00.000Z",
        ),
        ("2026-11-29T10:15:00.1Z", "2026-11-29T10:15:00.100Z"),
        (
            "2026-11-29T10:15:00.123456789123Z",
            "2026-11-29T10:15:00.123Z",
        ),
        ("2026-11-29T10:15:00.9999Z", "2026-11-29T10:15:00.999Z"),
        ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"),
        ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00.000Z"),
        ("0000-01-01T00:00:00+01:00", "-0001-12-31T23:00:00.000Z"),
        ("9999-12-30T21:00:00Z", "9999-12-30T21:00:00.000Z"),
    ] {
        assert_eq!(rfc3339_millis(at(given)), read, "{given}");
    }
}

#[test]
fn what_rfc_3339_does_not_allow_is_refused() {
    for bad in [
        "2026-11-29T10:15Z",
        "2026-11-29T10:15:00",
        "2026-11-29T10:15:00.Z",
        "2026-11-29T10:15:00,5Z",
        "2026-11-29T10:15:00+01",
        "2026-11-29T10:15:00+0100",
        "2026-11-29T10:15:00+24:00",
        "2026-11-29T10:15:00+01:60",
        "2026-11-29T10:15:00Z ",
        "2026-11-29T10:15:00UTC",
        "2026-11-29T10:15:00Z[Europe/Berlin]",
        " 2026-11-29T10:15:00Z",
        "2026-11-29X10:15:00Z",
        "2026-11-29T24:00:00Z",
        "2026-02-29T10:15:00Z",
        "2026-13-01T10:15:00Z",
        "+2026-11-29T10:15:00Z",
        "20261-11-29T10:15:00Z",
        "2026-11-29T10:15:00.5.5Z",
    ] {
        assert_eq!(parse_rfc3339(bad), Err(TimeError::NotRfc3339), "{bad}");
    }
}

#[test]
fn a_time_past_what_is_kept_is_refused_as_such() {
    assert_eq!(
        parse_rfc3339("9999-12-31T23:59:59Z"),
        Err(TimeError::OutOfRange)
    );
    assert_eq!(
        parse_rfc3339("0000-01-01T00:00:00Z").map(Epoch::epoch_seconds),
        Ok(-62_167_219_200)
    );
}

#[test]
fn a_stored_leap_second_reads_as_the_second_before_it() {
    let read = parse_stored("2016-12-31T23:59:60.250Z").unwrap();
    assert_eq!(rfc3339_millis(read), "2016-12-31T23:59:59.250Z");
}

#[test]
fn a_time_is_written_in_utc_with_milliseconds() {
    assert_eq!(
        rfc3339_millis(at("2026-11-29T11:15:00.5+01:00")),
        "2026-11-29T10:15:00.500Z"
    );
    assert_eq!(
        rfc3339_millis(at("2026-11-29T10:15:00.999999999Z")),
        "2026-11-29T10:15:00.999Z"
    );
    assert_eq!(
        rfc3339_millis(Timestamp::UNIX_EPOCH),
        "1970-01-01T00:00:00.000Z"
    );
}

#[test]
fn an_exact_time_keeps_its_fractional_digits_in_groups_of_three() {
    for (given, written) in [
        ("2026-11-29T10:15:00Z", "2026-11-29T10:15:00Z"),
        ("2026-11-29T10:15:00.5Z", "2026-11-29T10:15:00.500Z"),
        ("2026-11-29T10:15:00.00012Z", "2026-11-29T10:15:00.000120Z"),
        (
            "2026-11-29T10:15:00.1234567Z",
            "2026-11-29T10:15:00.123456700Z",
        ),
        ("2026-11-29T11:15:00+01:00", "2026-11-29T10:15:00Z"),
    ] {
        assert_eq!(rfc3339_exact(at(given)), written, "{given}");
    }
}

#[test]
fn epoch_numbers_round_down_before_1970_too() {
    let before = at("1969-12-31T23:59:59.9995Z");
    assert_eq!(before.epoch_millis(), -1);
    assert_eq!(before.epoch_micros(), -500);
    assert_eq!(before.epoch_seconds(), -1);
    assert_eq!(rfc3339_millis(before), "1969-12-31T23:59:59.999Z");
    let after = at("2026-11-29T10:15:00.1239Z");
    assert_eq!(after.epoch_millis(), 1_795_947_300_123);
    assert_eq!(after.epoch_seconds(), 1_795_947_300);
    assert_eq!(
        from_epoch_millis(1_795_947_300_123).map(rfc3339_millis),
        Some("2026-11-29T10:15:00.123Z".into())
    );
    assert_eq!(rfc3339_millis(to_millis(after)), "2026-11-29T10:15:00.123Z");
    assert_eq!(
        to_millis(after),
        from_epoch_millis(1_795_947_300_123).unwrap()
    );
}
