//! The model of one namespace: every visible tool converted, and every type name allocated.
//! Names depend only on the namespace's tools in catalog order, so a later `describe` of
//! `github.Issue` in a fresh call finds the same type an earlier output mentioned.

use std::collections::HashMap;

use serde_json::Value;

use crate::ToolSpec;
use crate::builder::Builder;
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

impl<'a> Model<'a> {
    /// Converts the tools of one namespace, given in catalog order.
    pub(crate) fn build(namespace: &'a str, ident: String, tools: &[&ToolSpec<'a>]) -> Self {
        let mut builder = Builder::new();
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
