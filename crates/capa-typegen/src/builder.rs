//! The arenas of one namespace's types and the allocation of their names, shared by the
//! converters of its tools (`convert.rs`) and read by its model (`model.rs`).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::doc::Doc;
use crate::ty::{NamedType, ObjNode, Ty};

/// Arenas and name allocation shared by the converters of one namespace.
pub(crate) struct Builder<'a> {
    pub objects: Vec<ObjNode>,
    pub types: Vec<NamedType>,
    names: HashSet<String>,
    /// Base name → the suffix to try next, so that a thousand `Item`s cost a thousand tries,
    /// not half a million (names are never freed, so every smaller suffix stays taken).
    next_suffix: HashMap<String, usize>,
    /// `$defs` key → (definition, the `$defs`/`definitions` of its document, type), so that
    /// tools publishing the same definitions share one named type. Their documents need not
    /// hold the same `$defs`: only those the definition reaches must be the same (an OpenAPI
    /// source gives each operation the few of the document's schemas it uses).
    defs: HashMap<String, Vec<SharedDef<'a>>>,
}

/// A converted definition: its schema, the definitions it may refer to, its named type.
type SharedDef<'a> = (&'a Value, DefScope<'a>, usize);
/// The `$defs` and `definitions` of a document.
type DefScope<'a> = [Option<&'a Value>; 2];

impl<'a> Builder<'a> {
    /// No types and no names taken yet.
    pub(crate) fn new() -> Self {
        Builder {
            objects: Vec::new(),
            types: Vec::new(),
            names: HashSet::new(),
            next_suffix: HashMap::new(),
            defs: HashMap::new(),
        }
    }

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
        self.defs.get(key)?.iter().find_map(|(d, s, id)| {
            (same_json(d, def) && same_closure(def, s, &scope)).then_some(*id)
        })
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

/// Whether `def` means the same in scopes `a` and `b`: every definition it reaches through
/// `#/$defs/…` and `#/definitions/…` references, directly or through others, is the same JSON
/// (or missing) in both.
fn same_closure(def: &Value, a: &DefScope<'_>, b: &DefScope<'_>) -> bool {
    let mut seen: HashSet<(usize, String)> = HashSet::new();
    let mut pending = vec![def];
    while let Some(value) = pending.pop() {
        let mut walk = vec![value];
        while let Some(node) = walk.pop() {
            match node {
                Value::Object(map) => {
                    if let Some(Value::String(target)) = map.get("$ref")
                        && let Some((scope, name)) = local_def(target)
                        && seen.insert((scope, name.clone()))
                    {
                        let in_a = a[scope].and_then(|d| d.get(&name));
                        let in_b = b[scope].and_then(|d| d.get(&name));
                        match (in_a, in_b) {
                            (Some(x), Some(y)) if same_json(x, y) => pending.push(x),
                            (None, None) => {}
                            _ => return false,
                        }
                    }
                    walk.extend(map.values());
                }
                Value::Array(items) => walk.extend(items),
                _ => {}
            }
        }
    }
    true
}

/// `#/$defs/Name` → (0, Name), `#/definitions/Name` → (1, Name), JSON-pointer escapes undone.
fn local_def(target: &str) -> Option<(usize, String)> {
    let (scope, name) = if let Some(name) = target.strip_prefix("#/$defs/") {
        (0, name)
    } else {
        (1, target.strip_prefix("#/definitions/")?)
    };
    if name.contains('/') {
        return None;
    }
    Some((scope, name.replace("~1", "/").replace("~0", "~")))
}

/// `a == b` for JSON values (object members in any order, as `serde_json` compares), without
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
