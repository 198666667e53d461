//! A tool's address: `namespace.tool`.

use std::fmt;

/// `namespace.tool`. The namespace is a source id (no dots); the name is the remote tool name or
/// the id of an explicit `tools:` entry, and may itself contain dots.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolAddress {
    pub namespace: String,
    pub name: String,
}

impl ToolAddress {
    pub fn new(namespace: &str, name: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// Splits at the first dot; `None` when there is no dot or either side is empty.
    pub fn parse(address: &str) -> Option<Self> {
        let (namespace, name) = address.split_once('.')?;
        (!namespace.is_empty() && !name.is_empty()).then(|| Self::new(namespace, name))
    }
}

impl fmt::Display for ToolAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.namespace, self.name)
    }
}
