//! The catalog: every exposed tool of every source under its address `namespace.tool`, in a
//! deterministic order (namespace, then name), with the source's expose policy applied, plus
//! every tool an active skill names (`server.tool`) that the policy leaves out.

use std::collections::HashMap;
use std::sync::Arc;

use capa_config::{SkillConfig, SkillRequirement, ToolSelection};

pub use crate::address::ToolAddress;
use crate::names::edit_distance;
use crate::tool::ToolDefinition;

/// One exposed tool.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogTool {
    pub address: ToolAddress,
    /// The name the upstream knows the tool by.
    pub remote_name: String,
    /// The upstream's definition, with `name` set to the address and the description replaced by
    /// an explicit entry's, if it has one.
    pub definition: ToolDefinition,
}

/// What one source contributes to a catalog build.
#[derive(Debug)]
pub struct SourceTools<'a> {
    pub source_id: &'a str,
    pub selection: &'a ToolSelection,
    pub tools: &'a [ToolDefinition],
}

/// Every exposed tool.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Catalog {
    tools: Vec<CatalogTool>,
    by_address: HashMap<String, usize>,
    /// Policy names a source does not advertise (`except`/`exactly`/explicit entries).
    pub warnings: Vec<String>,
    /// `(skill, requirement)` for `server.tool` requirements of active skills that the connected
    /// server does not advertise.
    missing_skill_tools: Vec<(String, String)>,
}

