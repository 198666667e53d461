//! Connecting the global hub into clients' user-wide files, on real files in a throwaway home.

use std::path::{Path, PathBuf};

use capa_install::user_plan::restore;
use capa_install::{
    Action, CapaEntry, InstallError, Os, Status, UserClient, UserHome, UserPlan, user_file,
};

fn home(dir: &Path) -> UserHome {
    UserHome {
        os: Os::Linux,
        home: dir.to_path_buf(),
        xdg_config_home: None,
        appdata: None,
        codex_home: None,
        claude_config_dir: None,
        path: Vec::new(),
    }
}

fn entry() -> CapaEntry {
    CapaEntry::global(Path::new("/opt/capa/bin/capa"))
}

fn write(path: &PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

const CLAUDE_JSON: &str = "{\n  \"numStartups\": 12,\n  \"installMethod\": \"npm\",\n  \"tipsHistory\": {\n    \"x\": 1.0e2\n  },\n  \"mcpServers\": {\n    \"mine\": {\n      \"type\": \"stdio\",\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"mine\"]\n    }\n  },\n  \"projects\": {\n    \"/p\": {\"allowedTools\": []}\n  },\n  \"userID\": \"\\u00e9abc\"\n}";

#[test]
fn claude_code_keeps_every_other_byte_and_disconnect_restores_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = home(dir.path());
    let file = user_file(&h, UserClient::ClaudeCode);
    assert_eq!(file.path, dir.path().join(".claude.json"));
    assert_eq!(
        capa_install::user_plan::status(&h, &file, &entry(), None).status,
        Status::NotInstalled
    );
    write(&file.path, CLAUDE_JSON);
    let before = capa_install::user_plan::status(&h, &file, &entry(), None);
    assert_eq!(before.status, Status::NotConnected);

    let plan = UserPlan::connect(&file, &entry()).expect("plan");
    assert_eq!(plan.action, Action::Updated);
    assert!(plan.warning.is_none());
    assert!(plan.diff().contains("+    \"capa\": {"), "{}", plan.diff());
    plan.apply().expect("apply");
    let text = std::fs::read_to_string(&file.path).expect("read");
    // Everything before the end of the last server and after the servers object is unchanged.
    let cut = CLAUDE_JSON.find("\n  },\n  \"projects\"").expect("cut");
    assert!(text.starts_with(&CLAUDE_JSON[..cut]));
    assert!(text.ends_with(&CLAUDE_JSON[cut..]));
    let value: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        value["mcpServers"]["capa"],
        serde_json::json!({"command": "/opt/capa/bin/capa", "args": ["mcp"]})
    );
    let after = capa_install::user_plan::status(&h, &file, &entry(), None);
    assert_eq!(after.status, Status::Connected);
    assert_eq!(after.mode, Some(capa_install::Mode::Stdio));
    assert_eq!(
        UserPlan::connect(&file, &entry()).expect("plan").action,
        Action::UpToDate
    );

    let off = UserPlan::disconnect(&file).expect("plan");
    assert_eq!(off.action, Action::Removed);
    off.apply().expect("apply");
    assert_eq!(
        std::fs::read_to_string(&file.path).expect("read"),
        CLAUDE_JSON
    );
}

#[test]
fn a_stale_plan_is_refused_and_undo_needs_the_written_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = home(dir.path());
    let file = user_file(&h, UserClient::Cursor);
    let plan = UserPlan::connect(&file, &entry()).expect("plan");
    assert_eq!(plan.action, Action::Created);
    write(&file.path, "{\"mcpServers\": {}}\n");
    assert!(matches!(plan.apply(), Err(InstallError::Changed { .. })));
    let plan = UserPlan::connect(&file, &entry()).expect("plan");
    plan.apply().expect("apply");
    let written = plan.new.as_deref();
    assert!(matches!(
        restore(&file.path, Some("other"), plan.old.as_deref()),
        Err(InstallError::Changed { .. })
    ));
    restore(&file.path, written, plan.old.as_deref()).expect("undo");
    assert_eq!(
        std::fs::read_to_string(&file.path).expect("read"),
        "{\"mcpServers\": {}}\n"
    );
}

#[test]
fn an_entry_capa_did_not_write_is_replaced_only_with_a_warning_and_never_disconnected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = home(dir.path());
    let file = user_file(&h, UserClient::ClaudeDesktop);
    write(
        &file.path,
        "{\"mcpServers\": {\"capa\": {\"command\": \"npx\", \"args\": [\"capa-server\"]}}}\n",
    );
    assert_eq!(
        capa_install::user_plan::status(&h, &file, &entry(), None).status,
        Status::Other
    );
    let plan = UserPlan::connect(&file, &entry()).expect("plan");
    assert_eq!(
        plan.warning.as_deref(),
        Some("replaces a `capa` entry capa did not write (`npx capa-server`)")
    );
    let error = UserPlan::disconnect(&file).expect_err("refused");
    assert!(
        error.to_string().contains("was not written by capa"),
        "{error}"
    );
}

