//! JSON Schema (draft-07 and 2020-12, plus OpenAPI's `nullable`) to the [`Ty`] language. Never
//! fails: what cannot be expressed becomes `unknown` with a short note.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::builder::Builder;
use crate::doc::{Doc, MAX_ENUM_LITERALS};
use crate::ident::{pascal_case, quote, type_ident};
use crate::keywords::Keywords;
use crate::ty::{ObjNode, Prop, Ty};

/// Deeper schemas are not followed; real tool schemas nest far less. Every step counts as a
/// level (a property, an item, a combinator branch, a `$ref`), so this bounds the recursion of
/// the converter, and so the depth of every [`Ty`] the renderer walks, whatever the input.
const MAX_LEVEL: usize = 32;
/// The note on a part cut by [`MAX_LEVEL`] (a test keeps the number in step).
const TOO_DEEP: &str = "nested deeper than 32 levels";
/// Schema nodes converted per document before the rest becomes `unknown`: `$ref`s convert
/// each target once, so this bounds the work a document can cause, cycles and fan-out included.
const MAX_NODES: usize = 5_000;
/// The note on a part cut by [`MAX_NODES`] (a test keeps the number in step).
const TOO_LARGE: &str = "schema has over 5000 parts";

/// Converts one schema document (a tool's input or output schema); `$ref`s resolve against it.
pub(crate) struct Converter<'b, 'a> {
    builder: &'b mut Builder<'a>,
    root: &'a Value,
    /// Prefix for names of `$ref` targets outside `$defs` (the tool's `PascalCase` name).
    prefix: String,
    /// JSON pointer → named type, so each target converts once and recursion terminates.
    memo: HashMap<String, usize>,
    /// The named type standing for the whole document, when something refers to `#`.
    root_named: Option<usize>,
    nodes: usize,
}

/// Where a schema sits: the path name its objects take and their object nesting depth.
#[derive(Clone, Copy)]
struct At<'p> {
    path: &'p str,
    depth: usize,
    level: usize,
    /// Whether an object here gets `path` as its own name (false for named type bodies,
    /// which are already named).
    name_self: bool,
}

impl<'p> At<'p> {
    /// The top of a tool's input or output schema.
    fn root(path: &'p str, name_self: bool) -> Self {
        At {
            path,
            depth: 0,
            level: 0,
            name_self,
        }
    }

    fn child<'q>(&self, path: &'q str, deeper: bool) -> At<'q> {
        At {
            path,
            depth: self.depth + usize::from(deeper),
            level: self.level + 1,
            name_self: true,
        }
    }
}

impl<'b, 'a> Converter<'b, 'a> {
    pub(crate) fn new(builder: &'b mut Builder<'a>, root: &'a Value, prefix: String) -> Self {
        Converter {
            builder,
            root,
            prefix,
            memo: HashMap::new(),
            root_named: None,
            nodes: 0,
        }
    }

    /// Converts a tool's input schema: an object named `<Tool>Input`, or a named type of
    /// that name when the schema refers to itself.
    pub(crate) fn input(mut self) -> Ty {
        let name = format!("{}Input", self.prefix);
        if refers_to_root(self.root, 0) {
            let id = self.builder.new_named(&name);
            self.root_named = Some(id);
            let name = self.builder.types[id].name.clone();
            let body = self.conv(self.root, At::root(&name, false));
            self.builder.types[id].body = body;
            Ty::Named(id)
        } else {
            self.conv(self.root, At::root(&name, true))
        }
    }

    /// Converts a tool's output schema into the named type `name`.
    pub(crate) fn output(mut self, name: &str) -> Ty {
        let id = self.builder.new_named(name);
        if refers_to_root(self.root, 0) {
            self.root_named = Some(id);
        }
        let name = self.builder.types[id].name.clone();
        let body = self.conv(self.root, At::root(&name, false));
        let named = &mut self.builder.types[id];
        named.body = body;
        named.doc = Doc::from_schema(self.root);
        Ty::Named(id)
    }

