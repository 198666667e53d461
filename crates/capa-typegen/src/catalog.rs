//! The catalog as `describe` sees it: tools grouped by namespace, namespace and member
//! identifiers, and the lookup of a target string (with suggestions when it names nothing).

use std::collections::{HashMap, HashSet};

use capa_domain::edit_distance;

use crate::ToolSpec;
use crate::error::DescribeError;
use crate::ident::member_names;
use crate::model::{Model, TypeRef};

pub(crate) struct Namespace<'a> {
    pub name: &'a str,
    pub ident: String,
}

/// What one target string resolved to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Namespace(usize),
    Tool(usize, usize),
    Type(usize, TypeRef),
}

pub(crate) struct Catalog<'s, 'a> {
    tools: &'s [ToolSpec<'a>],
    /// Namespaces in order of first appearance (catalog order).
    pub namespaces: Vec<Namespace<'a>>,
    /// Models are built on demand: only namespaces a request touches cost anything.
    models: HashMap<usize, Model<'a>>,
}

impl<'s, 'a> Catalog<'s, 'a> {
    /// Cheap for large catalogs: tools come sorted by namespace, so only the first tool of each
    /// run is looked up (an unsorted catalog still works, it only costs more lookups).
    pub(crate) fn new(tools: &'s [ToolSpec<'a>]) -> Self {
        let mut namespaces: Vec<Namespace<'a>> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut previous = None;
        for tool in tools {
            if previous == Some(tool.namespace) {
                continue;
            }
            previous = Some(tool.namespace);
            if seen.insert(tool.namespace) {
                namespaces.push(Namespace {
                    name: tool.namespace,
                    ident: String::new(),
                });
            }
        }
        // Namespace globals follow the same rules as members, in catalog order.
        let names: Vec<&str> = namespaces.iter().map(|n| n.name).collect();
        for (namespace, ident) in namespaces.iter_mut().zip(member_names(&names)) {
            namespace.ident = ident;
        }
        Catalog {
            tools,
            namespaces,
            models: HashMap::new(),
        }
    }

    /// The tools of a namespace, in catalog order.
    pub(crate) fn tools_of(&self, ns: usize) -> Vec<&'s ToolSpec<'a>> {
        let Some(namespace) = self.namespaces.get(ns) else {
            return Vec::new();
        };
        self.tools
            .iter()
            .filter(|t| t.namespace == namespace.name)
            .collect()
    }

    pub(crate) fn model(&mut self, ns: usize) -> Option<&Model<'a>> {
        if !self.models.contains_key(&ns) {
            let namespace = self.namespaces.get(ns)?;
            let (name, ident) = (namespace.name, namespace.ident.clone());
            let model = Model::build(name, ident, &self.tools_of(ns));
            self.models.insert(ns, model);
        }
        self.models.get(&ns)
    }

    /// A model [`Catalog::model`] already built.
    pub(crate) fn built_model(&self, ns: usize) -> Option<&Model<'a>> {
        self.models.get(&ns)
    }

    fn namespace_index(&self, name: &str) -> Option<usize> {
        self.namespaces
            .iter()
            .position(|n| n.name == name)
            .or_else(|| self.namespaces.iter().position(|n| n.ident == name))
    }

    pub(crate) fn resolve(&mut self, target: &str) -> Result<Target, DescribeError> {
        let target = target.trim();
        if let Some(ns) = self.namespace_index(target) {
            return Ok(Target::Namespace(ns));
        }
        let found = match target.split_once('.') {
            Some((ns_part, rest)) => match self.namespace_index(ns_part) {
                Some(ns) => self.resolve_in(ns, rest),
                None => None,
            },
            None => None,
        };
        found.ok_or_else(|| DescribeError::UnknownTarget {
            target: target.to_owned(),
            suggestions: self.suggest(target),
        })
    }

    fn resolve_in(&mut self, ns: usize, rest: &str) -> Option<Target> {
        if let Some(tool) = self.tools_of(ns).iter().position(|t| t.name == rest) {
            return Some(Target::Tool(ns, tool));
        }
        let model = self.model(ns)?;
        if let Some(tool) = model.tools.iter().position(|t| t.member == rest) {
            return Some(Target::Tool(ns, tool));
        }
        model.by_name.get(rest).map(|r| Target::Type(ns, *r))
    }

    /// The closest addresses: tool names compared part by part, so a misspelt namespace
    /// (`gh.create_issue`) still finds `github.create_issue`.
    fn suggest(&mut self, target: &str) -> Vec<String> {
        let target = target.to_ascii_lowercase();
        let (ns_part, rest) = target.split_once('.').unwrap_or(("", target.as_str()));
        let mut scored: Vec<(usize, String)> = Vec::new();
        let ns_cost = |name: &str| {
            if ns_part.is_empty() {
                2
            } else {
                edit_distance(ns_part, &name.to_ascii_lowercase()).min(2)
            }
        };
        for namespace in &self.namespaces {
            scored.push((
                edit_distance(&target, namespace.name),
                namespace.name.to_owned(),
            ));
        }
        let mut cost_of_ns = (None, 0);
        for tool in self.tools {
            if cost_of_ns.0 != Some(tool.namespace) {
                cost_of_ns = (Some(tool.namespace), ns_cost(tool.namespace));
            }
            let cost = cost_of_ns.1 + edit_distance(rest, &tool.name.to_ascii_lowercase());
            scored.push((cost, format!("{}.{}", tool.namespace, tool.name)));
        }
        // Types of a known namespace (`github.Isue`).
        if let Some(ns) = self.namespace_index(ns_part)
            && let Some(model) = self.model(ns)
        {
            for name in model.by_name.keys() {
                let cost = edit_distance(rest, &name.to_ascii_lowercase());
                scored.push((cost, format!("{}.{name}", model.namespace)));
            }
        }
        let limit = (target.chars().count() / 3).max(3);
        scored.retain(|(cost, _)| *cost <= limit);
        scored.sort();
        scored.dedup_by(|a, b| a.1 == b.1);
        scored
            .into_iter()
            .take(5)
            .map(|(_, address)| address)
            .collect()
    }
}
