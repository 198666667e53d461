//! A serde deserializer over the [`Node`] tree that does not stop at a problem: a value of the
//! wrong type, an unknown field or an unknown choice is noted (with its path and position) and
//! read as a neutral stand-in, so that the file's types (`file.rs`, derived `Deserialize`) fill
//! in and the rest of the file is still checked. Only a missing field stops a pass, because the
//! derived code decides it after the map is read; `read.rs` then learns that the struct needs
//! that field and reads again, and later passes hand the struct a stand-in for it.
//!
//! Recursion follows the file's types, never the input: a value is only descended into when
//! the type asks for a list or map there, so the depth is that of the types (a few levels).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;

use serde::de::value::{StrDeserializer, U64Deserializer};
use serde::de::{self, DeserializeSeed, Visitor};

use crate::located::{LOCATED, Position};
use crate::yaml::problem::{Expected, FieldPath, Problem, Seg, Shape, closest};
use crate::yaml::tree::{Found, Key, Node, Scalar, Value};

/// What one pass over the tree learns.
#[derive(Debug, Default)]
pub(crate) struct Pass {
    pub shapes: RefCell<Vec<Shape>>,
    /// Problems met so far, reported or not (a stand-in's), so that a [`crate::Located`] around
    /// one knows its value is not what the file says.
    pub troubles: Cell<usize>,
    /// Fields each struct needs, learnt from earlier passes: struct name → field names.
    pub required: BTreeMap<&'static str, Vec<&'static str>>,
}

/// Why a pass stopped.
#[derive(Debug)]
pub(crate) struct DeError {
    pub kind: DeErrorKind,
    /// Where, once a struct saw it go by (the innermost one).
    pub at: Option<(FieldPath, Position, &'static str)>,
}

#[derive(Debug)]
pub(crate) enum DeErrorKind {
    MissingField(&'static str),
    Other(String),
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            DeErrorKind::MissingField(field) => write!(f, "missing field `{field}`"),
            DeErrorKind::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self {
            kind: DeErrorKind::Other(msg.to_string()),
            at: None,
        }
    }
    fn missing_field(field: &'static str) -> Self {
        Self {
            kind: DeErrorKind::MissingField(field),
            at: None,
        }
    }
}

/// Reads one node, at `path`.
#[derive(Clone)]
pub(crate) struct NodeDe<'a> {
    pub node: &'a Node,
    pub path: FieldPath,
    pub pass: &'a Pass,
}

impl<'a> NodeDe<'a> {
    fn at(&self, node: &'a Node, seg: Seg) -> Self {
        Self {
            node,
            path: self.path.child(seg),
            pass: self.pass,
        }
    }

    /// Notes a problem; a stand-in's problem was said already, so it only counts.
    fn trouble(&self, position: Position, path: FieldPath, problem: Problem) {
        self.pass.troubles.set(self.pass.troubles.get() + 1);
        if !self.node.placeholder {
            self.pass.shapes.borrow_mut().push(Shape {
                path,
                position,
                problem,
            });
        }
    }

    fn wrong(&self, expected: Expected) {
        self.trouble(
            self.node.position,
            self.path.clone(),
            Problem::WrongType {
                expected,
                found: Found(&self.node.value).to_string(),
            },
        );
    }

    /// The node as a scalar that is not null.
    fn text(&self) -> Option<&'a Scalar> {
        match &self.node.value {
            Value::Scalar(s) if !s.is_null() => Some(s),
            _ => None,
        }
    }

    fn integer(&self, min: i128, max: i128) -> i128 {
        match self.text().and_then(Scalar::as_integer) {
            Some(n) if (min..=max).contains(&n) => n,
            _ => {
                self.wrong(Expected::WholeNumber { min, max });
                min.max(0)
            }
        }
    }
}

macro_rules! integers {
    ($($method:ident $ty:ty => $visit:ident,)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            let n = self.integer(i128::from(<$ty>::MIN), i128::from(<$ty>::MAX));
            visitor.$visit(<$ty>::try_from(n).unwrap_or_default())
        }
    )*};
}

