//! The `capa` entry: what install writes into a client's file, and how capa knows an entry it
//! wrote before (so that `toolExposure: none` takes out only that).

use std::path::Path;

/// The name of capa's entry in every client's server list.
pub const ENTRY_NAME: &str = "capa";

/// Program names capa's own entries run (`capa`, or the product's full name).
const CAPA_PROGRAMS: &[&str] = &["capa", "capa.exe", "capabilities", "capabilities.exe"];

/// The environment variable of a paired client's key, in its entry's `env`
/// (docs/security.md, "Who may say yes").
pub const CLIENT_KEY_ENV: &str = "CAPA_CLIENT_KEY";

/// The command a client runs to reach this project's hub: `capa mcp` with where the project is.
#[derive(Clone, PartialEq, Eq)]
pub struct CapaEntry {
    /// Absolute path of the `capa` program.
    pub command: String,
    pub args: Vec<String>,
    /// A paired client's key, written as `env.CAPA_CLIENT_KEY` beside the user's own
    /// variables: only into user-wide files (a project's files may be committed).
    pub client_key: Option<String>,
}

impl std::fmt::Debug for CapaEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CapaEntry")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("client_key", &self.client_key.as_ref().map(|_| "[secret]"))
            .finish()
    }
}

impl CapaEntry {
    /// `capa mcp --project DIR`: the client may start it from any directory.
    pub fn for_project(exe: &Path, project_dir: &Path) -> Self {
        Self {
            command: exe.display().to_string(),
            args: vec![
                "mcp".into(),
                "--project".into(),
                project_dir.display().to_string(),
            ],
            client_key: None,
        }
    }

    /// `capa mcp`: the global hub's entry, in a client's user-wide file.
    pub fn global(exe: &Path) -> Self {
        Self::global_profile(exe, None)
    }

    /// `capa mcp --profile NAME`: the global hub's entry for one of its named profiles
    /// (docs/profiles.md); `None` is the default profile, plain `capa mcp`.
    pub fn global_profile(exe: &Path, profile: Option<&str>) -> Self {
        let mut args = vec!["mcp".to_owned()];
        if let Some(name) = profile {
            args.extend(["--profile".to_owned(), name.to_owned()]);
        }
        Self {
            command: exe.display().to_string(),
            args,
            client_key: None,
        }
    }

    /// The profile a global entry's arguments (`mcp`, `mcp --profile NAME`) serve: `Some(None)`
    /// for the default profile, `None` when they are not a global entry's (`--project`, …).
    pub fn global_profile_of(args: &[String]) -> Option<Option<String>> {
        match args {
            [mcp] if mcp == "mcp" => Some(None),
            [mcp, flag, name] if mcp == "mcp" && flag == "--profile" => Some(Some(name.clone())),
            _ => None,
        }
    }

    /// `capa mcp --config FILE`, for a capabilities file that `--project` would not find (one
    /// passed with `--config` under another name).
    pub fn for_config_file(exe: &Path, file: &Path) -> Self {
        Self {
            command: exe.display().to_string(),
            args: vec!["mcp".into(), "--config".into(), file.display().to_string()],
            client_key: None,
        }
    }

    /// This entry with a paired client's key.
    #[must_use]
    pub fn with_client_key(mut self, key: String) -> Self {
        self.client_key = Some(key);
        self
    }

    /// The entry as a JSON object (`typed` adds VS Code's `"type": "stdio"`). The client key
    /// is not in it: [`CapaEntry::set_client_key_json`] merges it into the entry's `env`.
    pub fn to_json(&self, typed: bool) -> serde_json::Map<String, serde_json::Value> {
        let mut map = serde_json::Map::new();
        if typed {
            map.insert("type".into(), "stdio".into());
        }
        map.insert("command".into(), self.command.clone().into());
        map.insert("args".into(), self.args.clone().into());
        map
    }

    /// Puts the client key into `entry`'s `env`, keeping the user's other variables; an `env`
    /// that is not an object is replaced.
    pub fn set_client_key_json(&self, entry: &mut serde_json::Map<String, serde_json::Value>) {
        let Some(key) = &self.client_key else {
            return;
        };
        let env = entry
            .entry("env")
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if !env.is_object() {
            *env = serde_json::Value::Object(serde_json::Map::new());
        }
        if let Some(env) = env.as_object_mut() {
            env.insert(CLIENT_KEY_ENV.into(), key.clone().into());
        }
    }
}

/// What install does to each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// Write the `capa` entry, or bring it up to date (every mode but `none`).
    Register,
    /// Take out the `capa` entry if capa wrote it (`toolExposure: none`).
    Unregister,
}

/// Whether an entry is one capa wrote: it runs `capa` (or `capabilities`) with `mcp` first.
/// An entry named `capa` that runs anything else is the user's and stays.
pub fn written_by_capa(command: Option<&str>, args: &[&str]) -> bool {
    let program = command
        .and_then(|c| c.rsplit(['/', '\\']).next())
        .unwrap_or("");
    args.first() == Some(&"mcp") && CAPA_PROGRAMS.contains(&program)
}

/// Whether `Unregister` takes out an entry with this command and these arguments. In a user-level
/// file, shared by every project, only the entry that points at this project (`only_args`).
pub fn removable(command: Option<&str>, args: &[&str], only_args: Option<&[String]>) -> bool {
    written_by_capa(command, args)
        && only_args.is_none_or(|wanted| wanted.iter().map(String::as_str).eq(args.iter().copied()))
}

/// What a format's edit comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// The file already says what it should.
    Unchanged,
    /// There is a `capa` entry, but capa did not write it (or, in a user-level file, it is another
    /// project's): `none` leaves it.
    NotOurs,
    /// The file's new text.
    Write(String),
    /// capa's entry was all the file held; the file can go.
    Emptied,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capa_recognises_only_its_own_entries() {
        assert!(written_by_capa(
            Some("/usr/bin/capa"),
            &["mcp", "--project", "/p"]
        ));
        assert!(written_by_capa(Some("C:\\bin\\capa.exe"), &["mcp"]));
        assert!(written_by_capa(Some("capabilities"), &["mcp"]));
        assert!(!written_by_capa(Some("/usr/bin/capa"), &["hub", "serve"]));
        assert!(!written_by_capa(Some("npx"), &["mcp"]));
        assert!(!written_by_capa(Some("/opt/mycapa"), &["mcp"]));
        assert!(!written_by_capa(None, &["mcp"]));
        let mine = ["mcp".to_owned(), "--project".to_owned(), "/p".to_owned()];
        assert!(removable(
            Some("capa"),
            &["mcp", "--project", "/p"],
            Some(&mine)
        ));
        assert!(!removable(
            Some("capa"),
            &["mcp", "--project", "/q"],
            Some(&mine)
        ));
        assert!(removable(Some("capa"), &["mcp", "--project", "/q"], None));
    }
}
