//! Reading an import file a record at a time: a JSON line, or a CSV record (which a quoted
//! field may carry over several lines). A record holds at most [`MAX_LINE_BYTES`]; a longer
//! one is refused alone, and reading goes on after its end without ever holding it, so a
//! file without a newline costs a bounded buffer, not its size.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// The longest line (or CSV record) an import reads, in bytes: room for an order's 16 KiB
/// of `data` written out generously, and a line that fits a batch under any body limit.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// What the rejected-lines file keeps of a line's input, in bytes: enough to find the line
/// by, and a file that stays small however long the lines it lists.
pub const KEPT_OF_REJECTED_LINE: usize = 200;

/// One input record: the order item it holds, or why it holds none.
#[derive(Debug, Clone)]
pub struct ImportLine {
    pub line: usize,
    /// As written (of a line too long, its start and `…`).
    pub raw: String,
    /// The item's JSON text, kept as written so that numbers in `data` are never rounded.
    pub item: Result<String, Unreadable>,
}

/// Why a record holds no order item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// Longer than [`MAX_LINE_BYTES`]; the length in bytes.
    TooLong(u64),
    /// Not JSON, not UTF-8, or a CSV record with another number of fields.
    Malformed(String),
}

impl Unreadable {
    pub fn code(&self) -> &'static str {
        match self {
            Self::TooLong(_) => "line_too_long",
            Self::Malformed(_) => "malformed_line",
        }
    }

    pub fn detail(&self) -> String {
        match self {
            Self::TooLong(bytes) => {
                format!("the line is {bytes} bytes, more than the {MAX_LINE_BYTES} a line may have")
            }
            Self::Malformed(why) => why.clone(),
        }
    }
}

/// Reads JSON lines (`{"external_ref": "...", "data": {...}}` per line) or, for a `.csv`
/// file, CSV whose header names `external_ref`; every other column goes into `data`.
pub fn read_lines(path: &Path) -> Result<Vec<ImportLine>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_lines(BufReader::new(file), Format::of(path))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// How a file holds its orders, told by its extension.
#[derive(Debug, Clone, Copy)]
enum Format {
    JsonLines,
    Csv,
}

impl Format {
    fn of(path: &Path) -> Self {
        let is_csv = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if is_csv { Self::Csv } else { Self::JsonLines }
    }
}

fn parse_lines(mut input: impl BufRead, format: Format) -> Result<Vec<ImportLine>, String> {
    skip_byte_order_mark(&mut input).map_err(|e| e.to_string())?;
    match format {
        Format::JsonLines => read_json_lines(input).map_err(|e| e.to_string()),
        Format::Csv => read_csv(input),
    }
}

/// Spreadsheets and Windows editors start UTF-8 files with a byte-order mark.
fn skip_byte_order_mark(input: &mut impl BufRead) -> io::Result<()> {
    if input.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
        input.consume(3);
    }
    Ok(())
}

/// The bytes of one record, or its length once it passed the limit.
enum Bytes {
    Kept(Vec<u8>),
    /// The length, and the record's start.
    TooLong(u64, Vec<u8>),
}

/// Collects a record's bytes up to the limit, then only counts them.
#[derive(Default)]
struct Bounded {
    kept: Vec<u8>,
    length: u64,
}

