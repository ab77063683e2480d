use super::*;

fn lines_and_raw(lines: &[ImportLine]) -> Vec<(usize, &str)> {
    lines.iter().map(|l| (l.line, l.raw.as_str())).collect()
}

fn item(line: &ImportLine) -> Value {
    serde_json::from_str(line.item.as_ref().expect("a valid item")).unwrap()
}

#[test]
fn a_json_line_keeps_its_numbers_as_written() {
    let lines = parse_lines(
        "{\"external_ref\": \"PO-1\", \"data\": {\"n\": 123456789012345678901234567890}}\n"
            .as_bytes(),
        Format::JsonLines,
    )
    .unwrap();
    assert!(
        lines[0]
            .item
            .as_ref()
            .unwrap()
            .contains("123456789012345678901234567890")
    );
}

#[test]
fn csv_records_keep_their_file_line_and_whole_text() {
    let text = "external_ref,customer,note\r\n\
                PO-1,ACME,plain\r\n\
                \"PO-2\",\"Smith, J\",\"two\nlines\"\r\n\
                \r\n\
                PO-3,short\r\n\
                PO-4,Last,\"no newline at the end\"";
    let lines = parse_lines(text.as_bytes(), Format::Csv).unwrap();
    assert_eq!(
        lines_and_raw(&lines),
        [
            (2, "PO-1,ACME,plain"),
            (3, "\"PO-2\",\"Smith, J\",\"two\nlines\""),
            (6, "PO-3,short"),
            (7, "PO-4,Last,\"no newline at the end\""),
        ]
    );
    assert_eq!(
        item(&lines[1]),
        json!({"external_ref": "PO-2", "data": {"customer": "Smith, J", "note": "two\nlines"}})
    );
    assert_eq!(
        lines[2].item,
        Err(Unreadable::Malformed(
            "expected 3 fields, found 2".to_owned()
        ))
    );
}

/// A CSV file of `total` lines where every thousandth order has a note over two lines,
/// with the line and text each order must come back with.
fn csv_with_two_line_notes(total: usize) -> (String, Vec<(usize, String)>) {
    let mut text = String::from("external_ref,note\n");
    let mut expected = Vec::new();
    let mut line = 2;
    while line <= total {
        let order = expected.len();
        let two_lines = order % 1000 == 999 && line < total;
        let raw = if two_lines {
            format!("PO-{order},\"first\nsecond\"")
        } else {
            format!("PO-{order},plain")
        };
        text.push_str(&raw);
        text.push('\n');
        expected.push((line, raw));
        line += if two_lines { 2 } else { 1 };
    }
    (text, expected)
}

#[test]
fn a_csv_file_of_200000_lines_keeps_every_line_number_and_text() {
    let (text, expected) = csv_with_two_line_notes(200_000);
    let lines = parse_lines(text.as_bytes(), Format::Csv).unwrap();
    assert_eq!(lines.len(), expected.len());
    let middle = 99_999;
    assert!(
        expected[middle].1.contains('\n'),
        "the middle order spans two lines"
    );
    for index in [0, middle, expected.len() - 1] {
        let (line, raw) = &expected[index];
        assert_eq!(
            (lines[index].line, lines[index].raw.as_str()),
            (*line, raw.as_str())
        );
        assert!(lines[index].item.is_ok());
    }
    assert_eq!(lines.last().unwrap().line, 200_000);
}

