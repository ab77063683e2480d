//! Reading and writing attribute values. An item whose attributes are a domain value's
//! fields is written and read attribute by attribute ([`Reader`]): a derived record would
//! repeat each attribute in its declaration and in two conversions, as the domain's types
//! keep no stored form. Values nested in an attribute (maps, lists of maps) and items
//! that are only read derive their codec with serde_dynamo ([`derived`], [`from_item`],
//! [`Reader::opt_derived`]), which names the attribute of a corrupt item.

use std::collections::HashMap;
use std::str::FromStr;

use aws_sdk_dynamodb::types::AttributeValue;
use jiff::Timestamp;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{PARTITION_KEY, StoreError};
use tally_domain::time::rfc3339_millis;

pub(crate) type Item = HashMap<String, AttributeValue>;

pub(crate) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

pub(crate) fn n(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

pub(crate) fn key(pk: String) -> Item {
    HashMap::from([(PARTITION_KEY.to_owned(), AttributeValue::S(pk))])
}

/// A value as serde derives its attribute: a map of its fields, a list of its elements.
pub(crate) fn derived<T: Serialize>(value: &T) -> Result<AttributeValue, StoreError> {
    serde_dynamo::to_attribute_value(value)
        .map_err(|e| StoreError::Invariant(format!("a value cannot be stored: {e}")))
}

/// The struct serde derives from a whole item: its fields are the item's attributes,
/// attributes it does not name are left alone.
pub(crate) fn from_item<T: DeserializeOwned>(item: &Item) -> Result<T, StoreError> {
    read_derived(item, AttributeValue::M(item.clone()))
}

/// Reads `value`, an attribute of `item` or the item itself, as serde derives `T`. A
/// missing or wrong-typed attribute makes the item corrupt, with the attribute's path
/// (`winners.prizes`, `formats[0].version`) in the reason.
fn read_derived<T: DeserializeOwned>(item: &Item, value: AttributeValue) -> Result<T, StoreError> {
    let from = serde_dynamo::Deserializer::from_attribute_value(value.into());
    serde_path_to_error::deserialize(from).map_err(|e| {
        let reason = match e.path().to_string().as_str() {
            "." => e.inner().to_string(),
            path => format!("`{path}` cannot be read: {}", e.inner()),
        };
        Reader::new(item).corrupt(reason)
    })
}

/// Times are stored as RFC 3339 in UTC with milliseconds.
pub(crate) fn timestamp(at: Timestamp) -> AttributeValue {
    s(rfc3339_millis(at))
}

/// A stored time.
pub(crate) use tally_domain::time::parse_stored as parse_timestamp;

/// Reads typed attributes out of one item, naming the item in errors.
pub(crate) struct Reader<'a> {
    item: &'a Item,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(item: &'a Item) -> Self {
        Self { item }
    }

    pub(crate) fn corrupt(&self, reason: String) -> StoreError {
        let key = match self.item.get(PARTITION_KEY) {
            Some(AttributeValue::S(pk)) => pk.clone(),
            _ => "<no key>".to_owned(),
        };
        StoreError::Corrupt { key, reason }
    }

    pub(crate) fn opt_str(&self, name: &str) -> Result<Option<&'a str>, StoreError> {
        match self.item.get(name) {
            None | Some(AttributeValue::Null(_)) => Ok(None),
            Some(AttributeValue::S(v)) => Ok(Some(v)),
            Some(_) => Err(self.corrupt(format!("`{name}` is not a string"))),
        }
    }

    pub(crate) fn str(&self, name: &str) -> Result<&'a str, StoreError> {
        self.opt_str(name)?
            .ok_or_else(|| self.corrupt(format!("`{name}` is missing")))
    }

    pub(crate) fn opt_num<T: FromStr>(&self, name: &str) -> Result<Option<T>, StoreError> {
        match self.item.get(name) {
            None => Ok(None),
            Some(AttributeValue::N(v)) => v
                .parse()
                .map(Some)
                .map_err(|_| self.corrupt(format!("`{name}` is not a valid number"))),
            Some(_) => Err(self.corrupt(format!("`{name}` is not a number"))),
        }
    }

    pub(crate) fn num<T: FromStr>(&self, name: &str) -> Result<T, StoreError> {
        self.opt_num(name)?
            .ok_or_else(|| self.corrupt(format!("`{name}` is missing")))
    }

    /// A value serde derives from the attribute, if present.
    pub(crate) fn opt_derived<T: DeserializeOwned>(
        &self,
        name: &str,
    ) -> Result<Option<T>, StoreError> {
        match self.item.get(name) {
            None | Some(AttributeValue::Null(_)) => Ok(None),
            Some(value) => {
                let named = Item::from([(name.to_owned(), value.clone())]);
                let mut read: HashMap<String, T> =
                    read_derived(self.item, AttributeValue::M(named))?;
                Ok(read.remove(name))
            }
        }
    }

    pub(crate) fn flag(&self, name: &str) -> bool {
        matches!(self.item.get(name), Some(AttributeValue::Bool(true)))
    }

    pub(crate) fn bytes(&self, name: &str) -> Result<&'a [u8], StoreError> {
        match self.item.get(name) {
            Some(AttributeValue::B(blob)) => Ok(blob.as_ref()),
            _ => Err(self.corrupt(format!("`{name}` is not binary"))),
        }
    }

    pub(crate) fn num_list(&self, name: &str) -> Result<Vec<u64>, StoreError> {
        let Some(AttributeValue::L(values)) = self.item.get(name) else {
            return Err(self.corrupt(format!("`{name}` is not a list")));
        };
        values
            .iter()
            .map(|v| match v {
                AttributeValue::N(n) => n.parse().ok(),
                _ => None,
            })
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| self.corrupt(format!("`{name}` holds a non-number")))
    }

    /// A number set; absent reads as empty.
    pub(crate) fn num_set<T: FromStr>(&self, name: &str) -> Result<Vec<T>, StoreError> {
        match self.item.get(name) {
            None => Ok(Vec::new()),
            Some(AttributeValue::Ns(values)) => values
                .iter()
                .map(|v| v.parse().ok())
                .collect::<Option<Vec<T>>>()
                .ok_or_else(|| self.corrupt(format!("`{name}` holds an invalid number"))),
            Some(_) => Err(self.corrupt(format!("`{name}` is not a number set"))),
        }
    }

    pub(crate) fn str_set(&self, name: &str) -> Result<Vec<&'a str>, StoreError> {
        match self.item.get(name) {
            None => Ok(Vec::new()),
            Some(AttributeValue::Ss(values)) => Ok(values.iter().map(String::as_str).collect()),
            Some(_) => Err(self.corrupt(format!("`{name}` is not a string set"))),
        }
    }

    pub(crate) fn parsed<T>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<T, StoreError> {
        let raw = self.str(name)?;
        parse(raw).ok_or_else(|| self.corrupt(format!("`{name}` has an unknown value")))
    }
}
