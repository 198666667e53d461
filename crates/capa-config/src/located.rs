//! A value together with where it was written, so that validation errors found after parsing can
//! still point at a file, line and column.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};

/// Line and column (both 1-based) of a value in a capabilities file. `0:0` means unknown.
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

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<T>::deserialize(deserializer)?;
        Ok(Self {
            value: spanned.value,
            position: Position {
                line: spanned.referenced.line(),
                column: spanned.referenced.column(),
            },
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
