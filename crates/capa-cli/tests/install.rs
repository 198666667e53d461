//! `capa install` as a person runs it: the real binary in temp projects that already hold
//! hand-written client configs, with server-everything as the project's server. Every written
//! file is read back with a real parser (`serde_json`, `toml_edit`).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// A temp directory with the project in `p/`, and everything capa or Codex might touch beside it.
struct Setup {
    root: tempfile::TempDir,
}

impl Setup {
    /// The project with `capabilities` as its file, trusted by the person at a terminal (the
    /// question `capa tools list` asks there): a project's file runs nothing before.
    fn new(capabilities: &str) -> Self {
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(root.path().join("p")).expect("mkdir");
        std::fs::create_dir_all(root.path().join("home")).expect("mkdir");
        let setup = Self { root };
        setup.write("capabilities.yaml", capabilities);
        setup.answer_yes_at_terminal(&["tools", "list"]);
        setup
    }

    /// Rewrites the project file, and the person trusts it again (`capa config trust`).
    fn rewrite_trusted(&self, capabilities: &str) {
        self.write("capabilities.yaml", capabilities);
        self.answer_yes_at_terminal(&["config", "trust"]);
    }

    /// `capa --project <project> <args>` on a pseudo-terminal, the person answering yes; it
    /// must succeed.
    fn answer_yes_at_terminal(&self, args: &[&str]) {
        let project = self.project().display().to_string();
        let mut all = vec!["--project", project.as_str()];
        all.extend_from_slice(args);
        let out = support::at_terminal(self.root.path(), &all, "y\n");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }

    /// The project directory, as `capa` sees it (symlinks resolved).
    fn project(&self) -> PathBuf {
        self.root.path().join("p").canonicalize().expect("project")
    }

    fn codex_home(&self) -> PathBuf {
        self.root.path().join("codex-home")
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.project().join(relative);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }

    fn read(&self, relative: &str) -> Option<String> {
        std::fs::read_to_string(self.project().join(relative)).ok()
    }

    fn json(&self, relative: &str) -> Value {
        serde_json::from_str(&self.read(relative).expect("file exists")).expect("valid JSON")
    }

    /// Runs `capa` in the project with stdin closed (not a terminal).
    fn capa(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_capa"))
            .args(args)
            .current_dir(self.project())
            .env("CAPA_DATA_DIR", self.root.path().join("data"))
            .env("CAPA_CONFIG_DIR", self.root.path().join("config"))
            .env("HOME", self.root.path().join("home"))
            .env("CODEX_HOME", self.codex_home())
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .output()
            .expect("capa runs")
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn everything_js() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.exists(),
        "{} is missing: run `npm ci` (scripts/test does)",
        path.display()
    );
    path.canonicalize().expect("path").display().to_string()
}

/// A `servers:` entry running server-everything over stdio, with extra YAML lines.
fn everything_server(id: &str, extra: &str) -> String {
    format!(
        "  - id: {id}\n    type: mcp\n{extra}    def:\n      command: node\n      args: [{:?}, stdio]\n",
        everything_js()
    )
}

fn capa_exe() -> String {
    Path::new(env!("CARGO_BIN_EXE_capa"))
        .canonicalize()
        .expect("capa")
        .display()
        .to_string()
}

fn capa_args(project: &Path) -> Value {
    json!(["mcp", "--project", project.display().to_string()])
}

const CLAUDE: &str = r#"{
    "mcpServers": {
        "other": {"command": "npx", "args": ["-y", "other-server"], "env": {"TOKEN": "x"}}
    },
    "someUnknownKey": {"keep": [1, 2, 3]}
}"#;
const CURSOR: &str = r#"{"mcpServers": {"other": {"url": "https://example.com/mcp"}}}"#;
const VSCODE: &str =
    r#"{"inputs": [], "servers": {"other": {"type": "http", "url": "https://example.com/mcp"}}}"#;
const CODEX: &str = "# Codex settings for this project\nmodel = \"o3\" # keep this comment\n\n[mcp_servers.other]\n# the other server\ncommand = \"npx\"\nargs = [\"-y\", \"other-server\"]\n";

