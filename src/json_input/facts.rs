//! serde_json's deserializer seen through Tally's error type. serde's derived code and
//! visitors report why a value does not fit through the constructors of `de::Error`
//! (`missing_field`, `invalid_type` with what came and what was expected, ...); a
//! `serde_json::Error` keeps only the sentence. Wrapped in [`Facts`], the constructors
//! build a [`Kind`] instead. serde_json's frames between two wrappers cannot carry it, so
//! it waits in a [`Slot`] while they unwind. Every type hint is read as `deserialize_any`,
//! so that serde_json never words a wrong type itself; the hint is kept as what the value
//! [`Takes`].

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

use super::{Kind, Takes};

/// A misfit on its way through serde_json's frames.
pub(super) type Slot = Cell<Option<Kind>>;

/// One of serde's deserializer, visitor, access or seed values, wrapped.
pub(super) struct Facts<'s, X> {
    inner: X,
    slot: &'s Slot,
    /// For a visitor: what the value takes, by the hint it was asked for with.
    takes: Option<Takes>,
}

impl<'s, X> Facts<'s, X> {
    pub(super) fn new(inner: X, slot: &'s Slot) -> Self {
        Facts {
            inner,
            slot,
            takes: None,
        }
    }
}

/// An error coming up out of serde_json: the misfit waiting in the slot, or serde_json's
/// own (the text is no JSON).
fn ours<T, E: fmt::Display>(slot: &Slot, result: Result<T, E>) -> Result<T, Kind> {
    result.map_err(|err| slot.take().unwrap_or_else(|| Kind::Syntax(err.to_string())))
}

/// A misfit going up into serde_json: it waits in the slot, serde_json carries a stand-in.
fn theirs<T, E: de::Error>(
    slot: &Slot,
    takes: Option<Takes>,
    result: Result<T, Kind>,
) -> Result<T, E> {
    result.map_err(|kind| {
        slot.set(Some(kind.taking(takes)));
        E::custom("")
    })
}

/// Type hints read as `deserialize_any`, each with what its value takes.
macro_rules! read_as_any {
    ($($method:ident($($arg:ident: $ty:ty),*) => $takes:expr;)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Kind> {
            $(let _ = $arg;)*
            let visitor = Facts { inner: visitor, slot: self.slot, takes: Some($takes) };
            ours(self.slot, self.inner.deserialize_any(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Facts<'_, D> {
    type Error = Kind;

    read_as_any! {
        deserialize_any() => Takes::Own;
        deserialize_bool() => Takes::Bool;
        deserialize_i8() => Takes::Integer;
        deserialize_i16() => Takes::Integer;
        deserialize_i32() => Takes::Integer;
        deserialize_i64() => Takes::Integer;
        deserialize_i128() => Takes::Integer;
        deserialize_u8() => Takes::Unsigned(u8::MAX.into());
        deserialize_u16() => Takes::Unsigned(u16::MAX.into());
        deserialize_u32() => Takes::Unsigned(u32::MAX.into());
        deserialize_u64() => Takes::Unsigned(u64::MAX);
        deserialize_u128() => Takes::Integer;
        deserialize_f32() => Takes::Number;
        deserialize_f64() => Takes::Number;
        deserialize_char() => Takes::Own;
        deserialize_str() => Takes::Own;
        deserialize_string() => Takes::Own;
        deserialize_bytes() => Takes::Own;
        deserialize_byte_buf() => Takes::Own;
        deserialize_unit() => Takes::Own;
        deserialize_unit_struct(name: &'static str) => Takes::Own;
        deserialize_seq() => Takes::Array;
        deserialize_tuple(len: usize) => Takes::Array;
        deserialize_tuple_struct(name: &'static str, len: usize) => Takes::Array;
        deserialize_map() => Takes::Object;
        deserialize_struct(name: &'static str, fields: &'static [&'static str]) => Takes::Object;
        deserialize_identifier() => Takes::Own;
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Kind> {
        let visitor = Facts::new(visitor, self.slot);
        ours(self.slot, self.inner.deserialize_option(visitor))
    }

    /// Passed on by name: serde_json reads its `RawValue` this way.
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Kind> {
        let visitor = Facts::new(visitor, self.slot);
        ours(
            self.slot,
            self.inner.deserialize_newtype_struct(name, visitor),
        )
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Kind> {
        let visitor = Facts::new(visitor, self.slot);
        ours(
            self.slot,
            self.inner.deserialize_enum(name, variants, visitor),
        )
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Kind> {
        let visitor = Facts::new(visitor, self.slot);
        ours(self.slot, self.inner.deserialize_ignored_any(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Visits of a value, passed on and their misfits sent up.
macro_rules! visit {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, value: $ty) -> Result<Self::Value, E> {
            theirs(self.slot, self.takes, self.inner.$method(value))
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Facts<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    visit! {
        visit_bool(bool);
        visit_i8(i8);
        visit_i16(i16);
        visit_i32(i32);
        visit_i64(i64);
        visit_i128(i128);
        visit_u8(u8);
        visit_u16(u16);
        visit_u32(u32);
        visit_u64(u64);
        visit_u128(u128);
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
        visit_str(&str);
        visit_borrowed_str(&'de str);
        visit_string(String);
        visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        theirs(self.slot, self.takes, self.inner.visit_none())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        theirs(self.slot, self.takes, self.inner.visit_unit())
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
        let inner = Facts::new(inner, self.slot);
        theirs(self.slot, self.takes, self.inner.visit_some(inner))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
        let inner = Facts::new(inner, self.slot);
        theirs(
            self.slot,
            self.takes,
            self.inner.visit_newtype_struct(inner),
        )
    }

    fn visit_seq<A: SeqAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        let access = Facts::new(access, self.slot);
        theirs(self.slot, self.takes, self.inner.visit_seq(access))
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        let access = Facts::new(access, self.slot);
        theirs(self.slot, self.takes, self.inner.visit_map(access))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        let access = Facts::new(access, self.slot);
        theirs(self.slot, self.takes, self.inner.visit_enum(access))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Facts<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<S::Value, D::Error> {
        let inner = Facts::new(inner, self.slot);
        theirs(self.slot, None, self.inner.deserialize(inner))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Facts<'_, A> {
    type Error = Kind;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Kind> {
        let seed = Facts::new(seed, self.slot);
        ours(self.slot, self.inner.next_element_seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Facts<'_, A> {
    type Error = Kind;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Kind> {
        let seed = Facts::new(seed, self.slot);
        ours(self.slot, self.inner.next_key_seed(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Kind> {
        let seed = Facts::new(seed, self.slot);
        ours(self.slot, self.inner.next_value_seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'s, 'de, A: EnumAccess<'de>> EnumAccess<'de> for Facts<'s, A> {
    type Error = Kind;
    type Variant = Facts<'s, A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), Kind> {
        let seed = Facts::new(seed, self.slot);
        let (value, variant) = ours(self.slot, self.inner.variant_seed(seed))?;
        Ok((value, Facts::new(variant, self.slot)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Facts<'_, A> {
    type Error = Kind;

    fn unit_variant(self) -> Result<(), Kind> {
        ours(self.slot, self.inner.unit_variant())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Kind> {
        let seed = Facts::new(seed, self.slot);
        ours(self.slot, self.inner.newtype_variant_seed(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Kind> {
        let visitor = Facts::new(visitor, self.slot);
        ours(self.slot, self.inner.tuple_variant(len, visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Kind> {
        let visitor = Facts::new(visitor, self.slot);
        ours(self.slot, self.inner.struct_variant(fields, visitor))
    }
}
