//! serde_json's deserializer seen through Tally's error type. serde's derived code and
//! visitors report why a value does not fit through the constructors of `de::Error`
//! (`missing_field`, `invalid_type` with what came and what was expected, ...); a
//! `serde_json::Error` keeps only the sentence. Wrapped in [`Facts`], the constructors
//! build a [`Kind`] instead, which waits in a slot while serde_json's frames between two
//! wrappers unwind. Every type hint is read as `deserialize_any`, so that serde_json never
//! words a wrong type itself; the hint says what the value [`Takes`].

use std::cell::Cell;
use std::fmt::Display;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess};
use serde::de::{VariantAccess, Visitor};

use super::{Kind, Takes};

thread_local! {
    /// A misfit on its way up through serde_json's frames, which carry only a stand-in.
    pub(super) static SLOT: Cell<Option<Kind>> = const { Cell::new(None) };
}

/// One of serde_json's deserializers, or a visitor, access or seed handed to one, with
/// [`Kind`] for error.
pub(super) struct Facts<X>(pub(super) X);

/// An error coming up out of serde_json: the misfit waiting in the slot, or serde_json's
/// own (the text is no JSON).
fn ours<T>(result: Result<T, impl Display>) -> Result<T, Kind> {
    result.map_err(|err| SLOT.take().unwrap_or_else(|| Kind::Syntax(err.to_string())))
}

/// A misfit going up into serde_json, which carries a stand-in.
fn theirs<T, E: de::Error>(result: Result<T, Kind>) -> Result<T, E> {
    result.map_err(|kind| {
        SLOT.set(Some(kind));
        E::custom("")
    })
}

/// Type hints read as `deserialize_any`, each with what its value takes.
macro_rules! read_as_any {
    ($($takes:expr => $($method:ident($($arg:ty),*)),*;)*) => {$($(
        fn $method<V: Visitor<'de>>(self, $(_: $arg,)* visitor: V) -> Result<V::Value, Kind> {
            ours(self.0.deserialize_any(Facts(visitor))).map_err(|kind| kind.taking($takes))
        }
    )*)*};
}

/// Type hints passed on as they are.
macro_rules! pass_on {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Kind> {
            ours(self.0.$method($($arg,)* Facts(visitor)))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Facts<D> {
    type Error = Kind;

    read_as_any! {
        Takes::Own => deserialize_any(), deserialize_char(), deserialize_str(),
            deserialize_string(), deserialize_bytes(), deserialize_byte_buf(), deserialize_unit(),
            deserialize_unit_struct(&'static str), deserialize_identifier();
        Takes::Bool => deserialize_bool();
        Takes::Integer => deserialize_i8(), deserialize_i16(), deserialize_i32(),
            deserialize_i64(), deserialize_i128(), deserialize_u128();
        Takes::Unsigned(u8::MAX.into()) => deserialize_u8();
        Takes::Unsigned(u16::MAX.into()) => deserialize_u16();
        Takes::Unsigned(u32::MAX.into()) => deserialize_u32();
        Takes::Unsigned(u64::MAX) => deserialize_u64();
        Takes::Number => deserialize_f32(), deserialize_f64();
        Takes::Array => deserialize_seq(), deserialize_tuple(usize),
            deserialize_tuple_struct(&'static str, usize);
        Takes::Object => deserialize_map(),
            deserialize_struct(&'static str, &'static [&'static str]);
    }

    // serde_json reads these by their hint: `null`, a `RawValue` (a newtype struct by its
    // name), an enum's two forms, a value skipped.
    pass_on! {
        deserialize_option();
        deserialize_newtype_struct(name: &'static str);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_ignored_any();
    }
}

/// Visits of a value, passed on and their misfits sent up. serde_json makes only these;
/// the others serde forwards to them.
macro_rules! visit {
    ($($method:ident($($value:ident: $ty:ty)?);)*) => {$(
        fn $method<E: de::Error>(self $(, $value: $ty)?) -> Result<Self::Value, E> {
            theirs(self.0.$method($($value)?))
        }
    )*};
}

/// Visits of a value with parts, whose accesses are wrapped in turn.
macro_rules! visit_parts {
    ($($method:ident($bound:ident);)*) => {$(
        fn $method<A: $bound<'de>>(self, parts: A) -> Result<Self::Value, A::Error> {
            theirs(self.0.$method(Facts(parts)))
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Facts<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.0.expecting(f)
    }

    visit! {
        visit_bool(value: bool);
        visit_i64(value: i64);
        visit_u64(value: u64);
        visit_f64(value: f64);
        visit_str(value: &str);
        visit_unit();
        visit_none();
    }

    visit_parts! {
        visit_some(Deserializer);
        visit_newtype_struct(Deserializer);
        visit_seq(SeqAccess);
        visit_map(MapAccess);
        visit_enum(EnumAccess);
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Facts<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<S::Value, D::Error> {
        theirs(self.0.deserialize(Facts(inner)))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Facts<A> {
    type Error = Kind;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Kind> {
        ours(self.0.next_element_seed(Facts(seed)))
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Facts<A> {
    type Error = Kind;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Kind> {
        ours(self.0.next_key_seed(Facts(seed)))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Kind> {
        ours(self.0.next_value_seed(Facts(seed)))
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Facts<A> {
    type Error = Kind;
    type Variant = Facts<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), Kind> {
        let (value, variant) = ours(self.0.variant_seed(Facts(seed)))?;
        Ok((value, Facts(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Facts<A> {
    type Error = Kind;

    fn unit_variant(self) -> Result<(), Kind> {
        ours(self.0.unit_variant())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Kind> {
        ours(self.0.newtype_variant_seed(Facts(seed)))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Kind> {
        ours(self.0.tuple_variant(len, Facts(visitor)))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Kind> {
        ours(self.0.struct_variant(fields, Facts(visitor)))
    }
}
