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
        let mut name = base.to_owned();
        let mut n = 2;
        while !self.names.insert(name.clone()) {
            name = format!("{base}{n}");
            n += 1;
        }
        name
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
            .find_map(|(d, s, id)| (*d == def && *s == scope).then_some(*id))
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

impl<'a> Model<'a> {
    /// Converts the tools of one namespace, given in catalog order.
    pub(crate) fn build(namespace: &'a str, ident: String, tools: &[&ToolSpec<'a>]) -> Self {
        let mut builder = Builder {
            objects: Vec::new(),
            types: Vec::new(),
            names: HashSet::new(),
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

/// `type A = B | string; type B = A[] | A` is fine for arrays but not for bare unions and
/// intersections: TypeScript rejects an alias that refers to itself without an object, array
/// or tuple in between. Such aliases become `unknown`.
fn break_alias_cycles(types: &mut [NamedType]) {
    for id in 0..types.len() {
        let mut seen = vec![false; types.len()];
        if reaches(types, &types[id].body, id, &mut seen) {
            types[id].body = Ty::Unsupported("circular alias");
        }
    }
}

fn reaches(types: &[NamedType], ty: &Ty, target: usize, seen: &mut [bool]) -> bool {
    match ty {
        Ty::Union(list) | Ty::Intersection(list) => {
            list.iter().any(|t| reaches(types, t, target, seen))
        }
        Ty::Named(id) => {
            if *id == target {
                return true;
            }
            if seen.get(*id).copied().unwrap_or(true) {
                return false;
            }
            seen[*id] = true;
            types
                .get(*id)
                .is_some_and(|t| reaches(types, &t.body, target, seen))
        }
        _ => false,
    }
}
