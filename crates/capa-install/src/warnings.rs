//! What install tells a person about the project's servers and policies (tool-exposure spec,
//! "Server tool exposure"): names in `expose: except|exactly` lists a server does not advertise,
//! servers whose `expose` policy is off because top-level `tools:` entries point at them, and
//! skills that require tools their server does not advertise.
//!
//! The server's tool list is read at install for these checks and never written anywhere.

use capa_config::ToolSelection;
use serde::Serialize;

/// Which kind of warning, for scripts (`--json`); people read the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// A name in `expose: except|exactly` (or a top-level `tools:` entry) the server does not
    /// advertise.
    NotAdvertised,
    /// Top-level `tools:` entries point at the server, so its `expose` policy is ignored.
    PolicyOff,
    /// The server could not be listed, so its names were not checked.
    Unchecked,
    /// A skill requires a tool its server does not advertise.
    SkillToolMissing,
    /// A warning from reading the capabilities file.
    Config,
}

/// One warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallWarning {
    pub kind: WarningKind,
    /// The server it is about, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub message: String,
}

impl InstallWarning {
    fn about(kind: WarningKind, server: &str, message: String) -> Self {
        Self {
            kind,
            server: Some(server.to_owned()),
            message,
        }
    }
}

/// One server as install saw it.
#[derive(Debug, Clone, Copy)]
pub struct ServerTools<'a> {
    pub id: &'a str,
    pub selection: &'a ToolSelection,
    /// The remote names the server advertised; `None` when it could not be listed.
    pub advertised: Option<&'a [String]>,
}

/// The warnings about each server's policy, in server order.
pub fn server_warnings(servers: &[ServerTools<'_>]) -> Vec<InstallWarning> {
    let mut warnings = Vec::new();
    for server in servers {
        let id = server.id;
        let missing = |name: &str| {
            server
                .advertised
                .is_some_and(|a| !a.iter().any(|t| t == name))
        };
        match server.selection {
            ToolSelection::Except(names) | ToolSelection::Exactly(names) => {
                let policy = match server.selection {
                    ToolSelection::Except(_) => "except",
                    _ => "exactly",
                };
                for name in names.iter().filter(|n| missing(n)) {
                    warnings.push(InstallWarning::about(
                        WarningKind::NotAdvertised,
                        id,
                        format!(
                            "server `{id}` does not advertise `{name}`, named in its `expose: {policy}` list"
                        ),
                    ));
                }
                if server.advertised.is_none() {
                    warnings.push(InstallWarning::about(
                        WarningKind::Unchecked,
                        id,
                        format!(
                            "server `{id}` could not be listed, so the names in its `expose: {policy}` list were not checked"
                        ),
                    ));
                }
            }
            ToolSelection::Explicit(entries) => {
                let count = match entries.len() {
                    1 => "that entry is".to_owned(),
                    n => format!("those {n} entries are"),
                };
                warnings.push(InstallWarning::about(
                    WarningKind::PolicyOff,
                    id,
                    format!(
                        "server `{id}`: top-level `tools:` entries point at it, so its `expose` policy is off; only {count} exposed"
                    ),
                ));
                for entry in entries.iter().filter(|e| missing(&e.remote)) {
                    warnings.push(InstallWarning::about(
                        WarningKind::NotAdvertised,
                        id,
                        format!(
                            "server `{id}` does not advertise `{}`, named by the top-level `tools:` entry `{id}.{}`",
                            entry.remote, entry.id
                        ),
                    ));
                }
                if server.advertised.is_none() {
                    warnings.push(InstallWarning::about(
                        WarningKind::Unchecked,
                        id,
                        format!(
                            "server `{id}` could not be listed, so the tools its top-level `tools:` entries name were not checked"
                        ),
                    ));
                }
            }
            ToolSelection::All | ToolSelection::Nothing => {}
        }
    }
    warnings
}

/// Skills whose requirements name tools their server does not advertise, as `(skill, tool)`
/// pairs with the tool written `server.tool`.
pub fn skill_warnings(missing: &[(String, String)]) -> Vec<InstallWarning> {
    missing
        .iter()
        .map(|(skill, tool)| InstallWarning {
            kind: WarningKind::SkillToolMissing,
            server: tool.split_once('.').map(|(server, _)| server.to_owned()),
            message: format!(
                "skill `{skill}` requires `{tool}`, which its server does not advertise"
            ),
        })
        .collect()
}

/// A warning from reading the capabilities file.
pub fn config_warning(message: &str) -> InstallWarning {
    InstallWarning {
        kind: WarningKind::Config,
        server: None,
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use capa_config::ExplicitTool;

    use super::*;

    fn names(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn messages(warnings: &[InstallWarning]) -> Vec<&str> {
        warnings.iter().map(|w| w.message.as_str()).collect()
    }

    #[test]
    fn names_a_server_lacks_are_warned_about_and_the_rest_is_quiet() {
        let advertised = vec!["echo".to_owned(), "get-sum".to_owned()];
        let exactly = ToolSelection::Exactly(names(&["echo", "nope"]));
        let except = ToolSelection::Except(names(&["get-sum", "gone"]));
        let warnings = server_warnings(&[
            ServerTools {
                id: "a",
                selection: &exactly,
                advertised: Some(&advertised),
            },
            ServerTools {
                id: "b",
                selection: &except,
                advertised: Some(&advertised),
            },
            ServerTools {
                id: "c",
                selection: &ToolSelection::All,
                advertised: None,
            },
            ServerTools {
                id: "d",
                selection: &exactly,
                advertised: None,
            },
        ]);
        assert_eq!(
            messages(&warnings),
            vec![
                "server `a` does not advertise `nope`, named in its `expose: exactly` list",
                "server `b` does not advertise `gone`, named in its `expose: except` list",
                "server `d` could not be listed, so the names in its `expose: exactly` list were not checked",
            ]
        );
        assert_eq!(warnings[0].kind, WarningKind::NotAdvertised);
        assert_eq!(warnings[2].kind, WarningKind::Unchecked);
    }

    #[test]
    fn top_level_tools_entries_turn_the_policy_off() {
        let advertised = vec!["echo".to_owned()];
        let explicit = ToolSelection::Explicit(vec![
            ExplicitTool {
                id: "say".into(),
                remote: "echo".into(),
                description: None,
            },
            ExplicitTool {
                id: "add".into(),
                remote: "add".into(),
                description: None,
            },
        ]);
        let warnings = server_warnings(&[ServerTools {
            id: "e",
            selection: &explicit,
            advertised: Some(&advertised),
        }]);
        assert_eq!(
            messages(&warnings),
            vec![
                "server `e`: top-level `tools:` entries point at it, so its `expose` policy is off; only those 2 entries are exposed",
                "server `e` does not advertise `add`, named by the top-level `tools:` entry `e.add`",
            ]
        );
    }

    #[test]
    fn skills_name_the_missing_tool() {
        let warnings = skill_warnings(&[("triage".into(), "github.create_issue".into())]);
        assert_eq!(
            messages(&warnings),
            vec![
                "skill `triage` requires `github.create_issue`, which its server does not advertise"
            ]
        );
        assert_eq!(warnings[0].server.as_deref(), Some("github"));
    }
}