fn hand_written(setup: &Setup) {
    setup.write(".mcp.json", CLAUDE);
    setup.write(".cursor/mcp.json", CURSOR);
    setup.write(".vscode/mcp.json", VSCODE);
    setup.write(".codex/config.toml", CODEX);
}

const CLIENT_FILES: [&str; 4] = [
    ".mcp.json",
    ".cursor/mcp.json",
    ".vscode/mcp.json",
    ".codex/config.toml",
];

fn snapshot(setup: &Setup) -> Vec<Option<String>> {
    CLIENT_FILES.iter().map(|f| setup.read(f)).collect()
}

#[test]
fn install_merges_into_hand_written_configs_is_idempotent_and_none_removes_only_capa() {
    let setup = Setup::new(&format!(
        "servers:\n{}",
        everything_server("everything", "")
    ));
    hand_written(&setup);
    let project = setup.project();

    let out = setup.capa(&["install", "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.lines()
            .any(|l| l.starts_with("everything: ") && l.ends_with(" tools")),
        "{err}"
    );
    let capa = json!({"command": capa_exe(), "args": capa_args(&project)});

    let claude = setup.json(".mcp.json");
    let original: Value = serde_json::from_str(CLAUDE).expect("json");
    assert_eq!(
        claude["mcpServers"]["other"],
        original["mcpServers"]["other"]
    );
    assert_eq!(claude["someUnknownKey"], original["someUnknownKey"]);
    assert_eq!(claude["mcpServers"]["capa"], capa);

    let cursor = setup.json(".cursor/mcp.json");
    assert_eq!(
        cursor["mcpServers"]["other"],
        json!({"url": "https://example.com/mcp"})
    );
    assert_eq!(cursor["mcpServers"]["capa"], capa);

    let vscode = setup.json(".vscode/mcp.json");
    assert_eq!(vscode["inputs"], json!([]));
    assert_eq!(
        vscode["servers"]["other"],
        json!({"type": "http", "url": "https://example.com/mcp"})
    );
    assert_eq!(
        vscode["servers"]["capa"],
        json!({"type": "stdio", "command": capa_exe(), "args": capa_args(&project)})
    );

    let codex_text = setup.read(".codex/config.toml").expect("codex file");
    assert!(
        codex_text.starts_with(CODEX),
        "the user's part stays byte for byte:\n{codex_text}"
    );
    let codex: toml_edit::DocumentMut = codex_text.parse().expect("valid TOML");
    assert_eq!(codex["model"].as_str(), Some("o3"));
    assert_eq!(
        codex["mcp_servers"]["other"]["command"].as_str(),
        Some("npx")
    );
    let entry = codex["mcp_servers"]["capa"]
        .as_table()
        .expect("[mcp_servers.capa]");
    assert_eq!(entry.len(), 2, "{codex_text}");
    assert_eq!(entry["command"].as_str(), Some(capa_exe().as_str()));
    let args: Vec<&str> = entry["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(args, ["mcp", "--project", project.to_str().expect("utf-8")]);

    // A second run changes nothing and says so.
    let before = snapshot(&setup);
    let again = setup.capa(&["install", "--yes"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(
        stdout(&again),
        ".mcp.json (Claude Code): up to date\n.cursor/mcp.json (Cursor): up to date\n\
         .vscode/mcp.json (VS Code): up to date\n.codex/config.toml (Codex): up to date\n"
    );
    assert_eq!(snapshot(&setup), before);

    // `none` takes out capa's entries and nothing else.
    setup.rewrite_trusted(&format!(
        "options:\n  toolExposure: none\nservers:\n{}",
        everything_server("everything", "")
    ));
    let none = setup.capa(&["install", "--yes"]);
    assert!(none.status.success(), "{}", stderr(&none));
    assert!(
        stdout(&none).contains(".mcp.json (Claude Code): removed capa's entry\n"),
        "{}",
        stdout(&none)
    );
    assert_eq!(setup.json(".mcp.json"), original);
    assert_eq!(
        setup.json(".cursor/mcp.json"),
        serde_json::from_str::<Value>(CURSOR).expect("json")
    );
    assert_eq!(
        setup.json(".vscode/mcp.json"),
        serde_json::from_str::<Value>(VSCODE).expect("json")
    );
    assert_eq!(setup.read(".codex/config.toml").as_deref(), Some(CODEX));

    // And once they are gone, `none` has nothing left to do.
    let before = snapshot(&setup);
    let again = setup.capa(&["install", "--yes"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!stdout(&again).contains("removed"), "{}", stdout(&again));
    assert_eq!(snapshot(&setup), before);
}

#[test]
fn without_yes_and_without_a_terminal_install_refuses_and_writes_nothing() {
    let setup = Setup::new("servers: []\n");
    setup.write(".mcp.json", CLAUDE);
    std::fs::create_dir_all(setup.project().join(".cursor")).expect("mkdir");
    let out = setup.capa(&["install"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(
            "error: nothing was written: 2 files would change, and capa asks before changing a \
             file, but stdin is not a terminal. Pass --yes to apply"
        ),
        "{err}"
    );
    assert_eq!(setup.read(".mcp.json").as_deref(), Some(CLAUDE));
    assert_eq!(setup.read(".cursor/mcp.json"), None);
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing() {
    let setup = Setup::new("servers: []\n");
    std::fs::create_dir_all(setup.project().join(".cursor")).expect("mkdir");
    let out = setup.capa(&["install", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("--- /dev/null\n+++ .cursor/mcp.json\n@@ -0,0 +1,12 @@\n+{\n+  \"mcpServers\": {\n+    \"capa\": {\n"),
        "{text}"
    );
    assert!(
        text.ends_with(".cursor/mcp.json (Cursor): would be created\n"),
        "{text}"
    );
    assert_eq!(setup.read(".cursor/mcp.json"), None);

    let json = setup.capa(&["install", "--dry-run", "--json"]);
    let report: Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(report["dry_run"], true);
    assert_eq!(
        report["files"],
        json!([{
            "client": "cursor",
            "path": setup.project().join(".cursor/mcp.json"),
            "scope": "project",
            "action": "created",
            "status": "dry_run",
        }])
    );
    assert!(stderr(&json).contains("+++ .cursor/mcp.json"));
    assert_eq!(setup.read(".cursor/mcp.json"), None);
}

#[test]
fn install_warns_about_names_the_server_lacks_and_policies_turned_off() {
    let servers = format!(
        "{}{}",
        everything_server(
            "everything",
            "    expose: exactly\n    tools: [echo, no-such-tool]\n"
        ),
        everything_server("pinned", "    expose: except\n    tools: [get-sum]\n"),
    );
    let setup = Setup::new(&format!(
        "servers:\n{servers}tools:\n  - server: pinned\n    tool: echo\n    id: say\n  - server: pinned\n    tool: gone\n\
         skills:\n  - id: triage\n    description: Sort incoming reports.\n    requires: [everything.echo, everything.not-there]\n"
    ));
    let out = setup.capa(&["install", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let messages: Vec<&str> = report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w["message"].as_str())
        .collect();
    assert_eq!(
        messages,
        vec![
            "server `everything` does not advertise `no-such-tool`, named in its `expose: exactly` list",
            "server `pinned`: top-level `tools:` entries point at it, so its `expose` policy is off; only those 2 entries are exposed",
            "server `pinned` does not advertise `gone`, named by the top-level `tools:` entry `pinned.gone`",
            "skill `triage` requires `everything.not-there`, which its server does not advertise",
        ]
    );
    let kinds: Vec<&str> = report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        vec![
            "not_advertised",
            "policy_off",
            "not_advertised",
            "skill_tool_missing"
        ]
    );
    // Printed for people too, on stderr.
    let err = stderr(&out);
    for message in &messages {
        assert!(err.contains(&format!("warning: {message}\n")), "{err}");
    }
    let servers = report["servers"].as_array().expect("servers");
    assert_eq!(servers.len(), 2);
    assert_eq!(servers[0]["id"], "everything");
    assert_eq!(servers[0]["exposed"], 1);
    assert_eq!(servers[1]["exposed"], 1);
    assert!(servers[0]["tools"].as_u64().unwrap_or(0) > 2, "{report}");
    assert_eq!(report["files"], json!([]));
    // The server's tool list is never written back into the capabilities file.
    assert!(
        !setup
            .read("capabilities.yaml")
            .unwrap_or_default()
            .contains("get-env")
    );
}

#[test]
fn a_project_install_never_rewrites_the_user_codex_entry() {
    let setup = Setup::new("servers: []\n");
    let home = setup.codex_home();
    std::fs::create_dir_all(&home).expect("mkdir");
    // The global hub's entry, as the Clients page writes it.
    let mine = "# my Codex\n[mcp_servers.other]\ncommand = \"npx\"\n\n[mcp_servers.capa]\ncommand = \"/usr/bin/capa\"\nargs = [\"mcp\"]\n";
    std::fs::write(home.join("config.toml"), mine).expect("write");

    // `--client codex --yes` writes the project's `.codex/config.toml`, not the user's file.
    let out = setup.capa(&["install", "--client", "codex", "--yes", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["files"][0]["client"], "codex");
    assert_eq!(report["files"][0]["scope"], "project");
    assert_eq!(report["files"][0]["action"], "created");
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).expect("read"),
        mine
    );
    let text = setup.read(".codex/config.toml").expect("project file");
    let doc: toml_edit::DocumentMut = text.parse().expect("valid TOML");
    assert_eq!(
        doc["mcp_servers"]["capa"]["command"].as_str(),
        Some(capa_exe().as_str())
    );

    // `--user-file` names the user's file, whose entry serves every project: still left alone.
    std::fs::remove_dir_all(setup.project().join(".codex")).expect("rm");
    let out = setup.capa(&[
        "install",
        "--client",
        "codex",
        "--user-file",
        "--yes",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["files"][0]["scope"], "user");
    assert_eq!(report["files"][0]["action"], "up_to_date");
    assert!(
        report["files"][0]["note"]
            .as_str()
            .is_some_and(|n| n.contains("does not repoint it")),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).expect("read"),
        mine
    );

    // A user file without a `capa` entry gets this project's with --user-file, asked first.
    let bare = "# my Codex\n[mcp_servers.other]\ncommand = \"npx\"\n";
    std::fs::write(home.join("config.toml"), bare).expect("write");
    let refused = setup.capa(&["install", "--client", "codex", "--user-file"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("Pass --yes"),
        "{}",
        stderr(&refused)
    );
    let out = setup.capa(&["install", "--client", "codex", "--user-file", "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(home.join("config.toml")).expect("read");
    assert!(text.starts_with(bare), "{text}");
    assert!(text.contains("\"--project\""), "{text}");
}

#[test]
fn a_client_file_capa_cannot_parse_is_left_alone_and_the_others_are_written() {
    let setup = Setup::new("servers: []\n");
    let jsonc = "{\n  // my servers\n  \"servers\": {}\n}\n";
    setup.write(".vscode/mcp.json", jsonc);
    std::fs::create_dir_all(setup.project().join(".cursor")).expect("mkdir");
    let out = setup.capa(&["install", "--yes"]);
    assert!(!out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains(".vscode/mcp.json (VS Code): failed: ")
            && text.contains("is not plain JSON (key must be a string at line 2 column 3)"),
        "{text}"
    );
    assert_eq!(setup.read(".vscode/mcp.json").as_deref(), Some(jsonc));
    assert!(setup.read(".cursor/mcp.json").is_some());
}

#[test]
fn project_finds_the_capabilities_file_from_another_directory() {
    let setup = Setup::new("options:\n  toolExposure: search\n");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    // The same person (data dir, which holds the trust) in another directory.
    let out = Command::new(env!("CARGO_BIN_EXE_capa"))
        .args(["config", "show", "--json", "--project"])
        .arg(setup.project())
        .current_dir(elsewhere.path())
        .env("CAPA_DATA_DIR", setup.root.path().join("data"))
        .env("CAPA_CONFIG_DIR", setup.root.path().join("config"))
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let shown: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(shown["toolExposure"], "search");
}