#[test]
fn a_repeated_csv_column_is_an_error_naming_it_and_both_positions() {
    let repeated = parse_lines(
        "external_ref,total,customer,total\nPO-1,1,A,2\n".as_bytes(),
        Format::Csv,
    );
    assert_eq!(
        repeated.unwrap_err(),
        "the CSV header names column \"total\" twice: columns 2 and 4"
    );
    let two_refs = parse_lines(
        "external_ref,customer,external_ref\nPO-1,A,PO-2\n".as_bytes(),
        Format::Csv,
    );
    assert_eq!(
        two_refs.unwrap_err(),
        "the CSV header names column \"external_ref\" twice: columns 1 and 3"
    );
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_line() {
    let json = parse_lines(
        "\u{feff}{\"external_ref\": \"PO-1\"}\n".as_bytes(),
        Format::JsonLines,
    )
    .unwrap();
    assert_eq!(item(&json[0]), json!({"external_ref": "PO-1"}));
    assert_eq!(json[0].raw, "{\"external_ref\": \"PO-1\"}");

    let csv = parse_lines(
        "\u{feff}customer,external_ref\nACME,PO-1\n".as_bytes(),
        Format::Csv,
    )
    .unwrap();
    assert_eq!(
        item(&csv[0]),
        json!({"external_ref": "PO-1", "data": {"customer": "ACME"}})
    );
    assert_eq!((csv[0].line, csv[0].raw.as_str()), (2, "ACME,PO-1"));
}

/// `length` bytes of `x` without a newline, then `rest`, made as they are read: a
/// reader that held a line whole would hold all of it.
struct LongLine {
    left: u64,
    rest: &'static [u8],
    chunk: [u8; 8192],
}

impl std::io::Read for LongLine {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.left > 0 {
            let n = out.len().min(self.chunk.len()).min(self.left as usize);
            out[..n].copy_from_slice(&self.chunk[..n]);
            self.left -= n as u64;
            return Ok(n);
        }
        let n = out.len().min(self.rest.len());
        out[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

#[test]
fn a_line_too_long_fails_alone_and_reading_goes_on_after_it() {
    let text = format!(
        "{{\"external_ref\": \"a\"}}\n{{\"external_ref\": \"b\", \"data\": {{\"k\": \"{}\"}}}}\r\n{{\"external_ref\": \"c\"}}\n",
        "é".repeat(MAX_LINE_BYTES)
    );
    let lines = parse_lines(text.as_bytes(), Format::JsonLines).unwrap();
    assert_eq!(lines.len(), 3);
    let long = &lines[1];
    assert_eq!(long.line, 2);
    assert_eq!(
        long.item,
        Err(Unreadable::TooLong(
            text.lines().nth(1).unwrap().len() as u64 + 1
        ))
    );
    assert!(long.raw.starts_with("{\"external_ref\": \"b\"") && long.raw.ends_with("é…"));
    assert!(
        long.raw.len() <= KEPT_OF_REJECTED_LINE + 3,
        "{}",
        long.raw.len()
    );
    assert_eq!(item(&lines[2]), json!({"external_ref": "c"}));
    // A line of the limit exactly is a line like any other.
    let fits = format!(
        "{{\"external_ref\": \"d\", \"x\": \"{}\"}}",
        "y".repeat(MAX_LINE_BYTES - 30)
    );
    assert_eq!(fits.len(), MAX_LINE_BYTES);
    assert!(
        parse_lines(fits.as_bytes(), Format::JsonLines).unwrap()[0]
            .item
            .is_ok()
    );
}

#[test]
fn a_file_without_a_newline_is_read_in_a_bounded_buffer() {
    let length = 64 * 1024 * 1024;
    for (format, rest) in [
        (Format::JsonLines, &b"\n{\"external_ref\": \"after\"}\n"[..]),
        (Format::Csv, &b"\nafter,1\n"[..]),
    ] {
        let header: &[u8] = match format {
            Format::Csv => b"external_ref,n\n",
            Format::JsonLines => b"",
        };
        let input = std::io::Read::chain(
            header,
            LongLine {
                left: length,
                rest,
                chunk: [b'x'; 8192],
            },
        );
        let lines = parse_lines(BufReader::new(input), format).unwrap();
        let first_line = if header.is_empty() { 1 } else { 2 };
        assert_eq!(lines[0].line, first_line);
        assert_eq!(lines[0].item, Err(Unreadable::TooLong(length)));
        assert_eq!(lines[0].raw.len(), KEPT_OF_REJECTED_LINE + "…".len());
        assert_eq!(lines[1].line, first_line + 1);
        assert!(lines[1].item.is_ok(), "{:?}", lines[1]);
    }
}

#[test]
fn a_csv_record_too_long_fails_alone_whatever_its_quoted_line_breaks() {
    let note = "line\n".repeat(MAX_LINE_BYTES / 4);
    let text = format!("external_ref,note\nPO-1,short\nPO-2,\"{note}\"\nPO-3,\"two\nlines\"\n");
    let lines = parse_lines(text.as_bytes(), Format::Csv).unwrap();
    let found: Vec<(usize, bool)> = lines.iter().map(|l| (l.line, l.item.is_ok())).collect();
    // PO-2 starts on line 3 and holds as many line breaks as its note.
    let after = 3 + MAX_LINE_BYTES / 4 + 1;
    assert_eq!(found, [(2, true), (3, false), (after, true)]);
    assert!(matches!(lines[1].item, Err(Unreadable::TooLong(_))));
    assert_eq!(lines[2].raw, "PO-3,\"two\nlines\"");
}

#[test]
fn a_line_that_is_not_utf_8_fails_alone() {
    let mut bytes = b"{\"external_ref\": \"a\"}\n{\"external_ref\": \"".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    bytes.extend_from_slice(b"\"}\n{\"external_ref\": \"c\"}\n");
    let lines = parse_lines(&bytes[..], Format::JsonLines).unwrap();
    let ok: Vec<bool> = lines.iter().map(|l| l.item.is_ok()).collect();
    assert_eq!(ok, [true, false, true]);
    assert_eq!(
        lines[1].item,
        Err(Unreadable::Malformed("not UTF-8".into()))
    );
    let csv = b"external_ref,n\nPO-1,\xff\nPO-2,2\n";
    let lines = parse_lines(&csv[..], Format::Csv).unwrap();
    let ok: Vec<bool> = lines.iter().map(|l| l.item.is_ok()).collect();
    assert_eq!(ok, [false, true]);
}

#[test]
fn a_rejected_line_keeps_its_first_200_bytes_on_a_character_boundary() {
    assert_eq!(kept_of_rejected("bad ref,3"), "bad ref,3");
    let limit = "x".repeat(KEPT_OF_REJECTED_LINE);
    assert_eq!(kept_of_rejected(&limit), limit);
    let long = format!("x{}", "é".repeat(KEPT_OF_REJECTED_LINE));
    let kept = kept_of_rejected(&long);
    assert_eq!(
        kept,
        format!("x{}…", "é".repeat(KEPT_OF_REJECTED_LINE / 2 - 1))
    );
    assert!(kept.len() <= KEPT_OF_REJECTED_LINE + "…".len());
    // A line too long to read was cut already: its text is kept as it is.
    let too_long = start_of(long.as_bytes()[..KEPT_OF_REJECTED_LINE].as_ref());
    assert_eq!(kept_of_rejected(&too_long), too_long);
}
