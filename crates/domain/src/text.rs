//! The characters free text may hold. Tally stores and echoes as written the reasons,
//! names, prizes, authority references and purchase tokens it is given, and shows payer
//! ids; a character that breaks a line where JSON does not escape it, or reorders the text
//! around it, makes what a reader sees differ from what was written. Every such field is
//! checked here, with one rule. And a value an error shows back is cut here, by one rule.

use std::borrow::Cow;
use std::fmt;

use icu_properties::CodePointMapData;
use icu_properties::props::GeneralCategory;

/// How every free text's rule ends, in error messages and the API's descriptions.
pub const FREE_TEXT_RULE: &str =
    "without control characters, line or paragraph separators or bidirectional controls";

/// The characters free text refuses, as the inside of an ECMA-262 character class: what
/// openapi.json's patterns of free text exclude (a test compares them).
pub const FREE_TEXT_CLASS: &str = r"\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069";

/// What a refused character is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharacterKind {
    /// C0, DEL and C1 controls: a line break, a tab, an escape.
    Control,
    /// U+2028 and U+2029: a line break that JSON does not escape.
    LineSeparator,
    /// Marks and overrides that reorder the text around them (U+202E shows `abc` as `cba`).
    Bidirectional,
    /// Ids only: prints as nothing, or as a blank other than the space.
    Invisible,
    /// Ids only: another spelling, under Unicode compatibility (NFKC), of plainer text
    /// (a fullwidth letter, a ligature).
    Compatibility,
}

impl CharacterKind {
    fn describe(self) -> &'static str {
        match self {
            Self::Control => "a control character",
            Self::LineSeparator => "a line or paragraph separator",
            Self::Bidirectional => "a bidirectional control",
            Self::Invisible => "a character that prints as nothing or as a blank",
            Self::Compatibility => "another spelling of plainer characters (NFKC)",
        }
    }
}

/// A character a field refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefusedCharacter {
    pub character: char,
    pub kind: CharacterKind,
}

impl fmt::Display for RefusedCharacter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "U+{:04X}, {}",
            u32::from(self.character),
            self.kind.describe()
        )
    }
}

/// The first character of `text` that no free text may hold.
pub fn refused_in_text(text: &str) -> Option<RefusedCharacter> {
    first(text, in_text)
}

/// The first character of `text` that an id written as free text (a payer id) may not
/// hold: those free text may not, and those that print as nothing or as a blank other
/// than the space, which let one id pass for another.
pub fn refused_in_id(text: &str) -> Option<RefusedCharacter> {
    first(text, |c| {
        in_text(c).or_else(|| is_invisible(c).then_some(CharacterKind::Invisible))
    })
}

fn first(text: &str, kind: impl Fn(char) -> Option<CharacterKind>) -> Option<RefusedCharacter> {
    text.chars()
        .find_map(|character| kind(character).map(|kind| RefusedCharacter { character, kind }))
}

fn in_text(c: char) -> Option<CharacterKind> {
    if c.is_control() {
        Some(CharacterKind::Control)
    } else if matches!(c, '\u{2028}' | '\u{2029}') {
        Some(CharacterKind::LineSeparator)
    } else if matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    ) {
        Some(CharacterKind::Bidirectional)
    } else {
        None
    }
}