    fn conv(&mut self, schema: &'a Value, at: At<'_>) -> Ty {
        if at.level > MAX_LEVEL {
            return Ty::Unsupported(TOO_DEEP);
        }
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Ty::Unsupported(TOO_LARGE);
        }
        match schema {
            Value::Bool(true) => Ty::Unknown,
            Value::Bool(false) => Ty::Never,
            Value::Object(map) => self.conv_map(&Keywords::of(map), at),
            _ => Ty::Unsupported("not a schema object"),
        }
    }

    fn conv_map(&mut self, map: &Keywords<'a>, at: At<'_>) -> Ty {
        let mut parts = Vec::new();
        if let Some(reference) = map.reference {
            parts.push(match reference.as_str() {
                Some(r) => self.conv_ref(r, at),
                None => Ty::Unsupported("$ref is not a string"),
            });
        }
        if let Some(base) = self.conv_base(map, at) {
            parts.push(base);
        }
        for list in [map.any_of, map.one_of].into_iter().flatten() {
            parts.push(self.conv_list(list, at, "Option", Ty::union));
        }
        if let Some(list) = map.all_of {
            parts.push(self.conv_list(list, at, "Part", Ty::intersection));
        }
        let ty = Ty::intersection(parts);
        if map.nullable { ty.with_null() } else { ty }
    }

    fn conv_list(
        &mut self,
        list: &'a Value,
        at: At<'_>,
        label: &str,
        combine: fn(Vec<Ty>) -> Ty,
    ) -> Ty {
        let Some(items) = list.as_array() else {
            return Ty::Unsupported("combinator is not a list");
        };
        let members = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let path = format!("{}{label}{}", at.path, i + 1);
                self.conv(
                    item,
                    At {
                        path: &path,
                        level: at.level + 1,
                        name_self: true,
                        ..at
                    },
                )
            })
            .collect();
        combine(members)
    }

    /// The type from `type`, `enum`, `const` and the keywords that imply a type; `None` when
    /// the schema constrains nothing by itself (`{}`, `{"description": …}`, `{"anyOf": …}`).
    fn conv_base(&mut self, map: &Keywords<'a>, at: At<'_>) -> Option<Ty> {
        if let Some(value) = map.constant {
            return Some(literal(value));
        }
        if let Some(values) = map.enumeration {
            let Some(values) = values.as_array() else {
                return Some(Ty::Unsupported("enum is not a list"));
            };
            if values.len() > MAX_ENUM_LITERALS {
                // Too many to list in the type; the doc names a few.
                return Some(Ty::union(values.iter().map(widen).collect()));
            }
            return Some(Ty::union(values.iter().map(literal).collect()));
        }
        let names: Vec<&str> = match map.types {
            Some(Value::String(name)) => vec![name.as_str()],
            Some(Value::Array(names)) => {
                let names: Option<Vec<&str>> = names.iter().map(Value::as_str).collect();
                match names {
                    Some(names) if !names.is_empty() => names,
                    _ => return Some(Ty::Unsupported("type is not a list of names")),
                }
            }
            Some(_) => return Some(Ty::Unsupported("type is not a name")),
            // `required` alone (as in `anyOf: [{"required": ["a"]}, …]`) constrains no type.
            None if map.properties.is_some()
                || map.additional_properties.is_some()
                || map.pattern_properties.is_some() =>
            {
                vec!["object"]
            }
            None if map.items.is_some() || map.prefix_items.is_some() => vec!["array"],
            None => return None,
        };
        let members = names
            .into_iter()
            .map(|name| match name {
                "string" => Ty::Prim("string"),
                "number" | "integer" => Ty::Prim("number"),
                "boolean" => Ty::Prim("boolean"),
                "null" => Ty::Prim("null"),
                "object" => self.conv_object(map, at),
                "array" => self.conv_array(map, at),
                // Not JSON Schema, but unambiguous.
                "any" => Ty::Unknown,
                _ => Ty::Unsupported("unknown type name"),
            })
            .collect();
        Some(Ty::union(members))
    }

    fn conv_object(&mut self, map: &Keywords<'a>, at: At<'_>) -> Ty {
        // A set: a hostile schema may list thousands of properties and as many required names.
        let required: HashSet<&str> = map
            .required
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let declared = map.properties.and_then(Value::as_object);
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for (key, schema) in declared.into_iter().flatten() {
            let path = format!("{}{}", at.path, pascal_case(key));
            let ty = self.conv(schema, at.child(&path, true));
            let optional = !required.contains(key.as_str());
            let prop = Prop {
                key: key.clone(),
                ty,
                optional,
                doc: Doc::from_schema(schema),
            };
            if optional {
                rest.push(prop);
            } else {
                first.push(prop);
            }
        }
        first.append(&mut rest);
        let props = first;

        let value_path = format!("{}Value", at.path);
        let mut index_members = Vec::new();
        if let Some(patterns) = map.pattern_properties.and_then(Value::as_object) {
            for schema in patterns.values() {
                index_members.push(self.conv(schema, at.child(&value_path, true)));
            }
        }
        let open = match map.additional_properties {
            None | Some(Value::Bool(true)) => true,
            Some(Value::Bool(false)) => false,
            Some(schema) if schema.as_object().is_some_and(Map::is_empty) => true,
            Some(schema) => {
                index_members.push(self.conv(schema, at.child(&value_path, true)));
                false
            }
        };
        let index = if open && !index_members.is_empty() {
            Some(Ty::Unknown)
        } else if !index_members.is_empty() {
            Some(compatible_index(Ty::union(index_members), &props))
        } else if open && props.is_empty() && declared.is_none() {
            // `{"type": "object"}`: any object. An explicit empty `properties` reads as "no
            // parameters" and is rendered `{}`.
            Some(Ty::Unknown)
        } else {
            None
        };

        let name = (at.name_self && !props.is_empty()).then(|| self.builder.alloc(at.path));
        Ty::Object(self.builder.new_object(ObjNode {
            name,
            depth: at.depth,
            props,
            index,
        }))
    }

    fn conv_array(&mut self, map: &Keywords<'a>, at: At<'_>) -> Ty {
        let item_path = format!("{}Item", at.path);
        // 2020-12 tuples: `prefixItems`, then `items` for the rest.
        if let Some(prefix) = map.prefix_items.and_then(Value::as_array) {
            let items = self.tuple_items(prefix, at);
            let rest = match map.items {
                Some(Value::Bool(false)) => None,
                None => Some(Box::new(Ty::Unknown)),
                Some(schema) => Some(Box::new(self.conv(schema, at.child(&item_path, false)))),
            };
            return Ty::Tuple(items, rest);
        }
        match map.items {
            // Draft-07 tuples: `items` as a list, `additionalItems` for the rest.
            Some(Value::Array(list)) => {
                let items = self.tuple_items(list, at);
                let rest = match map.additional_items {
                    Some(Value::Bool(false)) => None,
                    None | Some(Value::Bool(true)) => Some(Box::new(Ty::Unknown)),
                    Some(schema) => Some(Box::new(self.conv(schema, at.child(&item_path, false)))),
                };
                Ty::Tuple(items, rest)
            }
            Some(schema) => Ty::Array(Box::new(self.conv(schema, at.child(&item_path, false)))),
            None => Ty::Array(Box::new(Ty::Unknown)),
        }
    }

    fn tuple_items(&mut self, list: &'a [Value], at: At<'_>) -> Vec<Ty> {
        list.iter()
            .enumerate()
            .map(|(i, schema)| {
                let path = format!("{}Item{}", at.path, i + 1);
                self.conv(schema, at.child(&path, false))
            })
            .collect()
    }

    fn conv_ref(&mut self, reference: &str, at: At<'_>) -> Ty {
        let Some(fragment) = reference
            .strip_prefix('#')
            .or(reference.is_empty().then_some(""))
        else {
            return Ty::Unsupported("external $ref");
        };
        let fragment = percent_decode(fragment);
        if fragment.is_empty() {
            return self
                .root_named
                .map_or(Ty::Unsupported("$ref to the root"), Ty::Named);
        }
        if !fragment.starts_with('/') {
            return Ty::Unsupported("$ref to an anchor");
        }
        if let Some(id) = self.memo.get(&fragment) {
            return Ty::Named(*id);
        }
        let segments: Vec<String> = fragment[1..]
            .split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect();
        let Some(target) = resolve(self.root, &segments) else {
            return Ty::Unsupported("dangling $ref");
        };
        let is_def =
            segments.len() == 2 && (segments[0] == "$defs" || segments[0] == "definitions");
        if is_def && let Some(id) = self.builder.shared_def(&segments[1], target, self.root) {
            self.memo.insert(fragment, id);
            return Ty::Named(id);
        }
        let base = if is_def {
            type_ident(&pascal_case(&segments[1]))
        } else {
            let tail: String = segments.iter().map(|s| pascal_case(s)).collect();
            format!("{}{tail}", self.prefix)
        };
        let id = self.builder.new_named(&base);
        if is_def {
            self.builder
                .remember_def(&segments[1], target, self.root, id);
        }
        self.memo.insert(fragment, id);
        let name = self.builder.types[id].name.clone();
        let body_at = At {
            path: &name,
            depth: 0,
            level: at.level + 1,
            name_self: false,
        };
        let body = self.conv(target, body_at);
        let named = &mut self.builder.types[id];
        named.body = body;
        named.doc = Doc::from_schema(target);
        Ty::Named(id)
    }
}