impl Bounded {
    fn push(&mut self, bytes: &[u8]) {
        self.length += bytes.len() as u64;
        let room = (MAX_LINE_BYTES + 1).saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn is_over(&self) -> bool {
        self.length > MAX_LINE_BYTES as u64
    }

    fn finish(mut self) -> Bytes {
        if self.is_over() {
            self.kept.truncate(KEPT_OF_REJECTED_LINE);
            Bytes::TooLong(self.length, self.kept)
        } else {
            Bytes::Kept(self.kept)
        }
    }
}

/// The text of a line too long to keep: its start, cut on a character boundary, and `…`.
fn start_of(kept: &[u8]) -> String {
    let text = String::from_utf8_lossy(kept);
    let text = text.trim_end_matches('\u{FFFD}');
    format!("{text}…")
}

/// What the rejected-lines file keeps of a line's text: all of it, or its first
/// [`KEPT_OF_REJECTED_LINE`] bytes, cut on a character boundary, and `…`.
pub fn kept_of_rejected(raw: &str) -> String {
    if raw.len() <= KEPT_OF_REJECTED_LINE {
        return raw.to_owned();
    }
    format!(
        "{}…",
        &raw[..raw.floor_char_boundary(KEPT_OF_REJECTED_LINE)]
    )
}

/// The next line of `input` without its `\n` (or `\r\n`), `None` at the end.
fn next_line(input: &mut impl BufRead) -> io::Result<Option<Bytes>> {
    let mut line = Bounded::default();
    let mut read_any = false;
    loop {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            break;
        }
        read_any = true;
        let newline = buffer.iter().position(|&b| b == b'\n');
        let end = newline.unwrap_or(buffer.len());
        line.push(&buffer[..end]);
        input.consume(newline.map_or(end, |at| at + 1));
        if newline.is_some() {
            break;
        }
    }
    if !read_any {
        return Ok(None);
    }
    Ok(Some(match line.finish() {
        Bytes::Kept(mut bytes) => {
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
            Bytes::Kept(bytes)
        }
        too_long => too_long,
    }))
}

fn read_json_lines(mut input: impl BufRead) -> io::Result<Vec<ImportLine>> {
    let mut lines = Vec::new();
    let mut number = 0;
    while let Some(bytes) = next_line(&mut input)? {
        number += 1;
        let line = match bytes {
            Bytes::TooLong(length, start) => ImportLine {
                line: number,
                raw: start_of(&start),
                item: Err(Unreadable::TooLong(length)),
            },
            Bytes::Kept(bytes) => match String::from_utf8(bytes) {
                Ok(raw) if raw.trim().is_empty() => continue,
                Ok(raw) => ImportLine {
                    line: number,
                    item: serde_json::from_str::<&RawValue>(&raw)
                        .map(|item| item.get().to_owned())
                        .map_err(|e| Unreadable::Malformed(format!("not JSON: {e}"))),
                    raw,
                },
                Err(not_utf8) => ImportLine {
                    line: number,
                    raw: String::from_utf8_lossy(not_utf8.as_bytes()).into_owned(),
                    item: Err(Unreadable::Malformed("not UTF-8".into())),
                },
            },
        };
        lines.push(line);
    }
    Ok(lines)
}

/// One CSV record as written, with the line it starts on and its fields.
struct CsvRecord {
    line: usize,
    bytes: Bytes,
    fields: Vec<u8>,
    /// Where each field ends in `fields`.
    ends: Vec<usize>,
}

/// CSV records read with `csv_core`, the parser the `csv` crate is built on, fed a buffer
/// at a time: it gives each record's end exactly (quoted line breaks, doubled quotes),
/// while this keeps at most [`MAX_LINE_BYTES`] of any record.
struct CsvRecords<R> {
    input: R,
    parser: csv_core::Reader,
    /// The line of the next byte.
    line: usize,
}

impl<R: BufRead> CsvRecords<R> {
    fn new(input: R) -> Self {
        Self {
            input,
            parser: csv_core::Reader::new(),
            line: 1,
        }
    }

    /// Skips the line ends between records (the parser would too, but as part of the
    /// next record), counting them.
    fn skip_line_ends(&mut self) -> io::Result<()> {
        loop {
            let buffer = self.input.fill_buf()?;
            let ends = buffer
                .iter()
                .take_while(|&&b| b == b'\r' || b == b'\n')
                .count();
            self.line += buffer[..ends].iter().filter(|&&b| b == b'\n').count();
            let done = ends < buffer.len() || buffer.is_empty();
            self.input.consume(ends);
            if done {
                return Ok(());
            }
        }
    }

