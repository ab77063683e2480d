//! The texts a format can render for one series, and whether two such sets share a text.
//!
//! Each token has a width and an alphabet, so the texts of a format are a sequence of
//! character classes: a literal is its own characters, `{series}` and `{code}` the
//! series' id and code, `{yyyy}` and `{fy}` four digits, `{yy}` two, `{mm}` `[01]` then a
//! digit, `{dd}` `[0-3]` then a digit. The counter is what makes the set infinite:
//! `{seq:N!}` is N digits, `{seq:N}` either N digits or, once it outgrows them, a digit
//! other than `0` followed by N or more. So a format's texts are at most two sequences of
//! classes, one of which may repeat its last digit class, and two formats share a text
//! exactly when a walk through both sequences at once reaches both ends, stepping on a
//! character both classes hold. The walk is a breadth-first search over pairs of
//! positions (a few hundred each at most), and the path it finds is a text both render.
//!
//! This over-approximates in two ways, by design: dates are taken as any digits of their
//! class (`{yy}` renders `11` for 2011 as well as `26`), so two formats that differ only
//! where one shows a date and the other digits overlap (numbers of years to come are
//! numbers all the same); and a date token shown twice is taken as two that need not
//! agree.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};

use super::super::calendar::LocalDate;
use super::{Names, NumberFormat, Part};

/// A set of ASCII characters, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Class(u128);

impl Class {
    fn of(c: u8) -> Self {
        Self(1 << (c & 0x7f))
    }

    fn span(first: u8, last: u8) -> Self {
        Self((first..=last).fold(0, |set, c| set | 1 << c))
    }

    fn digits() -> Self {
        Self::span(b'0', b'9')
    }

    fn and(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    fn has(self, c: u8) -> bool {
        c < 128 && self.0 & (1 << c) != 0
    }

    /// A character of the class: the first of `preferred` it holds, else its lowest.
    fn pick(self, preferred: &[u8]) -> Option<u8> {
        preferred
            .iter()
            .copied()
            .find(|&c| self.has(c))
            .or_else(|| (self.0 != 0).then(|| self.0.trailing_zeros() as u8))
    }
}

/// One position of a text: a character of `class`, once or (`repeats`) any number of
/// times; `hint` is what a number of today would show there, to make examples read like
/// numbers.
#[derive(Debug, Clone, Copy)]
struct Piece {
    class: Class,
    repeats: bool,
    hint: u8,
}

impl Piece {
    fn one(class: Class, hint: u8) -> Self {
        Self {
            class,
            repeats: false,
            hint,
        }
    }
}

/// Every text one format renders for one series.
#[derive(Debug, Clone)]
pub struct Texts {
    /// One sequence of pieces per way the format renders (a growing counter has two).
    ways: Vec<Vec<Piece>>,
}

impl Texts {
    /// The texts of `format` with `names` filled in; `today` only shapes examples.
    pub fn of(format: &NumberFormat, names: Names<'_>, today: &LocalDate) -> Self {
        let mut ways = vec![Vec::new()];
        for part in &format.parts {
            let digits = |text: String| -> Vec<Piece> {
                text.bytes()
                    .map(|b| Piece::one(Class::digits(), b))
                    .collect()
            };
            let fixed: Vec<Piece> = match part {
                Part::Literal(text) => literal(text),
                Part::Series => literal(names.series.as_str()),
                Part::Code => literal(names.code.unwrap_or_default()),
                Part::Year4 => digits(format!("{:04}", today.year)),
                Part::FiscalYear => digits(format!("{:04}", today.fiscal_year)),
                Part::Year2 => digits(format!("{:02}", today.year.rem_euclid(100))),
                Part::Month => dated(Class::span(b'0', b'1'), today.month),
                Part::Day => dated(Class::span(b'0', b'3'), today.day),
                Part::Seq { width, exact } => {
                    let padded = counter(*width);
                    if !*exact {
                        // Outgrown: a digit other than 0, then `width` or more digits.
                        let mut wider = ways.last().cloned().unwrap_or_default();
                        wider.push(Piece::one(Class::span(b'1', b'9'), b'1'));
                        wider.extend((0..*width).map(|_| Piece::one(Class::digits(), b'0')));
                        wider.push(Piece {
                            class: Class::digits(),
                            repeats: true,
                            hint: b'0',
                        });
                        ways.push(wider);
                        let last = ways.len() - 1;
                        for way in &mut ways[..last] {
                            way.extend(padded.iter().copied());
                        }
                        continue;
                    }
                    padded
                }
            };
            for way in &mut ways {
                way.extend(fixed.iter().copied());
            }
        }
        Self { ways }
    }

