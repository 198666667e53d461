//! The MCP clients' own user-wide files (read in every project), where the global hub's `capa`
//! entry goes: Claude Code's `~/.claude.json`, Claude Desktop's `claude_desktop_config.json`,
//! Cursor's `~/.cursor/mcp.json`, VS Code's user `mcp.json` and Codex's `~/.codex/config.toml`.
//!
//! [`user_files`] is the one place that knows where each client keeps that file on each OS; the
//! Clients page, `capa install` and importing sources from a client's config all use it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::client::FileFormat;

/// A client with a user-wide MCP configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UserClient {
    ClaudeCode,
    ClaudeDesktop,
    Cursor,
    Vscode,
    Codex,
}

impl UserClient {
    /// Every client, in the order the Clients page lists them.
    pub const ALL: [UserClient; 5] = [
        UserClient::ClaudeCode,
        UserClient::ClaudeDesktop,
        UserClient::Cursor,
        UserClient::Vscode,
        UserClient::Codex,
    ];

    /// The id in the API and URLs: `claude-code`, `claude-desktop`, `cursor`, `vscode`, `codex`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::ClaudeDesktop => "claude-desktop",
            Self::Cursor => "cursor",
            Self::Vscode => "vscode",
            Self::Codex => "codex",
        }
    }

    /// The client with this id.
    pub fn parse(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == id)
    }

    /// The product's name, for people.
    pub fn display_name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Claude Code",
            Self::ClaudeDesktop => "Claude Desktop",
            Self::Cursor => "Cursor",
            Self::Vscode => "VS Code",
            Self::Codex => "Codex",
        }
    }

    /// The client's command-line program, whose presence on `PATH` also means it is installed.
    pub fn program(self) -> Option<&'static str> {
        match self {
            Self::ClaudeCode => Some("claude"),
            Self::ClaudeDesktop => None,
            Self::Cursor => Some("cursor"),
            Self::Vscode => Some("code"),
            Self::Codex => Some("codex"),
        }
    }
}

impl std::fmt::Display for UserClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The operating systems whose locations differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    /// The OS this program was built for (other Unixes count as Linux).
    pub fn current() -> Self {
        if cfg!(target_os = "macos") {
            Self::MacOs
        } else if cfg!(windows) {
            Self::Windows
        } else {
            Self::Linux
        }
    }
}

/// What locates the user's files: the home directory and the variables that move them. Built
/// from the environment by [`UserHome::from_env`], or by hand in tests.
#[derive(Debug, Clone)]
pub struct UserHome {
    pub os: Os,
    /// `HOME` (Windows: `USERPROFILE`).
    pub home: PathBuf,
    /// `XDG_CONFIG_HOME` (Linux; default `~/.config`).
    pub xdg_config_home: Option<PathBuf>,
    /// `APPDATA` (Windows; default `~\AppData\Roaming`).
    pub appdata: Option<PathBuf>,
    /// `CODEX_HOME` (default `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `CLAUDE_CONFIG_DIR`: Claude Code then keeps `.claude.json` there instead of in the home.
    pub claude_config_dir: Option<PathBuf>,
    /// The directories of `PATH`, where the clients' programs are looked for.
    pub path: Vec<PathBuf>,
}

impl UserHome {
    /// This process's home and variables; `None` without a home directory. Empty and relative
    /// values are ignored, as the clients themselves do.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let os = Os::current();
        let home = match os {
            Os::Windows => var("USERPROFILE").or_else(|| var("HOME")),
            _ => var("HOME"),
        }?;
        Some(Self {
            os,
            home,
            xdg_config_home: var("XDG_CONFIG_HOME"),
            appdata: var("APPDATA"),
            codex_home: var("CODEX_HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            path: std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default(),
        })
    }

    /// Where desktop apps keep their settings: `~/.config` (or `XDG_CONFIG_HOME`),
    /// `~/Library/Application Support`, or `%APPDATA%`.
    pub fn app_config_dir(&self) -> PathBuf {
        match self.os {
            Os::Linux => self
                .xdg_config_home
                .clone()
                .unwrap_or_else(|| self.home.join(".config")),
            Os::MacOs => self.home.join("Library").join("Application Support"),
            Os::Windows => self
                .appdata
                .clone()
                .unwrap_or_else(|| self.home.join("AppData").join("Roaming")),
        }
    }

    /// The full path of `program` when it is on `PATH`.
    pub fn find_program(&self, program: &str) -> Option<PathBuf> {
        let names: Vec<String> = match self.os {
            Os::Windows => [".exe", ".cmd", ".bat", ""]
                .iter()
                .map(|ext| format!("{program}{ext}"))
                .collect(),
            _ => vec![program.to_owned()],
        };
        self.path
            .iter()
            .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
            .find(|candidate| is_program(candidate))
    }
}

#[cfg(unix)]
fn is_program(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_program(path: &Path) -> bool {
    path.is_file()
}

/// One client's user-wide MCP file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserFile {
    pub client: UserClient,
    /// Absolute path (the file may not exist).
    pub path: PathBuf,
    pub format: FileFormat,
    /// A directory whose presence means the client is installed (or has run) even without the
    /// file: `~/.claude`, `~/.config/Claude`, `~/.cursor`, `~/.config/Code`, `~/.codex`.
    pub app_dir: PathBuf,
}

impl UserFile {
    /// Whether the client looks installed: its file, its directory, or its program on `PATH`.
    pub fn detected(&self, home: &UserHome) -> bool {
        self.path.is_file()
            || self.app_dir.is_dir()
            || self
                .client
                .program()
                .is_some_and(|p| home.find_program(p).is_some())
    }
}