    fn next_record(&mut self) -> io::Result<Option<CsvRecord>> {
        self.skip_line_ends()?;
        let line = self.line;
        let mut raw = Bounded::default();
        let (mut fields, mut ends) = (Vec::new(), Vec::new());
        let mut output = [0; 4096];
        let mut output_ends = [0; 64];
        let mut last = None;
        loop {
            let buffer = self.input.fill_buf()?;
            let (result, read, written, ended) =
                self.parser
                    .read_record(buffer, &mut output, &mut output_ends);
            raw.push(&buffer[..read]);
            last = buffer[..read].last().copied().or(last);
            self.line += buffer[..read].iter().filter(|&&b| b == b'\n').count();
            if !raw.is_over() {
                fields.extend_from_slice(&output[..written]);
                ends.extend_from_slice(&output_ends[..ended]);
            }
            self.input.consume(read);
            match result {
                csv_core::ReadRecordResult::InputEmpty
                | csv_core::ReadRecordResult::OutputFull
                | csv_core::ReadRecordResult::OutputEndsFull => {}
                csv_core::ReadRecordResult::Record => break,
                csv_core::ReadRecordResult::End => return Ok(None),
            }
        }
        // The line end that closed the record is not part of it.
        if matches!(last, Some(b'\r' | b'\n')) {
            raw.length -= 1;
        }
        let bytes = match raw.finish() {
            Bytes::Kept(mut bytes) => {
                while matches!(bytes.last(), Some(b'\r' | b'\n')) {
                    bytes.pop();
                }
                Bytes::Kept(bytes)
            }
            too_long => too_long,
        };
        Ok(Some(CsvRecord {
            line,
            bytes,
            fields,
            ends,
        }))
    }
}

impl CsvRecord {
    /// The record's fields as text.
    fn fields(&self) -> Result<Vec<&str>, Unreadable> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let field = std::str::from_utf8(&self.fields[start..end])
                    .map_err(|_| Unreadable::Malformed("not UTF-8".into()));
                start = end;
                field
            })
            .collect()
    }
}

/// Each record keeps the text it was read from, and the line it starts on.
fn read_csv(input: impl BufRead) -> Result<Vec<ImportLine>, String> {
    let mut records = CsvRecords::new(input);
    let io = |e: io::Error| e.to_string();
    let header = match records.next_record().map_err(io)? {
        None => return Err("the CSV header has no external_ref column".to_owned()),
        Some(CsvRecord {
            bytes: Bytes::TooLong(length, _),
            ..
        }) => {
            return Err(format!(
                "the CSV header is {length} bytes, more than the {MAX_LINE_BYTES} a line may have"
            ));
        }
        Some(record) => record
            .fields()
            .map_err(|e| format!("the CSV header is {}", e.detail()))?
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<String>>(),
    };
    let ref_column = external_ref_column(&header)?;
    let mut lines = Vec::new();
    while let Some(record) = records.next_record().map_err(io)? {
        let (raw, item) = match &record.bytes {
            Bytes::TooLong(length, start) => (start_of(start), Err(Unreadable::TooLong(*length))),
            Bytes::Kept(bytes) => (
                String::from_utf8_lossy(bytes).into_owned(),
                record
                    .fields()
                    .and_then(|fields| csv_item(&header, ref_column, &fields)),
            ),
        };
        lines.push(ImportLine {
            line: record.line,
            raw,
            item,
        });
    }
    Ok(lines)
}

/// The index of the `external_ref` column, once no column name is repeated: a repeated
/// name would silently overwrite the other's value in `data`.
fn external_ref_column(header: &[String]) -> Result<usize, String> {
    let mut seen = HashMap::new();
    for (index, name) in header.iter().enumerate() {
        if let Some(first) = seen.insert(name.as_str(), index) {
            return Err(format!(
                "the CSV header names column {name:?} twice: columns {} and {}",
                first + 1,
                index + 1
            ));
        }
    }
    seen.get("external_ref")
        .copied()
        .ok_or_else(|| "the CSV header has no external_ref column".to_owned())
}

fn csv_item(header: &[String], ref_column: usize, record: &[&str]) -> Result<String, Unreadable> {
    if record.len() != header.len() {
        return Err(Unreadable::Malformed(format!(
            "expected {} fields, found {}",
            header.len(),
            record.len()
        )));
    }
    let data: Map<String, Value> = header
        .iter()
        .zip(record)
        .enumerate()
        .filter(|(i, _)| *i != ref_column)
        .map(|(_, (name, value))| (name.clone(), Value::String((*value).to_owned())))
        .collect();
    Ok(json!({"external_ref": record[ref_column], "data": data}).to_string())
}

#[cfg(test)]
mod tests;
