//! A value together with where it was written, so that validation errors found after parsing can
//! still point at a file, line and column.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// The struct name [`Located`] asks for; the crate's YAML reader (`yaml/de.rs`) answers it with
/// the value, then its line and column.
pub(crate) const LOCATED: &str = "$capa::Located";
pub(crate) const LOCATED_FIELDS: &[&str] = &["value", "line", "column"];

/// Line and column (both 1-based) of a value in a capabilities file. `0:0` means unknown: not
/// read from a file, or standing in for a value the file got wrong.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Position {
    pub line: u64,
    pub column: u64,
}

/// A deserialised value and its position. The JSON Schema of `Located<T>` is the schema of `T`:
/// positions are a parsing detail, not part of the file format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located<T> {
    pub value: T,
    pub position: Position,
}

impl<T> Located<T> {
    /// A value that was not read from a file (built in, or a default).
    pub fn unplaced(value: T) -> Self {
        Self {
            value,
            position: Position::default(),
        }
    }
}

impl<T> std::ops::Deref for Located<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// Read through the crate's YAML reader (`yaml/de.rs`), which answers the [`LOCATED`] struct with
/// the value, then its line and column (`0:0` for a stand-in of a broken value).
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct(LOCATED, LOCATED_FIELDS, LocatedVisitor(PhantomData))
    }
}

struct LocatedVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for LocatedVisitor<T> {
    type Value = Located<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value with its position")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Located<T>, A::Error> {
        let value = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let line = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        let column = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(2, &self))?;
        Ok(Located {
            value,
            position: Position { line, column },
        })
    }
}

impl<T: JsonSchema> JsonSchema for Located<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}