/// TypeScript requires every declared property to fit the index signature; widen the index
/// type to a short union of them, or to `unknown`. A union that would repeat an object (even
/// inside an array) is `unknown` too: the renderer writes such an object out again for each
/// mention, and an object whose index repeats its children, nested, doubles per level.
fn compatible_index(index: Ty, props: &[Prop]) -> Ty {
    let mut members = vec![index];
    for prop in props {
        members.push(prop.ty.clone());
        if prop.optional {
            members.push(Ty::Prim("undefined"));
        }
    }
    match Ty::union(members) {
        Ty::Union(list) if list.len() > 4 || list.iter().any(Ty::has_object) => Ty::Unknown,
        ty if ty.has_object() => Ty::Unknown,
        ty => ty,
    }
}

fn literal(value: &Value) -> Ty {
    match value {
        Value::String(s) => Ty::Literal(quote(s)),
        Value::Number(n) => Ty::Literal(n.to_string()),
        Value::Bool(b) => Ty::Literal(b.to_string()),
        Value::Null => Ty::Prim("null"),
        // Object and array constants are rare; their exact shape is not worth the tokens.
        Value::Array(_) => Ty::Array(Box::new(Ty::Unknown)),
        Value::Object(_) => Ty::Unknown,
    }
}

fn widen(value: &Value) -> Ty {
    match value {
        Value::String(_) => Ty::Prim("string"),
        Value::Number(_) => Ty::Prim("number"),
        Value::Bool(_) => Ty::Prim("boolean"),
        other => literal(other),
    }
}