impl<'de> de::Deserializer<'de> for NodeDe<'_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match &self.node.value {
            Value::Map(entries) => visitor.visit_map(MapDe::new(&self, entries, None, Vec::new())),
            Value::List(items) => visitor.visit_seq(SeqDe::new(&self, items)),
            Value::Scalar(s) if s.is_null() => visitor.visit_unit(),
            Value::Scalar(s) => visitor.visit_str(&s.text),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Some(b) = self.text().and_then(Scalar::as_bool) {
            visitor.visit_bool(b)
        } else {
            self.wrong(Expected::Bool);
            visitor.visit_bool(false)
        }
    }

    integers! {
        deserialize_i8 i8 => visit_i8,
        deserialize_i16 i16 => visit_i16,
        deserialize_i32 i32 => visit_i32,
        deserialize_i64 i64 => visit_i64,
        deserialize_u8 u8 => visit_u8,
        deserialize_u16 u16 => visit_u16,
        deserialize_u32 u32 => visit_u32,
        deserialize_u64 u64 => visit_u64,
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Some(x) = self.text().and_then(Scalar::as_float) {
            visitor.visit_f64(x)
        } else {
            self.wrong(Expected::Number);
            visitor.visit_f64(0.0)
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Some(s) = self.text() {
            visitor.visit_str(&s.text)
        } else {
            self.wrong(Expected::Text);
            visitor.visit_str("")
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match &self.node.value {
            Value::Scalar(s) if s.is_null() => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.text().is_some() || !matches!(self.node.value, Value::Scalar(_)) {
            self.wrong(Expected::Nothing);
        }
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Value::List(items) = &self.node.value {
            visitor.visit_seq(SeqDe::new(&self, items))
        } else {
            self.wrong(Expected::List);
            visitor.visit_seq(SeqDe::new(&self, &[]))
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Value::Map(entries) = &self.node.value {
            visitor.visit_map(MapDe::new(&self, entries, None, Vec::new()))
        } else {
            self.wrong(Expected::Map);
            visitor.visit_map(MapDe::new(&self, &[], None, Vec::new()))
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        if name == LOCATED {
            return self.located_de(visitor);
        }
        let entries: &[(Key, Node)] = if let Value::Map(entries) = &self.node.value {
            entries
        } else {
            self.wrong(Expected::Map);
            &[]
        };
        // Fields this struct is known to need and the file lacks: said once, and handed a
        // stand-in so that the struct still fills in.
        let mut missing = Vec::new();
        for field in self.pass.required.get(name).into_iter().flatten() {
            if !entries.iter().any(|(k, _)| k.text == *field) {
                // `decison: ask` is reported as an unknown field that means `decision`; saying
                // that `decision` is missing too would be the same mistake twice.
                let misspelt = entries.iter().any(|(k, _)| {
                    !fields.contains(&k.text.as_str()) && closest(&k.text, fields) == Some(field)
                });
                if matches!(self.node.value, Value::Map(_)) && !misspelt {
                    self.trouble(
                        self.node.position,
                        self.path.clone(),
                        Problem::MissingField { field },
                    );
                }
                missing.push((*field, Node::null_placeholder(self.node.position)));
            }
        }
        let position = self.node.position;
        let path = self.path.clone();
        visitor
            .visit_map(MapDe::new(&self, entries, Some(fields), missing))
            .map_err(|mut e| {
                e.at.get_or_insert((path, position, name));
                e
            })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let Some(first) = variants.first() else {
            return Err(de::Error::custom("an enum without variants"));
        };
        let chosen: &str = match self.text() {
            Some(s) if variants.contains(&s.text.as_str()) => &s.text,
            Some(s) => {
                self.trouble(
                    self.node.position,
                    self.path.clone(),
                    Problem::UnknownValue {
                        value: s.text.clone(),
                        known: variants,
                    },
                );
                first
            }
            None => {
                self.wrong(Expected::OneOf(variants));
                first
            }
        };
        visitor.visit_enum(StrDeserializer::<DeError>::new(chosen))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}

impl NodeDe<'_> {
    /// [`Self::located`] for any `'de`: the value borrows nothing from the tree.
    fn located_de<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let before = self.pass.troubles.get();
        visitor.visit_seq(LocatedSeq {
            de: self,
            step: 0,
            before,
        })
    }
}

/// The value of a [`crate::Located`], then its line and column: `0:0` when the value, or
/// anything in it, is a stand-in, so that checks made on it later can tell.
struct LocatedSeq<'a> {
    de: NodeDe<'a>,
    step: u8,
    before: usize,
}

impl<'de> de::SeqAccess<'de> for LocatedSeq<'_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        self.step += 1;
        let placed = || !self.de.node.placeholder && self.de.pass.troubles.get() == self.before;
        let number = match self.step {
            1 => return seed.deserialize(self.de.clone()).map(Some),
            2 if placed() => self.de.node.position.line,
            3 if placed() => self.de.node.position.column,
            2 | 3 => 0,
            _ => return Ok(None),
        };
        seed.deserialize(U64Deserializer::<DeError>::new(number))
            .map(Some)
    }
}