    /// A text both sets hold, if any.
    pub fn shared(&self, other: &Texts) -> Option<String> {
        self.ways
            .iter()
            .flat_map(|a| other.ways.iter().map(move |b| (a, b)))
            .find_map(|(a, b)| shared_text(a, b))
    }
}

fn literal(text: &str) -> Vec<Piece> {
    text.bytes().map(|b| Piece::one(Class::of(b), b)).collect()
}

/// Two digits of a month or day: the first from `first`, the second any digit.
fn dated(first: Class, value: u32) -> Vec<Piece> {
    let shown = format!("{value:02}").into_bytes();
    vec![
        Piece::one(first, shown[0]),
        Piece::one(Class::digits(), shown[1]),
    ]
}

/// A counter of exactly `width` digits, shown as the counter 1.
fn counter(width: usize) -> Vec<Piece> {
    (0..width)
        .map(|i| Piece::one(Class::digits(), if i + 1 == width { b'1' } else { b'0' }))
        .collect()
}

/// A position of the walk: before `a[i]` and `b[j]`.
type Position = (usize, usize);

/// For each position reached: where from, and the character taken (none: a skip).
type Steps = HashMap<Position, (Position, Option<u8>)>;

/// The walk through both sequences at once: positions `(i, j)` before `a[i]` and `b[j]`.
/// A repeating piece may be left without a character; a step takes one character that
/// both pieces hold, and stays on a repeating piece. Breadth first, so the text found is
/// among the shortest; only the positions reached are kept (two formats that differ
/// early reach a handful).
fn shared_text(a: &[Piece], b: &[Piece]) -> Option<String> {
    let mut came_from = Steps::new();
    let mut queue = VecDeque::from([(0, 0)]);
    came_from.insert((0, 0), ((0, 0), None));
    while let Some((i, j)) = queue.pop_front() {
        if i == a.len() && j == b.len() {
            return Some(walk_back(&came_from, (i, j)));
        }
        let mut next = Vec::with_capacity(3);
        if a.get(i).is_some_and(|p| p.repeats) {
            next.push((i + 1, j, None));
        }
        if b.get(j).is_some_and(|p| p.repeats) {
            next.push((i, j + 1, None));
        }
        if let (Some(pa), Some(pb)) = (a.get(i), b.get(j))
            // The larger hint first: a counter's `1` over the other's padding `0`.
            && let Some(c) = pa.class.and(pb.class).pick(&[
                pa.hint.max(pb.hint),
                pa.hint.min(pb.hint),
                b'1',
            ])
        {
            let ni = if pa.repeats { i } else { i + 1 };
            let nj = if pb.repeats { j } else { j + 1 };
            next.push((ni, nj, Some(c)));
        }
        for (ni, nj, taken) in next {
            if let Entry::Vacant(slot) = came_from.entry((ni, nj)) {
                slot.insert(((i, j), taken));
                queue.push_back((ni, nj));
            }
        }
    }
    None
}

/// The characters taken on the way to `end`, in order.
fn walk_back(came_from: &Steps, end: Position) -> String {
    let mut text = Vec::new();
    let mut at = end;
    while at != (0, 0) {
        let Some(&(from, taken)) = came_from.get(&at) else {
            break;
        };
        text.extend(taken);
        at = from;
    }
    text.reverse();
    String::from_utf8_lossy(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SeriesId;

    fn today() -> LocalDate {
        LocalDate {
            year: 2026,
            month: 3,
            day: 9,
            fiscal_year: 2026,
        }
    }

    fn texts(format: &str, series: &str, code: Option<&str>) -> Texts {
        let series = SeriesId::parse(series).unwrap();
        let format = NumberFormat::parse(format).unwrap();
        Texts::of(
            &format,
            Names {
                series: &series,
                code,
            },
            &today(),
        )
    }

    fn shared(a: (&str, &str), b: (&str, &str)) -> Option<String> {
        texts(a.0, a.1, None).shared(&texts(b.0, b.1, None))
    }

    #[test]
    fn a_typo_in_a_series_id_that_renders_anothers_prefix_overlaps_with_a_number_both_issue() {
        // The issue's case: series UABX with the format series UABC renders by default.
        assert_eq!(
            shared(("UABC{yy}{seq:6}", "UABX"), ("{series}{yy}{seq:6}", "UABC")).as_deref(),
            Some("UABC26000001")
        );
        assert_eq!(
            shared(
                ("{series}{yy}{seq:6}", "UABC"),
                ("{series}{yy}{seq:6}", "UABC")
            )
            .as_deref(),
            Some("UABC26000001")
        );
    }

    #[test]
    fn formats_that_differ_in_a_literal_or_a_width_never_overlap() {
        for (a, b) in [
            (("A{seq:4}", "s"), ("B{seq:4}", "t")),
            (("INV-{yy}{seq:4!}", "s"), ("INV-{yy}{seq:5!}", "t")),
            (("{series}-{seq:3}", "UA"), ("{series}-{seq:3}", "UB")),
            // A counter that outgrows its width never starts with 0.
            (("A{seq:3}", "s"), ("A0{seq:3}", "t")),
            (("INV/{yyyy}/{seq:5}", "s"), ("INV-{yyyy}-{seq:5}", "t")),
            // A month starts with 0 or 1.
            (("A{mm}{seq:2!}", "s"), ("A2{seq:3!}", "t")),
        ] {
            assert_eq!(shared(a, b), None, "{a:?} {b:?}");
        }
    }

    #[test]
    fn formats_that_can_meet_overlap_with_an_example_both_render() {
        for (a, b, example) in [
            // A growing counter reaches the other's next literal.
            (("A{seq:3}", "s"), ("A1{seq:3}", "t"), "A1001"),
            // A series id that is another's prefix and a year of the right digits.
            (
                ("{series}{yy}{seq:6}", "A"),
                ("{series}{yy}{seq:6}", "A1"),
                "A111000001",
            ),
            (("{seq:4}", "s"), ("{yyyy}{seq:1}", "t"), "20261"),
            (("X{code}{seq:2!}", "s"), ("XAB{seq:2!}", "t"), "XAB01"),
        ] {
            let a_texts = texts(a.0, a.1, Some("AB"));
            let b_texts = texts(b.0, b.1, Some("AB"));
            let found = a_texts.shared(&b_texts);
            assert!(found.is_some(), "{a:?} {b:?}");
            let found = found.unwrap();
            assert_eq!(found.len(), example.len(), "{a:?} {b:?}: {found}");
            // The example is one both formats read back.
            for (format, series) in [a, b] {
                let series = SeriesId::parse(series).unwrap();
                let names = Names {
                    series: &series,
                    code: Some("AB"),
                };
                let format = NumberFormat::parse(format).unwrap();
                assert!(format.read(names, &found).is_some(), "{format:?} {found}");
            }
        }
    }

    /// Random small formats, rendered for many counters and dates: whenever two render
    /// one text, `shared` finds a text, and every text it finds both formats read back.
    #[test]
    fn shared_finds_every_overlap_renders_show_and_only_texts_both_read() {
        use rand::rngs::StdRng;
        use rand::{RngExt, SeedableRng};
        use std::collections::HashSet;

        const TOKENS: [&str; 11] = [
            "A", "1", "0", "-", "{yy}", "{mm}", "{seq:1}", "{seq:2}", "{seq:3}", "{seq:1!}",
            "{seq:2!}",
        ];
        let mut rng = StdRng::seed_from_u64(30);
        let series = SeriesId::parse("s").unwrap();
        let names = Names {
            series: &series,
            code: None,
        };
        let random_format = |rng: &mut StdRng| loop {
            let parts = rng.random_range(1..=4);
            let text: String = (0..parts)
                .map(|_| TOKENS[rng.random_range(0..TOKENS.len())])
                .collect();
            if let Ok(format) = NumberFormat::parse(&text) {
                return format;
            }
        };
        let dates = super::super::sample_months();
        let rendered = |format: &NumberFormat| -> HashSet<String> {
            dates
                .iter()
                .flat_map(|date| (1..=1_200).map(move |n| format.render(names, date, n)))
                .filter(|text| format.read(names, text).is_some())
                .collect()
        };
        let mut overlaps = 0;
        for _ in 0..300 {
            let (a, b) = (random_format(&mut rng), random_format(&mut rng));
            let found = Texts::of(&a, names, &today()).shared(&Texts::of(&b, names, &today()));
            if let Some(text) = &found {
                // A date shown twice is taken as two, which reading does not.
                for format in [&a, &b] {
                    let dates = format
                        .parts
                        .iter()
                        .filter(|p| matches!(p, Part::Year2 | Part::Month))
                        .count();
                    if dates < 2 {
                        assert!(format.read(names, text).is_some(), "{a:?} {b:?} {text}");
                    }
                }
                overlaps += 1;
            }
            if rendered(&a).intersection(&rendered(&b)).next().is_some() {
                assert!(found.is_some(), "{a:?} and {b:?} render one text");
            }
        }
        assert!(
            overlaps > 30,
            "only {overlaps} overlaps among the random pairs"
        );
    }
}