fn resolve<'v>(root: &'v Value, segments: &[String]) -> Option<&'v Value> {
    segments.iter().try_fold(root, |node, segment| match node {
        Value::Object(map) => map.get(segment),
        Value::Array(list) => list.get(segment.parse::<usize>().ok()?),
        _ => None,
    })
}

/// `%24defs` → `$defs` (URI fragments may be percent-encoded); bad escapes stay as they are.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// Whether the document contains `$ref: "#"`, so its root must become a named type.
fn refers_to_root(value: &Value, level: usize) -> bool {
    if level > MAX_LEVEL {
        return false;
    }
    match value {
        Value::Object(map) => map.iter().any(|(key, v)| {
            (key == "$ref" && matches!(v.as_str(), Some("#" | ""))) || refers_to_root(v, level + 1)
        }),
        Value::Array(list) => list.iter().any(|v| refers_to_root(v, level + 1)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_name_the_bounds() {
        assert!(TOO_DEEP.contains(&MAX_LEVEL.to_string()));
        assert!(TOO_LARGE.contains(&MAX_NODES.to_string()));
    }

    #[test]
    fn decodes_percent_escapes() {
        assert_eq!(percent_decode("/%24defs/a%20b"), "/$defs/a b");
        assert_eq!(percent_decode("/x%zz%"), "/x%zz%");
    }
}
