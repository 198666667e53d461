//! Before a file changes: the unified diff a person reads, and the question asked.
//!
//! The question goes through a [`Prompter`] the caller passes (a terminal, or a test's answers),
//! never straight to stdin from here.

use std::io::{BufRead, Write};

use similar::TextDiff;

use crate::client::Scope;
use crate::plan::FilePlan;

/// Asks a person a yes/no question.
pub trait Prompter {
    /// Shows `question` and waits for the answer; anything but yes is no.
    fn confirm(&mut self, question: &str) -> std::io::Result<bool>;
}

/// Asks on stderr and reads the answer from stdin.
#[derive(Debug, Default)]
pub struct TerminalPrompter;

impl Prompter for TerminalPrompter {
    fn confirm(&mut self, question: &str) -> std::io::Result<bool> {
        let mut stderr = std::io::stderr().lock();
        write!(stderr, "{question}")?;
        stderr.flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        Ok(matches!(
            answer.trim().to_ascii_lowercase().as_str(),
            "y" | "yes"
        ))
    }
}

/// The change as a unified diff (3 lines of context), both sides named `label`;
/// `/dev/null` stands for a file that does not exist before or after. Empty when nothing changes.
pub fn unified_diff(plan: &FilePlan, label: &str) -> String {
    if !plan.changes() {
        return String::new();
    }
    diff_texts(plan.old.as_deref(), plan.new.as_deref(), label)
}

/// The unified diff (3 lines of context) from `old` to `new`, both named `label`, `None` being
/// a file that does not exist (`/dev/null`). Empty when they are the same.
pub fn diff_texts(old: Option<&str>, new: Option<&str>, label: &str) -> String {
    if old == new {
        return String::new();
    }
    let from = match old {
        Some(_) => label.to_owned(),
        None => "/dev/null".to_owned(),
    };
    let to = match new {
        Some(_) => label.to_owned(),
        None => "/dev/null".to_owned(),
    };
    TextDiff::from_lines(old.unwrap_or(""), new.unwrap_or(""))
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string()
}

/// The question asked before changing the file; for the user's own Codex file it says so.
pub fn question(plan: &FilePlan, label: &str) -> String {
    match plan.file.scope {
        Scope::Project => "Apply? [y/N] ".to_owned(),
        Scope::User => format!(
            "{label} is your user-level {} config, read in every project, not only this one. Apply? [y/N] ",
            plan.file.client.display_name()
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::client::{Client, ClientFile, FileFormat};
    use crate::plan::Action;

    fn plan(old: Option<&str>, new: Option<&str>, action: Action, scope: Scope) -> FilePlan {
        FilePlan {
            file: ClientFile {
                client: Client::Codex,
                path: PathBuf::from("/home/u/.codex/config.toml"),
                scope,
                format: FileFormat::CodexToml,
            },
            old: old.map(str::to_owned),
            new: new.map(str::to_owned),
            action,
            note: None,
        }
    }

    #[test]
    fn diffs_show_changed_lines_with_context() {
        let p = plan(
            Some("a = 1\nb = 2\n"),
            Some("a = 1\nb = 2\n\n[mcp_servers.capa]\ncommand = \"capa\"\n"),
            Action::Updated,
            Scope::Project,
        );
        assert_eq!(
            unified_diff(&p, "config.toml"),
            "--- config.toml\n+++ config.toml\n@@ -1,2 +1,5 @@\n a = 1\n b = 2\n+\n+[mcp_servers.capa]\n+command = \"capa\"\n"
        );
        let created = plan(None, Some("x\n"), Action::Created, Scope::Project);
        assert_eq!(
            unified_diff(&created, "f"),
            "--- /dev/null\n+++ f\n@@ -0,0 +1 @@\n+x\n"
        );
        let deleted = plan(Some("x\n"), None, Action::Deleted, Scope::Project);
        assert_eq!(
            unified_diff(&deleted, "f"),
            "--- f\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        );
    }

    #[test]
    fn the_question_names_the_user_level_file() {
        let p = plan(None, Some("x\n"), Action::Created, Scope::User);
        assert_eq!(
            question(&p, "~/.codex/config.toml"),
            "~/.codex/config.toml is your user-level Codex config, read in every project, not only this one. Apply? [y/N] "
        );
        let p = plan(None, Some("x\n"), Action::Created, Scope::Project);
        assert_eq!(question(&p, ".mcp.json"), "Apply? [y/N] ");
    }
}