impl Catalog {
    /// Applies each source's selection to its live tools.
    pub fn build<'a>(sources: impl IntoIterator<Item = SourceTools<'a>>) -> Self {
        Self::build_with_skills(sources, &[])
    }

    /// Applies each source's selection to its live tools, then adds every tool an active skill
    /// names as `server.tool` that the selection left out, under its remote name. `@server`
    /// requirements add nothing: they mean the server's exposed set.
    pub fn build_with_skills<'a>(
        sources: impl IntoIterator<Item = SourceTools<'a>>,
        skills: &[SkillConfig],
    ) -> Self {
        let mut tools = Vec::new();
        let mut warnings = Vec::new();
        let mut missing_skill_tools = Vec::new();
        for source in sources {
            let advertised = |name: &str| source.tools.iter().find(|t| t.name == name);
            let add = |tools: &mut Vec<CatalogTool>,
                       tool: &ToolDefinition,
                       name: &str,
                       description: Option<&String>| {
                let address = ToolAddress::new(source.source_id, name);
                let mut definition = tool.clone();
                definition.name = address.to_string();
                if let Some(description) = description {
                    definition.description = Some(description.clone());
                }
                tools.push(CatalogTool {
                    address,
                    remote_name: tool.name.clone(),
                    definition,
                });
            };
            let first = tools.len();
            match source.selection {
                ToolSelection::All => source
                    .tools
                    .iter()
                    .for_each(|t| add(&mut tools, t, &t.name, None)),
                ToolSelection::Nothing => {}
                ToolSelection::Except(names) => source
                    .tools
                    .iter()
                    .filter(|t| !names.contains(t.name.as_str()))
                    .for_each(|t| add(&mut tools, t, &t.name, None)),
                ToolSelection::Exactly(names) => source
                    .tools
                    .iter()
                    .filter(|t| names.contains(t.name.as_str()))
                    .for_each(|t| add(&mut tools, t, &t.name, None)),
                ToolSelection::Explicit(entries) => {
                    for entry in entries {
                        if let Some(tool) = advertised(&entry.remote) {
                            add(&mut tools, tool, &entry.id, entry.description.as_ref());
                        }
                    }
                }
            }
            for (skill, name) in required_tools(skills, source.source_id) {
                match advertised(name) {
                    // Already exposed (perhaps under an explicit entry's id): nothing to add.
                    Some(_) if tools[first..].iter().any(|t| t.remote_name == name) => {}
                    Some(tool) => add(&mut tools, tool, name, None),
                    None if !source.tools.is_empty() => missing_skill_tools
                        .push((skill.to_owned(), format!("{}.{name}", source.source_id))),
                    None => {}
                }
            }
            if !source.tools.is_empty() {
                for name in source.selection.named_tools() {
                    if advertised(name).is_none() {
                        warnings.push(format!(
                            "source `{}` does not advertise a tool named `{name}`",
                            source.source_id
                        ));
                    }
                }
            }
        }
        tools.sort_by(|a, b| a.address.cmp(&b.address));
        tools.dedup_by(|a, b| a.address == b.address);
        let by_address = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.address.to_string(), i))
            .collect();
        Self {
            tools,
            by_address,
            warnings,
            missing_skill_tools,
        }
    }

    /// `(skill, requirement)` for each `server.tool` requirement of an active skill that its
    /// connected server does not advertise. Sources that are not connected are not judged.
    pub fn missing_skill_tools(&self) -> &[(String, String)] {
        &self.missing_skill_tools
    }

    pub fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }

    pub fn get(&self, address: &str) -> Option<&CatalogTool> {
        self.by_address.get(address).map(|&i| &self.tools[i])
    }

    /// The position of `address` in [`Catalog::tools`]: with the catalog's `Arc`, a way to
    /// hold on to a tool without a copy of its definition.
    pub fn position(&self, address: &str) -> Option<usize> {
        self.by_address.get(address).copied()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Up to three addresses closest to `address` (edit distance; also matching camelCase and
    /// `snake_case` spellings), for "did you mean" hints.
    pub fn suggest(&self, address: &str) -> Vec<String> {
        // A bare tool name (`echo`) is most likely meant in one of the namespaces that have it.
        if !address.contains('.') {
            let exact: Vec<String> = self
                .tools
                .iter()
                .filter(|t| normalise(&t.address.name) == normalise(address))
                .take(3)
                .map(|t| t.address.to_string())
                .collect();
            if !exact.is_empty() {
                return exact;
            }
        }
        let wanted = normalise(address);
        let mut scored: Vec<(usize, &str)> = self
            .by_address
            .keys()
            .map(|a| (edit_distance(&wanted, &normalise(a)), a.as_str()))
            .filter(|(d, a)| *d <= (a.len() / 2).max(3))
            .collect();
        scored.sort_unstable();
        scored
            .into_iter()
            .take(3)
            .map(|(_, a)| a.to_owned())
            .collect()
    }
}

/// `(skill id, remote tool name)` of every `source.tool` requirement of the active skills, in
/// skill order, each tool once per skill.
fn required_tools<'a>(
    skills: &'a [SkillConfig],
    source_id: &'a str,
) -> impl Iterator<Item = (&'a str, &'a str)> {
    skills.iter().filter(|s| s.active).flat_map(move |skill| {
        skill.requires.iter().filter_map(move |r| match r {
            SkillRequirement::Tool { server, tool } if server == source_id => {
                Some((skill.id.as_str(), tool.as_str()))
            }
            _ => None,
        })
    })
}

