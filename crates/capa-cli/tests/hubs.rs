//! Two hubs of one person (docs/hubs-and-projects.md): the app's (here `capa hub serve`) and the
//! one a project's `capa mcp` runs because it reads another set of files. A project's approval
//! is seen by the app's hub, and the decision taken there reaches the project's run.

mod support;

use serde_json::{Value, json};
use support::{ServedHub, StdioMcp};

/// Writes a note, then deletes it: the delete is destructive, so it asks a person.
const ASKING: &str = "await demo.write_note({ title: 'p', text: 'x' }); return await demo.delete_note({ title: 'p' });";

fn execute(mcp: &mut StdioMcp, id: i64, arguments: &Value) -> Value {
    let answer = mcp.request(
        id,
        "tools/call",
        &json!({"name": "execute", "arguments": arguments}),
    );
    answer["result"]["structuredContent"].clone()
}

#[test]
fn a_projects_approval_reaches_the_apps_hub_and_its_decision_the_project() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("config")).expect("config dir");
    std::fs::write(dir.path().join("config/capabilities.yaml"), "servers: []\n").expect("global");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).expect("project dir");
    std::fs::write(
        project.join("capabilities.yaml"),
        "servers: []\noptions:\n  toolExposure: code\n",
    )
    .expect("project file");
    let app = ServedHub::start(env!("CARGO_BIN_EXE_capa").as_ref(), dir.path(), &[]);

    // The project's files are not the app's: its `capa mcp` serves from a hub of its own.
    let mut mcp = StdioMcp::start_at(dir.path(), &project);
    let paused = execute(&mut mcp, 2, &json!({"code": ASKING}));
    assert_eq!(paused["status"], "awaiting_approval", "{paused}");
    let run_id = paused["runId"].as_str().expect("run id").to_owned();

    // The app's hub lists it, as its tray and popups do.
    let (status, body) = support::http(
        "GET",
        &format!("{}/api/approvals", app.url()),
        &[("Authorization", &format!("Bearer {}", app.token()))],
    );
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).expect("json");
    let runs: Vec<&str> = listed["pending"]
        .as_array()
        .expect("pending")
        .iter()
        .filter_map(|p| p["runId"].as_str())
        .collect();
    assert_eq!(runs, vec![run_id.as_str()], "{listed}");

    // A person decides through the app's hub (the terminal outside the project forwards to it).
    let approved = support::at_terminal(dir.path(), &["hub", "approve", &run_id], "");
    let said = String::from_utf8_lossy(&approved.stdout).to_string();
    assert!(approved.status.success(), "{said}");
    assert!(
        !said.contains("other capabilities files"),
        "the terminal should have used the app's hub: {said}"
    );

    let done = execute(&mut mcp, 3, &json!({"resume": run_id}));
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"], "deleted note \"p\"", "{done}");

    // "Always allow" taken in the app's hub writes the global policy, which the project's hub
    // reads as the person's rule: its next run does not ask.
    let paused = execute(&mut mcp, 4, &json!({"code": ASKING}));
    assert_eq!(paused["status"], "awaiting_approval", "{paused}");
    let run_id = paused["runId"].as_str().expect("run id").to_owned();
    let always = support::at_terminal(dir.path(), &["hub", "approve", "--always", &run_id], "");
    assert!(
        always.status.success(),
        "{}",
        String::from_utf8_lossy(&always.stdout)
    );
    let done = execute(&mut mcp, 5, &json!({"resume": run_id}));
    assert_eq!(done["status"], "completed", "{done}");
    // The hub reads the policy file again when it changed (one `stat` per decision).
    let next = execute(&mut mcp, 6, &json!({"code": ASKING}));
    assert_eq!(
        next["status"], "completed",
        "the rule did not reach the project's hub: {next}"
    );
    mcp.close();
}
