//! The authorizer is the one place that decides whether a tool call may run: `Hub::call` takes
//! a `Permit`, and permits are made only by the authorizer (`authorize.rs`) and, after a
//! person's decision or a run's grant, by the approval lifecycle (`Question::approved`, called
//! from the runner's gate and the direct-call approvals). A new place that mints one fails here
//! and must be reviewed; the entry points themselves are exercised in capa-server's
//! `authorizer` test and capa-cli's `sh` test.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::TestHub;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The files under `crates/` (other crates cannot mint a permit at all: the constructor is
/// crate-private) whose code contains `needle`, relative to the crate's `src`.
fn files_with(needle: &str) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains(needle)))
        .map(|f| {
            f.strip_prefix(&src)
                .expect("under src")
                .display()
                .to_string()
        })
        .collect();
    found.sort();
    found
}

#[test]
fn permits_are_made_only_by_the_authorizer_and_the_approval_lifecycle() {
    // The authorizer (its decision, and the answer types it hands out) is the only maker.
    assert_eq!(
        files_with("Permit::new("),
        ["authorize.rs", "authorize/answer.rs"]
    );
    assert_eq!(
        files_with("Permit::listed("),
        ["authorize.rs", "authorize/answer.rs"]
    );
    // A person's "yes": the direct path, and the runner's gateway (the runner itself only
    // holds the hub's permit type opaquely and cannot make one).
    assert_eq!(
        files_with("question.approved()"),
        ["approval/direct.rs", "gateway.rs"]
    );
}

#[tokio::test]
async fn a_rule_for_the_default_connection_applies_in_execute_as_in_direct_calls() {
    let t = TestHub::start("").await;
    // `demo` has no connections; a rule for calls without one is the same for every path, and
    // the runner's gate uses the authorizer's one rule (requested connection, else default).
    t.hub
        .set_policy_rule(
            "demo.add",
            None,
            capa_core::Decision::Ask,
            capa_core::ChangedBy::Person,
        )
        .expect("rule");
    let envelope =
        crate::support::execute_json(&t, Some("return await demo.add({ a: 1, b: 2 })"), None).await;
    assert_eq!(envelope["status"], "awaiting_approval", "{envelope}");
    let direct = t.call("demo.add", json!({"a": 1, "b": 2})).await;
    assert_eq!(
        direct.expect_err("asks").code(),
        "approval_required",
        "a direct call without anyone to ask is refused the same way"
    );
}

/// A tool (here: the test, standing in for server-filesystem rooted above the config dir)
/// writes `'*': allow` into policy.yaml: the hub holds the loosening back until a person
/// confirms it; a tightening written the same way is in force at once.
#[tokio::test]
async fn a_policy_file_edit_that_loosens_waits_for_a_person() {
    let t = TestHub::start("").await;
    let asks = |hub: &capa_core::Hub, address: &'static str| {
        let catalog = hub.catalog();
        let tool = catalog.get(address).expect("tool").clone();
        matches!(
            hub.authorize_tool(&tool, None),
            capa_core::Authorization::NeedsPerson(_)
        )
    };
    assert!(asks(&t.hub, "demo.delete_note"));
    let file = t.hub.policy_file().to_owned();
    std::fs::create_dir_all(file.parent().expect("dir")).expect("dir");
    std::fs::write(
        &file,
        "rules:\n  - match: '*'\n    decision: allow\n  - match: demo.add\n    decision: ask\n",
    )
    .expect("write");
    // The file's mtime may not move within the same tick on every filesystem: reload as
    // `capa policy reload` would.
    t.hub.reload_policy().expect("reload");
    assert!(
        asks(&t.hub, "demo.delete_note"),
        "the loosening is held back"
    );
    assert!(asks(&t.hub, "demo.add"), "the tightening is in force");
    let held = t.hub.held_policy_changes();
    assert!(
        held.iter()
            .any(|l| l.describe() == "demo.delete_note: ask → allow"),
        "{held:?}"
    );
    t.hub.confirm_policy().expect("confirm");
    assert!(!asks(&t.hub, "demo.delete_note"), "confirmed by a person");
    assert!(t.hub.held_policy_changes().is_empty());
}

/// server-filesystem rooted above the hub's config dir could write `policy.yaml`: the person is
/// warned (`capa config show`, the API, the log), and the hub's token read back through it is
/// redacted.
#[tokio::test]
async fn a_filesystem_source_rooted_above_the_hub_files_is_warned_about_and_redacted() {
    let filesystem = crate::support::installed(
        "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("root");
    let paths = capa_core::HubPaths::in_dir(&root);
    std::fs::create_dir_all(&paths.data_dir).expect("data dir");
    let token = "f".repeat(64);
    std::fs::write(paths.token(), &token).expect("token");
    let yaml = format!(
        "servers:\n  - id: fs\n    type: mcp\n    def: {{ command: node, args: [\"{filesystem}\", \"{}\"] }}\n",
        root.display()
    );
    let t = TestHub::start_in(dir, &yaml, capa_secrets::Keychain::default()).await;
    let warnings = &t.hub.config().warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("source `fs`") && w.contains("data dir")),
        "{warnings:?}"
    );
    let read = t
        .call(
            "fs.read_text_file",
            json!({"path": paths.token().display().to_string()}),
        )
        .await
        .expect("read");
    let text = read.to_string();
    assert!(!text.contains(&token), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    t.hub.shutdown().await;
}