struct SeqDe<'a> {
    de: NodeDe<'a>,
    items: std::iter::Enumerate<std::slice::Iter<'a, Node>>,
}

impl<'a> SeqDe<'a> {
    fn new(de: &NodeDe<'a>, items: &'a [Node]) -> Self {
        Self {
            de: de.clone(),
            items: items.iter().enumerate(),
        }
    }
}

impl<'de> de::SeqAccess<'de> for SeqDe<'_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        match self.items.next() {
            Some((i, item)) => seed.deserialize(self.de.at(item, Seg::Index(i))).map(Some),
            None => Ok(None),
        }
    }
}

/// A map's entries; for a struct (`fields` given) unknown fields are noted and skipped, and
/// stand-ins for missing needed fields follow the file's entries.
struct MapDe<'a> {
    de: NodeDe<'a>,
    entries: std::slice::Iter<'a, (Key, Node)>,
    fields: Option<&'static [&'static str]>,
    missing: std::vec::IntoIter<(&'static str, Node)>,
    value: Option<Pending<'a>>,
}

enum Pending<'a> {
    Entry(&'a Key, &'a Node),
    Missing(&'static str, Node),
}

impl<'a> MapDe<'a> {
    fn new(
        de: &NodeDe<'a>,
        entries: &'a [(Key, Node)],
        fields: Option<&'static [&'static str]>,
        missing: Vec<(&'static str, Node)>,
    ) -> Self {
        Self {
            de: de.clone(),
            entries: entries.iter(),
            fields,
            missing: missing.into_iter(),
            value: None,
        }
    }
}

impl<'de> de::MapAccess<'de> for MapDe<'_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        for (key, node) in self.entries.by_ref() {
            if let Some(fields) = self.fields
                && !fields.contains(&key.text.as_str())
            {
                self.de.trouble(
                    key.position,
                    self.de.path.clone(),
                    Problem::UnknownField {
                        field: key.text.clone(),
                        known: fields,
                    },
                );
                continue;
            }
            self.value = Some(Pending::Entry(key, node));
            return seed
                .deserialize(StrDeserializer::<DeError>::new(&key.text))
                .map(Some);
        }
        match self.missing.next() {
            Some((field, node)) => {
                self.value = Some(Pending::Missing(field, node));
                seed.deserialize(StrDeserializer::<DeError>::new(field))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        match self.value.take() {
            Some(Pending::Entry(key, node)) => {
                seed.deserialize(self.de.at(node, Seg::Key(key.text.clone())))
            }
            Some(Pending::Missing(field, node)) => seed.deserialize(NodeDe {
                node: &node,
                path: self.de.path.child(Seg::Key(field.to_owned())),
                pass: self.de.pass,
            }),
            None => Err(de::Error::custom("a value was asked for before its key")),
        }
    }
}