/// Format characters (zero-width spaces and joiners, the soft hyphen, the byte-order mark,
/// tags), every space but U+0020 (no-break, ideographic, en, em...), and the blanks Unicode
/// counts as letters, marks or symbols: the braille blank, the Hangul fillers, the
/// combining grapheme joiner, variation selectors.
fn is_invisible(c: char) -> bool {
    let category = CodePointMapData::<GeneralCategory>::new().get(c);
    let blank_category = matches!(
        category,
        GeneralCategory::Format | GeneralCategory::SpaceSeparator
    ) && c != ' ';
    blank_category
        || matches!(
            c,
            '\u{034F}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{2060}'..='\u{206F}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFF8}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// How many characters of a value a client sent an error shows back: enough to recognise
/// it, too few for an answer to grow with it (an order body may hold 3 MB of one string).
pub const EXCERPT_CHARS: usize = 32;

/// Whether `text` holds only white space (or nothing): a name or a prize must say
/// something.
pub fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// The longest explanation an error gives (a problem's or a rejected item's `detail`):
/// what it shows of values sent is already cut, so this only guards against a message
/// that forgot to.
pub const MAX_DETAIL_CHARS: usize = 1_024;

/// A value a client sent, as an error shows it back: its first [`EXCERPT_CHARS`]
/// characters, and `…` when there were more.
pub fn excerpt(sent: &str) -> Cow<'_, str> {
    cut(sent, EXCERPT_CHARS)
}

/// `text` cut to its first `max_chars` characters, and `…` when there were more.
pub fn cut(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_is_the_first_characters_and_says_when_it_was_cut() {
        assert_eq!(excerpt("ann"), "ann");
        let exact = "é".repeat(EXCERPT_CHARS);
        assert_eq!(excerpt(&exact), exact);
        let long = "é".repeat(1_000_000);
        assert_eq!(excerpt(&long), format!("{exact}…"));
        assert_eq!(cut("abc", 0), "…");
    }

    #[test]
    fn free_text_refuses_controls_separators_and_bidirectional_controls_only() {
        for (text, character, kind) in [
            ("a\nb", '\n', CharacterKind::Control),
            ("a\u{85}b", '\u{85}', CharacterKind::Control),
            (
                "line\u{2028}break",
                '\u{2028}',
                CharacterKind::LineSeparator,
            ),
            ("para\u{2029}", '\u{2029}', CharacterKind::LineSeparator),
            ("\u{202E}txt.exe", '\u{202E}', CharacterKind::Bidirectional),
            (
                "a\u{2066}b\u{2069}",
                '\u{2066}',
                CharacterKind::Bidirectional,
            ),
            ("a\u{200F}", '\u{200F}', CharacterKind::Bidirectional),
            ("\u{061C}", '\u{061C}', CharacterKind::Bidirectional),
        ] {
            assert_eq!(
                refused_in_text(text),
                Some(RefusedCharacter { character, kind }),
                "{text:?}"
            );
        }
        for fine in [
            "Grand prize: a 4K TV",
            "مرحبا",
            "שלום",
            "Å ß 東京",
            "😀",
            "a\u{00A0}b",
        ] {
            assert_eq!(refused_in_text(fine), None, "{fine:?}");
        }
        let refused = refused_in_text("x\u{202E}").unwrap();
        assert_eq!(refused.to_string(), "U+202E, a bidirectional control");
    }

    /// The code points a character class of `\xHH` and `\uHHHH` escapes and ranges names.
    fn class_members(class: &str) -> Vec<std::ops::RangeInclusive<u32>> {
        let mut ranges = Vec::new();
        let (mut rest, mut from) = (class, None);
        while let Some(escape) = rest.strip_prefix('\\') {
            let digits = if escape.starts_with('x') { 2 } else { 4 };
            let code = u32::from_str_radix(&escape[1..=digits], 16).unwrap();
            rest = &escape[1 + digits..];
            if let Some(after) = rest.strip_prefix('-') {
                (rest, from) = (after, Some(code));
            } else {
                ranges.push(from.take().unwrap_or(code)..=code);
            }
        }
        assert!(rest.is_empty(), "unread: {rest}");
        ranges
    }

    #[test]
    fn the_class_of_the_api_document_is_the_rule_of_free_text() {
        let ranges = class_members(FREE_TEXT_CLASS);
        for c in (0..=0x2_FFFF).filter_map(char::from_u32) {
            let in_class = ranges.iter().any(|r| r.contains(&u32::from(c)));
            assert_eq!(in_class, in_text(c).is_some(), "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn an_id_also_refuses_what_prints_as_nothing_or_as_a_blank() {
        for blank in [
            '\u{2800}',
            '\u{00A0}',
            '\u{3000}',
            '\u{2003}',
            '\u{202F}',
            '\u{1680}',
            '\u{200B}',
            '\u{200D}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{00AD}',
            '\u{3164}',
            '\u{FE0F}',
            '\u{E0041}',
            '\u{1BCA0}',
        ] {
            let text = format!("cust{blank}");
            assert!(
                refused_in_id(&text).is_some_and(|r| r.character == blank),
                "{blank:?}"
            );
        }
        for fine in ["Ann Smith", "ann@example.com", "東京-42", "ǅemal"] {
            assert_eq!(refused_in_id(fine), None, "{fine:?}");
        }
    }
}