/// Lower-case without `_` and `-`, so `createIssue` and `create_issue` meet.
fn normalise(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// A shared catalog, swapped whole when sources change.
pub type SharedCatalog = Arc<Catalog>;

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use capa_config::ExplicitTool;
    use serde_json::json;

    use super::*;

    fn tool(name: &str) -> ToolDefinition {
        serde_json::from_value(json!({"name": name, "description": format!("does {name}"), "inputSchema": {"type": "object"}}))
            .expect("tool")
    }

    #[test]
    fn expose_policies_pick_tools_and_keep_remote_names() {
        let tools = vec![tool("b"), tool("a"), tool("c")];
        let except = ToolSelection::Except(BTreeSet::from(["b".to_owned(), "zz".to_owned()]));
        let exactly = ToolSelection::Exactly(BTreeSet::from(["c".to_owned()]));
        let explicit = ToolSelection::Explicit(vec![ExplicitTool {
            id: "renamed".into(),
            remote: "a".into(),
            description: Some("mine".into()),
        }]);
        let catalog = Catalog::build([
            SourceTools {
                source_id: "two",
                selection: &exactly,
                tools: &tools,
            },
            SourceTools {
                source_id: "one",
                selection: &except,
                tools: &tools,
            },
            SourceTools {
                source_id: "three",
                selection: &explicit,
                tools: &tools,
            },
            SourceTools {
                source_id: "four",
                selection: &ToolSelection::Nothing,
                tools: &tools,
            },
        ]);
        let addresses: Vec<String> = catalog
            .tools()
            .iter()
            .map(|t| t.address.to_string())
            .collect();
        assert_eq!(addresses, vec!["one.a", "one.c", "three.renamed", "two.c"]);
        let renamed = catalog.get("three.renamed").expect("present");
        assert_eq!(renamed.remote_name, "a");
        assert_eq!(renamed.definition.description.as_deref(), Some("mine"));
        assert_eq!(
            catalog.warnings,
            vec!["source `one` does not advertise a tool named `zz`"]
        );
    }

    fn skill(id: &str, active: bool, requires: &[&str]) -> SkillConfig {
        SkillConfig {
            id: id.to_owned(),
            description: format!("does {id}"),
            requires: requires
                .iter()
                .map(|r| SkillRequirement::parse(r).expect("requirement"))
                .collect(),
            active,
            file: "c.yaml".into(),
            document: None,
        }
    }

    #[test]
    fn active_skills_add_the_tools_they_name_under_remote_names() {
        let tools = vec![tool("a"), tool("b"), tool("c"), tool("d")];
        let exactly = ToolSelection::Exactly(BTreeSet::from(["a".to_owned()]));
        let explicit = ToolSelection::Explicit(vec![ExplicitTool {
            id: "renamed".into(),
            remote: "a".into(),
            description: None,
        }]);
        let skills = [
            skill(
                "one",
                true,
                &["two.b", "@two", "two.zz", "three.a", "three.d"],
            ),
            skill("again", true, &["two.b"]),
            skill("off", false, &["two.c", "two.gone"]),
        ];
        let catalog = Catalog::build_with_skills(
            [
                SourceTools {
                    source_id: "two",
                    selection: &exactly,
                    tools: &tools,
                },
                SourceTools {
                    source_id: "three",
                    selection: &explicit,
                    tools: &tools,
                },
                SourceTools {
                    source_id: "four",
                    selection: &ToolSelection::Nothing,
                    tools: &[],
                },
            ],
            &skills,
        );
        let addresses: Vec<String> = catalog
            .tools()
            .iter()
            .map(|t| t.address.to_string())
            .collect();
        assert_eq!(
            addresses,
            vec!["three.d", "three.renamed", "two.a", "two.b"],
            "no two.c (inactive skill), three.a is three.renamed"
        );
        assert_eq!(
            catalog.get("two.b").map(|t| t.remote_name.as_str()),
            Some("b")
        );
        assert_eq!(
            catalog.missing_skill_tools(),
            [("one".to_owned(), "two.zz".to_owned())]
        );
        assert!(catalog.warnings.is_empty(), "{:?}", catalog.warnings);
        assert_eq!(Catalog::build_with_skills([], &skills), Catalog::default());
    }

    #[test]
    fn suggestions_match_other_spellings() {
        let tools = vec![tool("create_issue"), tool("list_issues")];
        let catalog = Catalog::build([SourceTools {
            source_id: "gh",
            selection: &ToolSelection::All,
            tools: &tools,
        }]);
        assert_eq!(catalog.suggest("gh.createIssue")[0], "gh.create_issue");
        assert_eq!(catalog.suggest("list_issues"), vec!["gh.list_issues"]);
    }

    #[test]
    fn addresses_split_at_the_first_dot() {
        let a = ToolAddress::parse("ns.tool.with.dots").expect("valid");
        assert_eq!(
            (a.namespace.as_str(), a.name.as_str()),
            ("ns", "tool.with.dots")
        );
        assert!(ToolAddress::parse("nodot").is_none());
        assert!(ToolAddress::parse(".x").is_none());
    }
}
