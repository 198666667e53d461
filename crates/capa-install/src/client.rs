//! The MCP clients `capa install` configures, how it finds them in a project and which file each
//! reads.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::InstallError;

/// An MCP client with a configuration file capa can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Client {
    /// Claude Code: the project's `.mcp.json`.
    Claude,
    /// Cursor: `.cursor/mcp.json`.
    Cursor,
    /// VS Code: `.vscode/mcp.json`.
    Vscode,
    /// Codex: `[mcp_servers.…]` in the project's `.codex/config.toml`, or the user's.
    Codex,
}

impl Client {
    /// Every client, in the order install handles and reports them.
    pub const ALL: [Client; 4] = [
        Client::Claude,
        Client::Cursor,
        Client::Vscode,
        Client::Codex,
    ];

    /// The spelling of `--client` and of JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Cursor => "cursor",
            Self::Vscode => "vscode",
            Self::Codex => "codex",
        }
    }

    /// The product's name, for people.
    pub fn display_name(self) -> &'static str {
        match self {
            Self::Claude => "Claude Code",
            Self::Cursor => "Cursor",
            Self::Vscode => "VS Code",
            Self::Codex => "Codex",
        }
    }
}

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whose file it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Inside the project: read by the client only in this project.
    Project,
    /// The user's own file, read in every project (Codex's `~/.codex/config.toml`).
    User,
}

/// How a client's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// A JSON object whose `servers_key` maps names to entries; `typed` entries carry
    /// `"type": "stdio"` (VS Code).
    Json {
        servers_key: &'static str,
        typed: bool,
    },
    /// Codex's TOML: `[mcp_servers.<name>]` tables.
    CodexToml,
}

/// One client's configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFile {
    pub client: Client,
    /// Absolute path.
    pub path: PathBuf,
    pub scope: Scope,
    pub format: FileFormat,
}

/// Where to look: the project's directory and Codex's user directory.
#[derive(Debug, Clone)]
pub struct Locations {
    /// The directory holding the project's capabilities file.
    pub project_dir: PathBuf,
    /// `CODEX_HOME`, else `~/.codex`; `None` when neither is known.
    pub codex_home: Option<PathBuf>,
    /// Write Codex's user-wide `config.toml` instead of the project's `.codex/config.toml`
    /// (`capa install --user-file`). Without it a project install never touches the user's file.
    pub codex_user_file: bool,
}

impl Locations {
    /// The clients this project shows signs of: `.mcp.json` or `.claude/` (Claude Code),
    /// `.cursor/`, `.vscode/`, and `.codex/` in the project or Codex's user directory.
    pub fn detect(&self) -> Vec<Client> {
        let dir = &self.project_dir;
        Client::ALL
            .into_iter()
            .filter(|client| match client {
                Client::Claude => dir.join(".mcp.json").is_file() || dir.join(".claude").is_dir(),
                Client::Cursor => dir.join(".cursor").is_dir(),
                Client::Vscode => dir.join(".vscode").is_dir(),
                Client::Codex => {
                    dir.join(".codex").is_dir()
                        || self.codex_home.as_deref().is_some_and(Path::is_dir)
                }
            })
            .collect()
    }

    /// The file `client` reads its MCP servers from for this project. For Codex that is the
    /// project's `.codex/config.toml` (Codex reads it in trusted projects), and the user's
    /// `config.toml` in `codex_home` only with `codex_user_file` and no project `.codex/`.
    pub fn file(&self, client: Client) -> Result<ClientFile, InstallError> {
        let dir = &self.project_dir;
        let json = |path: PathBuf, servers_key, typed| ClientFile {
            client,
            path,
            scope: Scope::Project,
            format: FileFormat::Json { servers_key, typed },
        };
        Ok(match client {
            Client::Claude => json(dir.join(".mcp.json"), "mcpServers", false),
            Client::Cursor => json(dir.join(".cursor").join("mcp.json"), "mcpServers", false),
            Client::Vscode => json(dir.join(".vscode").join("mcp.json"), "servers", true),
            Client::Codex if dir.join(".codex").is_dir() || !self.codex_user_file => ClientFile {
                client,
                path: dir.join(".codex").join("config.toml"),
                scope: Scope::Project,
                format: FileFormat::CodexToml,
            },
            Client::Codex => ClientFile {
                client,
                path: self
                    .codex_home
                    .as_ref()
                    .ok_or(InstallError::NoCodexHome)?
                    .join("config.toml"),
                scope: Scope::User,
                format: FileFormat::CodexToml,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_found_by_their_directories() {
        let project = tempfile::tempdir().expect("tempdir");
        let home = tempfile::tempdir().expect("tempdir");
        let locations = Locations {
            project_dir: project.path().to_path_buf(),
            codex_home: Some(home.path().join("missing")),
            codex_user_file: false,
        };
        assert!(locations.detect().is_empty());
        std::fs::create_dir(project.path().join(".claude")).expect("mkdir");
        std::fs::create_dir(project.path().join(".vscode")).expect("mkdir");
        assert_eq!(locations.detect(), vec![Client::Claude, Client::Vscode]);
        let with_home = Locations {
            codex_home: Some(home.path().to_path_buf()),
            ..locations
        };
        assert_eq!(
            with_home.detect(),
            vec![Client::Claude, Client::Vscode, Client::Codex]
        );
    }

    #[test]
    fn codex_uses_the_user_file_only_when_asked_and_the_project_has_no_codex_dir() {
        let project = tempfile::tempdir().expect("tempdir");
        let project_only = Locations {
            project_dir: project.path().to_path_buf(),
            codex_home: Some(PathBuf::from("/home/u/.codex")),
            codex_user_file: false,
        };
        let file = project_only.file(Client::Codex).expect("file");
        assert_eq!(file.scope, Scope::Project);
        assert_eq!(file.path, project.path().join(".codex/config.toml"));
        let locations = Locations {
            codex_user_file: true,
            ..project_only
        };
        let user = locations.file(Client::Codex).expect("file");
        assert_eq!(user.scope, Scope::User);
        assert_eq!(user.path, PathBuf::from("/home/u/.codex/config.toml"));
        std::fs::create_dir(project.path().join(".codex")).expect("mkdir");
        let local = locations.file(Client::Codex).expect("file");
        assert_eq!(local.scope, Scope::Project);
        assert_eq!(local.path, project.path().join(".codex/config.toml"));
    }
}
