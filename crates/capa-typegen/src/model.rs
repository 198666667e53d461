//! The model of one namespace: every visible tool converted, and every type name allocated.
//! Names depend only on the namespace's tools in catalog order, so a later `describe` of
//! `github.Issue` in a fresh call finds the same type an earlier output mentioned.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::ToolSpec;
use crate::convert::Converter;
use crate::doc::Doc;
use crate::ident::{is_safe_type_name, member_names, pascal_case, type_ident};
use crate::ty::{NamedType, ObjNode, Ty};

/// What a type name of the namespace stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TypeRef {
    Named(usize),
    Object(usize),
}

pub(crate) struct ToolModel<'a> {
    pub name: &'a str,
    pub member: String,
    pub input: Ty,
    /// No required parameters: `input?:`, so `github.get_me()` type-checks.
    pub input_optional: bool,
    pub output: Option<Ty>,
    pub doc: Doc,
    /// `MCP name: get-sum` when the member name differs from the tool name.
    pub extra: Vec<String>,
}

pub(crate) struct Model<'a> {
    pub namespace: &'a str,
    pub ident: String,
    pub tools: Vec<ToolModel<'a>>,
    pub objects: Vec<ObjNode>,
    pub types: Vec<NamedType>,
    pub by_name: HashMap<String, TypeRef>,
}

/// Arenas and name allocation shared by the converters of one namespace.
pub(crate) struct Builder<'a> {
    pub objects: Vec<ObjNode>,
    pub types: Vec<NamedType>,
    names: HashSet<String>,
    /// Base name → the suffix to try next, so that a thousand `Item`s cost a thousand tries,
    /// not half a million (names are never freed, so every smaller suffix stays taken).
    next_suffix: HashMap<String, usize>,
    /// `$defs` key → (definition, the `$defs`/`definitions` of its document, type), so that
    /// tools publishing the same definitions share one named type.
    defs: HashMap<String, Vec<SharedDef<'a>>>,
}

/// A converted definition: its schema, the definitions it may refer to, its named type.
type SharedDef<'a> = (&'a Value, DefScope<'a>, usize);
/// The `$defs` and `definitions` of a document.
type DefScope<'a> = [Option<&'a Value>; 2];

impl<'a> Builder<'a> {
    /// `base`, or `base2`, `base3`, … when taken.
    pub(crate) fn alloc(&mut self, base: &str) -> String {
        if self.names.insert(base.to_owned()) {
            return base.to_owned();
        }
        let n = self.next_suffix.entry(base.to_owned()).or_insert(2);
        loop {
            let name = format!("{base}{n}");
            *n += 1;
            if self.names.insert(name.clone()) {
                return name;
            }
        }
    }

    pub(crate) fn new_named(&mut self, base: &str) -> usize {
        let name = self.alloc(base);
        self.types.push(NamedType {
            name,
            body: Ty::Unknown,
            doc: Doc::default(),
        });
        self.types.len() - 1
    }

    pub(crate) fn new_object(&mut self, node: ObjNode) -> usize {
        self.objects.push(node);
        self.objects.len() - 1
    }

    pub(crate) fn shared_def(&self, key: &str, def: &Value, root: &Value) -> Option<usize> {
        let scope = def_scope(root);
        self.defs
            .get(key)?
            .iter()
            .find_map(|(d, s, id)| (same_json(d, def) && same_scope(s, &scope)).then_some(*id))
    }

    pub(crate) fn remember_def(&mut self, key: &str, def: &'a Value, root: &'a Value, id: usize) {
        self.defs
            .entry(key.to_owned())
            .or_default()
            .push((def, def_scope(root), id));
    }
}

fn def_scope(root: &Value) -> DefScope<'_> {
    [root.get("$defs"), root.get("definitions")]
}

fn same_scope(a: &DefScope<'_>, b: &DefScope<'_>) -> bool {
    a.iter().zip(b).all(|pair| match pair {
        (Some(a), Some(b)) => same_json(a, b),
        (None, None) => true,
        _ => false,
    })
}

/// `a == b` for JSON values (object members in any order, as serde_json compares), without
/// recursion: the derived comparison recurses once per level of nesting, and a schema may nest
/// arbitrarily deep.
fn same_json(a: &Value, b: &Value) -> bool {
    let mut pending = vec![(a, b)];
    while let Some((a, b)) = pending.pop() {
        if std::ptr::eq(a, b) {
            continue;
        }
        match (a, b) {
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                pending.extend(a.iter().zip(b));
            }
            (Value::Object(a), Value::Object(b)) if a.len() == b.len() => {
                for (key, a) in a {
                    let Some(b) = b.get(key) else {
                        return false;
                    };
                    pending.push((a, b));
                }
            }
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
                return false;
            }
            (a, b) if a != b => return false,
            _ => {}
        }
    }
    true
}

