//! The intermediate form between JSON Schema and TypeScript text: a small type language whose
//! objects and named types live in arenas of the namespace model, so that renderings at
//! different budgets (inline or by name) share one conversion.

use crate::doc::Doc;

/// A TypeScript type, as converted from one schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ty {
    /// `{}` and `true` schemas: anything.
    Unknown,
    /// The `false` schema: nothing validates.
    Never,
    /// A schema we cannot express (invalid, external `$ref`, too deep): `unknown` with a note.
    Unsupported(&'static str),
    /// `string`, `number`, `boolean` or `null`.
    Prim(&'static str),
    /// A literal type, already in TypeScript syntax (`"open"`, `42`, `true`).
    Literal(String),
    Array(Box<Ty>),
    /// Fixed items, then optionally more items of one type.
    Tuple(Vec<Ty>, Option<Box<Ty>>),
    /// An object in the namespace model's object arena.
    Object(usize),
    Union(Vec<Ty>),
    Intersection(Vec<Ty>),
    /// A named type (`$defs` entry, output type, recursive root) in the model's type arena.
    Named(usize),
}

impl Ty {
    /// A union, flattened, without duplicates; `unknown` absorbs everything.
    pub(crate) fn union(members: Vec<Ty>) -> Ty {
        let mut flat: Vec<Ty> = Vec::with_capacity(members.len());
        for member in members {
            match member {
                Ty::Union(inner) => {
                    for m in inner {
                        push_unique(&mut flat, m);
                    }
                }
                Ty::Unknown => return Ty::Unknown,
                // `never | T` is `T`.
                Ty::Never => {}
                other => push_unique(&mut flat, other),
            }
        }
        if flat.iter().any(|t| matches!(t, Ty::Unsupported(_))) {
            // An unknown member makes the whole union unknown; keep the note.
            return flat
                .into_iter()
                .find(|t| matches!(t, Ty::Unsupported(_)))
                .unwrap_or(Ty::Unknown);
        }
        match flat.len() {
            0 => Ty::Never,
            1 => flat.pop().unwrap_or(Ty::Never),
            _ => Ty::Union(flat),
        }
    }

    /// An intersection, flattened; `unknown` members drop out.
    pub(crate) fn intersection(members: Vec<Ty>) -> Ty {
        let mut flat: Vec<Ty> = Vec::with_capacity(members.len());
        let mut note = None;
        for member in members {
            match member {
                Ty::Intersection(inner) => {
                    for m in inner {
                        push_unique(&mut flat, m);
                    }
                }
                Ty::Unknown => {}
                Ty::Unsupported(why) => note = Some(why),
                other => push_unique(&mut flat, other),
            }
        }
        match flat.len() {
            0 => note.map_or(Ty::Unknown, Ty::Unsupported),
            1 => flat.pop().unwrap_or(Ty::Unknown),
            _ => Ty::Intersection(flat),
        }
    }

    pub(crate) fn with_null(self) -> Ty {
        Ty::union(vec![self, Ty::Prim("null")])
    }

    /// Whether an object of the arena is written out somewhere inside (named types are only
    /// referenced). Recursion is bounded by the converter's nesting bound.
    pub(crate) fn has_object(&self) -> bool {
        match self {
            Ty::Object(_) => true,
            Ty::Array(item) => item.has_object(),
            Ty::Tuple(items, rest) => {
                items.iter().any(Ty::has_object) || rest.as_deref().is_some_and(Ty::has_object)
            }
            Ty::Union(list) | Ty::Intersection(list) => list.iter().any(Ty::has_object),
            Ty::Unknown
            | Ty::Never
            | Ty::Unsupported(_)
            | Ty::Prim(_)
            | Ty::Literal(_)
            | Ty::Named(_) => false,
        }
    }
}

fn push_unique(list: &mut Vec<Ty>, ty: Ty) {
    if !list.contains(&ty) {
        list.push(ty);
    }
}

/// An object type: declared properties (required first) and an optional index signature.
#[derive(Debug, Clone)]
pub(crate) struct ObjNode {
    /// Path name (`CreateIssueInputLabelsItem`), unique in the namespace; `None` for objects
    /// without properties, which are always shown inline.
    pub name: Option<String>,
    /// Object nesting depth below the root of its tool input, output or named type.
    pub depth: usize,
    pub props: Vec<Prop>,
    /// `[key: string]: T` from `additionalProperties` / `patternProperties`.
    pub index: Option<Ty>,
}

#[derive(Debug, Clone)]
pub(crate) struct Prop {
    pub key: String,
    pub ty: Ty,
    pub optional: bool,
    pub doc: Doc,
}

#[derive(Debug, Clone)]
pub(crate) struct NamedType {
    pub name: String,
    pub body: Ty,
    pub doc: Doc,
}