#[test]
fn vscode_jsonc_keeps_its_comments_and_gets_a_typed_entry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = home(dir.path());
    let file = user_file(&h, UserClient::Vscode);
    let old = "{\n  // my servers\n  \"servers\": {\n    \"git\": {\"type\": \"stdio\", \"command\": \"uvx\"},\n  },\n  \"inputs\": []\n}\n";
    write(&file.path, old);
    let plan = UserPlan::connect(&file, &entry()).expect("plan");
    plan.apply().expect("apply");
    let text = std::fs::read_to_string(&file.path).expect("read");
    assert!(text.starts_with("{\n  // my servers\n"), "{text}");
    let plain = capa_install::json_splice::blank_comments(&text);
    let value: serde_json::Value = serde_json::from_str(&plain).expect("jsonc");
    assert_eq!(
        value["servers"]["capa"],
        serde_json::json!({"type": "stdio", "command": "/opt/capa/bin/capa", "args": ["mcp"]})
    );
    UserPlan::disconnect(&file)
        .expect("plan")
        .apply()
        .expect("apply");
    assert_eq!(std::fs::read_to_string(&file.path).expect("read"), old);
}

#[test]
fn codex_user_file_project_entries_are_reported_and_other_tables_stay() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = home(dir.path());
    h.codex_home = Some(dir.path().join("codex-home"));
    let file = user_file(&h, UserClient::Codex);
    assert_eq!(file.path, dir.path().join("codex-home/config.toml"));
    let old = "model = \"o3\" # mine\n\n[mcp_servers.capa]\ncommand = \"/opt/capa/bin/capa\"\nargs = [\"mcp\", \"--project\", \"/p\"]\n\n[profiles.fast]\nmodel = \"o4-mini\"\n";
    write(&file.path, old);
    assert_eq!(
        capa_install::user_plan::status(&h, &file, &entry(), None).status,
        Status::Project
    );
    let plan = UserPlan::connect(&file, &entry()).expect("plan");
    assert_eq!(
        plan.warning.as_deref(),
        Some(
            "replaces capa's entry for one project (`/opt/capa/bin/capa mcp --project /p`) with the global hub's"
        )
    );
    plan.apply().expect("apply");
    let text = std::fs::read_to_string(&file.path).expect("read");
    assert!(
        text.contains("[profiles.fast]\nmodel = \"o4-mini\"\n"),
        "{text}"
    );
    assert!(text.contains("args = [\"mcp\"]"), "{text}");
    assert_eq!(
        capa_install::user_plan::status(&h, &file, &entry(), None).status,
        Status::Connected
    );
    UserPlan::disconnect(&file)
        .expect("plan")
        .apply()
        .expect("apply");
    let text = std::fs::read_to_string(&file.path).expect("read");
    assert_eq!(
        text,
        "model = \"o3\" # mine\n\n[profiles.fast]\nmodel = \"o4-mini\"\n"
    );
}

#[test]
fn an_http_entry_to_this_hub_counts_as_connected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = home(dir.path());
    let file = user_file(&h, UserClient::ClaudeCode);
    write(
        &file.path,
        "{\"mcpServers\": {\"capa\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:4477/mcp\"}}}",
    );
    let status =
        capa_install::user_plan::status(&h, &file, &entry(), Some("http://127.0.0.1:4477/mcp"));
    assert_eq!(status.status, Status::Connected);
    assert_eq!(status.mode, Some(capa_install::Mode::Http));
}

#[test]
fn an_entry_for_a_named_profile_is_connected_and_names_its_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = home(dir.path());
    let file = user_file(&h, UserClient::Cursor);
    let exe = Path::new("/opt/capa/bin/capa");
    let review = CapaEntry::global_profile(exe, Some("review"));
    assert_eq!(review.args, ["mcp", "--profile", "review"]);
    UserPlan::connect(&file, &review)
        .expect("plan")
        .apply()
        .expect("apply");
    let status = capa_install::user_plan::status(&h, &file, &entry(), None);
    assert_eq!(status.status, Status::Connected);
    assert_eq!(status.profile.as_deref(), Some("review"));
    // Back to the default profile: the same entry, rewritten to plain `capa mcp`.
    let plan = UserPlan::connect(&file, &entry()).expect("plan");
    assert!(
        plan.diff().contains("-        \"--profile\","),
        "{}",
        plan.diff()
    );
    plan.apply().expect("apply");
    let status = capa_install::user_plan::status(&h, &file, &entry(), None);
    assert_eq!(status.status, Status::Connected);
    assert_eq!(status.profile, None);
    // `--profile` after another flag is not a global entry: it stays a project's.
    write(
        &file.path,
        "{\"mcpServers\": {\"capa\": {\"command\": \"/opt/capa/bin/capa\", \"args\": [\"mcp\", \"--project\", \"/p\", \"--profile\", \"x\"]}}}",
    );
    let status = capa_install::user_plan::status(&h, &file, &entry(), None);
    assert_eq!(status.status, Status::Project);
    assert_eq!(status.profile, None);
    // Over HTTP, the profile is the last segment under this hub's /mcp/.
    write(
        &file.path,
        "{\"mcpServers\": {\"capa\": {\"url\": \"http://127.0.0.1:4477/mcp/review/\"}}}",
    );
    let status =
        capa_install::user_plan::status(&h, &file, &entry(), Some("http://127.0.0.1:4477/mcp"));
    assert_eq!(status.status, Status::Connected);
    assert_eq!(status.profile.as_deref(), Some("review"));
    let elsewhere =
        capa_install::user_plan::status(&h, &file, &entry(), Some("http://127.0.0.1:9/mcp"));
    assert_eq!(elsewhere.status, Status::Other);
}
