//! What the law where a series is used asks of its numbers: a length they never pass, the
//! characters they may hold, and a validation code from the tax authority that each number
//! shows (`{code}`).

use super::SeriesError;

/// The longest `max_length`: the longest number a lookup accepts.
pub const MAX_NUMBER_LEN: usize = 256;
/// The longest `allowed_characters` rule.
pub const MAX_CHARACTER_RULE_LEN: usize = 64;
/// The longest validation code.
pub const MAX_CODE_LEN: usize = 32;

/// The characters a series' numbers may hold, written as a character class without its
/// brackets: `A-Za-z0-9/-` is letters, digits, `/` and `-` (a `-` is itself at the start or
/// the end).
#[derive(Debug, Clone)]
pub struct CharacterRule {
    source: String,
    allowed: [bool; 128],
}

impl PartialEq for CharacterRule {
    fn eq(&self, other: &Self) -> bool {
        self.allowed == other.allowed
    }
}

impl Eq for CharacterRule {}

impl CharacterRule {
    pub fn parse(spec: &str) -> Result<Self, SeriesError> {
        let invalid = || SeriesError::CharacterRule;
        let chars: Vec<char> = spec.chars().collect();
        if chars.is_empty() || chars.len() > MAX_CHARACTER_RULE_LEN {
            return Err(invalid());
        }
        let mut allowed = [false; 128];
        let mut i = 0;
        while i < chars.len() {
            let first = chars[i];
            if !first.is_ascii_graphic() {
                return Err(invalid());
            }
            if i + 2 < chars.len() && chars[i + 1] == '-' {
                let last = chars[i + 2];
                let same_class = (first.is_ascii_digit() && last.is_ascii_digit())
                    || (first.is_ascii_lowercase() && last.is_ascii_lowercase())
                    || (first.is_ascii_uppercase() && last.is_ascii_uppercase());
                if !same_class || first > last {
                    return Err(invalid());
                }
                for c in first..=last {
                    allowed[c as usize] = true;
                }
                i += 3;
            } else {
                allowed[first as usize] = true;
                i += 1;
            }
        }
        Ok(Self {
            source: spec.to_owned(),
            allowed,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    pub fn allows(&self, c: char) -> bool {
        c.is_ascii() && self.allowed[c as usize]
    }

    /// The first character of `text` the rule does not allow.
    pub fn first_refused(&self, text: &str) -> Option<char> {
        text.chars().find(|&c| !self.allows(c))
    }
}

/// Limits on a series' numbers, checked when the series is defined (its first number must
/// meet them) and when it numbers (a number that would be longer is refused, never issued).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NumberRules {
    pub max_length: Option<usize>,
    pub allowed_characters: Option<CharacterRule>,
}

impl NumberRules {
    pub fn new(
        max_length: Option<usize>,
        allowed_characters: Option<&str>,
    ) -> Result<Self, SeriesError> {
        if let Some(max) = max_length
            && !(1..=MAX_NUMBER_LEN).contains(&max)
        {
            return Err(SeriesError::MaxLength(max));
        }
        Ok(Self {
            max_length,
            allowed_characters: allowed_characters.map(CharacterRule::parse).transpose()?,
        })
    }

    /// Whether `number` meets the rules: the reason it does not, if not.
    pub fn check(&self, number: &str) -> Result<(), SeriesError> {
        if let Some(max) = self.max_length
            && number.len() > max
        {
            return Err(SeriesError::TooLong {
                number: number.to_owned(),
                max,
            });
        }
        if let Some(rule) = &self.allowed_characters
            && let Some(refused) = rule.first_refused(number)
        {
            return Err(SeriesError::CharacterRefused {
                number: number.to_owned(),
                refused,
                allowed: rule.as_str().to_owned(),
            });
        }
        Ok(())
    }
}

/// A series' validation code from the tax authority (Portugal's ATCUD code): 1 to 32
/// letters and digits. Fixed once the series has numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationCode(String);

impl ValidationCode {
    pub fn parse(code: &str) -> Result<Self, SeriesError> {
        if code.is_empty()
            || code.len() > MAX_CODE_LEN
            || !code.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            return Err(SeriesError::ValidationCode);
        }
        Ok(Self(code.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_rule_is_a_class_of_ranges_and_characters() {
        let india = CharacterRule::parse("A-Za-z0-9/-").unwrap();
        assert!("INV/2026-27/0001".chars().all(|c| india.allows(c)));
        assert_eq!(india.first_refused("INV_2026"), Some('_'));
        assert_eq!(india.first_refused("INV.1"), Some('.'));
        let digits = CharacterRule::parse("0-9").unwrap();
        assert_eq!(digits.first_refused("0000000042"), None);
        assert_eq!(digits.first_refused("A1"), Some('A'));
        let dash_first = CharacterRule::parse("-A").unwrap();
        assert!(dash_first.allows('-') && dash_first.allows('A') && !dash_first.allows('B'));
        for bad in ["", "z-a", "a-Z", "0-z", "A B", "é"] {
            assert!(CharacterRule::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rules_name_what_is_too_long_or_refused() {
        let rules = NumberRules::new(Some(16), Some("A-Za-z0-9/-")).unwrap();
        assert!(rules.check("INV/2026/0000001").is_ok());
        assert_eq!(
            rules.check("INV/2026/00000001"),
            Err(SeriesError::TooLong {
                number: "INV/2026/00000001".into(),
                max: 16
            })
        );
        assert!(matches!(
            rules.check("INV_1"),
            Err(SeriesError::CharacterRefused { refused: '_', .. })
        ));
        assert_eq!(
            NumberRules::new(Some(0), None),
            Err(SeriesError::MaxLength(0))
        );
        assert!(ValidationCode::parse("CSDF7T5H").is_ok());
        assert!(ValidationCode::parse("CSDF-7T5H").is_err());
    }
}