impl<'a> Model<'a> {
    /// Converts the tools of one namespace, given in catalog order.
    pub(crate) fn build(namespace: &'a str, ident: String, tools: &[&ToolSpec<'a>]) -> Self {
        let mut builder = Builder {
            objects: Vec::new(),
            types: Vec::new(),
            names: HashSet::new(),
            next_suffix: HashMap::new(),
            defs: HashMap::new(),
        };
        let names: Vec<&str> = tools.iter().map(|t| t.name).collect();
        let members = member_names(&names);
        let mut models = Vec::with_capacity(tools.len());
        for (tool, member) in tools.iter().zip(members) {
            let pascal = type_ident(&pascal_case(tool.name));
            let input = Converter::new(&mut builder, tool.input_schema, pascal.clone()).input();
            let output = tool.output_schema.map(|schema| {
                let title = schema.get("title").and_then(Value::as_str);
                let name = match title {
                    Some(title) if is_safe_type_name(title) => title.to_owned(),
                    _ => format!("{pascal}Result"),
                };
                Converter::new(&mut builder, schema, pascal.clone()).output(&name)
            });
            let extra = if member == tool.name {
                Vec::new()
            } else {
                vec![format!("MCP name: {}", tool.name)]
            };
            let input_optional = all_optional(&builder, &input);
            models.push(ToolModel {
                name: tool.name,
                member,
                input,
                input_optional,
                output,
                doc: tool.description.map(Doc::from_text).unwrap_or_default(),
                extra,
            });
        }
        break_alias_cycles(&mut builder.types);
        let mut by_name = HashMap::new();
        for (id, named) in builder.types.iter().enumerate() {
            by_name.insert(named.name.clone(), TypeRef::Named(id));
        }
        for (id, object) in builder.objects.iter().enumerate() {
            if let Some(name) = &object.name {
                by_name.insert(name.clone(), TypeRef::Object(id));
            }
        }
        Model {
            namespace,
            ident,
            tools: models,
            objects: builder.objects,
            types: builder.types,
            by_name,
        }
    }
}

fn all_optional(builder: &Builder<'_>, input: &Ty) -> bool {
    let body = match input {
        Ty::Named(id) => builder.types.get(*id).map(|t| &t.body),
        other => Some(other),
    };
    match body {
        Some(Ty::Object(id)) => builder
            .objects
            .get(*id)
            .is_some_and(|o| o.props.iter().all(|p| p.optional)),
        _ => false,
    }
}

/// Named types one alias walk may visit before the alias counts as circular: real aliases
/// reach a handful; a hostile chain of thousands would make the walks quadratic.
const MAX_ALIAS_WALK: usize = 256;

/// `type A = B | string; type B = A[] | A` is fine for arrays but not for bare unions and
/// intersections: TypeScript rejects an alias that refers to itself without an object, array
/// or tuple in between. Such aliases become `unknown`, and so does one whose walk reaches more
/// than [`MAX_ALIAS_WALK`] named types (`unknown` is always valid).
fn break_alias_cycles(types: &mut [NamedType]) {
    // One `seen` for all walks, reset through `visited`: a fresh vector per type would make a
    // namespace of many types quadratic even when no alias refers to another.
    let mut seen = vec![false; types.len()];
    let mut visited = Vec::new();
    for id in 0..types.len() {
        let walk = reaches(types, id, &mut seen, &mut visited);
        for v in visited.drain(..) {
            seen[v] = false;
        }
        match walk {
            Walk::Clear => {}
            Walk::Cycle => types[id].body = Ty::Unsupported("circular alias"),
            Walk::TooLong => types[id].body = Ty::Unsupported("alias too complex"),
        }
    }
}

enum Walk {
    Clear,
    Cycle,
    TooLong,
}

/// Whether the alias `target` reaches itself through unions, intersections and other aliases;
/// iterative, with `seen` marking the types visited (listed in `visited`).
fn reaches(
    types: &[NamedType],
    target: usize,
    seen: &mut [bool],
    visited: &mut Vec<usize>,
) -> Walk {
    let Some(start) = types.get(target) else {
        return Walk::Clear;
    };
    let mut pending: Vec<&Ty> = vec![&start.body];
    while let Some(ty) = pending.pop() {
        match ty {
            Ty::Union(list) | Ty::Intersection(list) => pending.extend(list),
            Ty::Named(id) if *id == target => return Walk::Cycle,
            Ty::Named(id) => {
                if seen.get(*id).copied().unwrap_or(true) {
                    continue;
                }
                if visited.len() >= MAX_ALIAS_WALK {
                    return Walk::TooLong;
                }
                seen[*id] = true;
                visited.push(*id);
                if let Some(named) = types.get(*id) {
                    pending.push(&named.body);
                }
            }
            _ => {}
        }
    }
    Walk::Clear
}