/// Each client's user-wide MCP file, in [`UserClient::ALL`]'s order:
///
/// | client | Linux | macOS | Windows | servers key |
/// |---|---|---|---|---|
/// | Claude Code | `~/.claude.json` | same | same | `mcpServers` |
/// | Claude Desktop | `~/.config/Claude/claude_desktop_config.json` | `~/Library/Application Support/Claude/…` | `%APPDATA%\Claude\…` | `mcpServers` |
/// | Cursor | `~/.cursor/mcp.json` | same | same | `mcpServers` |
/// | VS Code | `~/.config/Code/User/mcp.json` | `~/Library/Application Support/Code/User/mcp.json` | `%APPDATA%\Code\User\mcp.json` | `servers` (typed) |
/// | Codex | `~/.codex/config.toml` (`CODEX_HOME`) | same | same | `[mcp_servers.*]` |
///
/// `CLAUDE_CONFIG_DIR` moves Claude Code's file to `$CLAUDE_CONFIG_DIR/.claude.json`,
/// `XDG_CONFIG_HOME` moves `~/.config`.
pub fn user_files(home: &UserHome) -> Vec<UserFile> {
    UserClient::ALL
        .into_iter()
        .map(|client| user_file(home, client))
        .collect()
}

/// One client's user-wide file (see [`user_files`]).
pub fn user_file(home: &UserHome, client: UserClient) -> UserFile {
    let mcp_servers = FileFormat::Json {
        servers_key: "mcpServers",
        typed: false,
    };
    let (path, format, app_dir) = match client {
        UserClient::ClaudeCode => {
            let dir = home.claude_config_dir.as_ref().unwrap_or(&home.home);
            (
                dir.join(".claude.json"),
                mcp_servers,
                home.home.join(".claude"),
            )
        }
        UserClient::ClaudeDesktop => {
            let dir = home.app_config_dir().join("Claude");
            (dir.join("claude_desktop_config.json"), mcp_servers, dir)
        }
        UserClient::Cursor => {
            let dir = home.home.join(".cursor");
            (dir.join("mcp.json"), mcp_servers, dir)
        }
        UserClient::Vscode => {
            let dir = home.app_config_dir().join("Code");
            let format = FileFormat::Json {
                servers_key: "servers",
                typed: true,
            };
            (dir.join("User").join("mcp.json"), format, dir)
        }
        UserClient::Codex => {
            let dir = home
                .codex_home
                .clone()
                .unwrap_or_else(|| home.home.join(".codex"));
            (dir.join("config.toml"), FileFormat::CodexToml, dir)
        }
    };
    UserFile {
        client,
        path,
        format,
        app_dir,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home(os: Os, root: &str) -> UserHome {
        UserHome {
            os,
            home: PathBuf::from(root),
            xdg_config_home: None,
            appdata: None,
            codex_home: None,
            claude_config_dir: None,
            path: Vec::new(),
        }
    }

    fn paths(home: &UserHome) -> Vec<PathBuf> {
        user_files(home).into_iter().map(|f| f.path).collect()
    }

    #[test]
    fn each_os_has_its_locations() {
        assert_eq!(
            paths(&home(Os::Linux, "/home/u")),
            [
                "/home/u/.claude.json",
                "/home/u/.config/Claude/claude_desktop_config.json",
                "/home/u/.cursor/mcp.json",
                "/home/u/.config/Code/User/mcp.json",
                "/home/u/.codex/config.toml",
            ]
            .map(PathBuf::from)
        );
        assert_eq!(
            paths(&home(Os::MacOs, "/Users/u"))[1],
            PathBuf::from("/Users/u/Library/Application Support/Claude/claude_desktop_config.json")
        );
        let mut windows = home(Os::Windows, "C:/Users/u");
        windows.appdata = Some(PathBuf::from("D:/roaming"));
        assert_eq!(
            paths(&windows)[3],
            PathBuf::from("D:/roaming/Code/User/mcp.json")
        );
    }

    #[test]
    fn variables_move_the_files() {
        let mut moved = home(Os::Linux, "/home/u");
        moved.xdg_config_home = Some(PathBuf::from("/xdg"));
        moved.codex_home = Some(PathBuf::from("/codex"));
        moved.claude_config_dir = Some(PathBuf::from("/claude"));
        assert_eq!(
            paths(&moved),
            [
                "/claude/.claude.json",
                "/xdg/Claude/claude_desktop_config.json",
                "/home/u/.cursor/mcp.json",
                "/xdg/Code/User/mcp.json",
                "/codex/config.toml",
            ]
            .map(PathBuf::from)
        );
    }

    #[test]
    fn a_client_is_detected_by_its_file_directory_or_program() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut h = home(Os::Linux, &dir.path().display().to_string());
        let claude = user_file(&h, UserClient::ClaudeCode);
        assert!(!claude.detected(&h));
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("mkdir");
        std::fs::write(bin.join("claude"), "#!/bin/sh\n").expect("write");
        h.path = vec![bin.clone()];
        assert!(!claude.detected(&h), "not executable");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(bin.join("claude"), std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
            assert!(claude.detected(&h));
        }
        let cursor = user_file(&h, UserClient::Cursor);
        assert!(!cursor.detected(&h));
        std::fs::create_dir(dir.path().join(".cursor")).expect("mkdir");
        assert!(cursor.detected(&h));
        assert_eq!(
            UserClient::parse("claude-desktop"),
            Some(UserClient::ClaudeDesktop)
        );
        assert_eq!(UserClient::parse("claude"), None);
    }
}
