use std::path::Path;

use super::*;

const CANARY: &str = r#"sk-"quoted"\back\slash-0042"#;

fn claude_desktop() -> String {
    serde_json::json!({
        "mcpServers": {
            "everything": {
                "command": "/usr/bin/node",
                "args": ["/x/index.js", "stdio"],
                "env": {"API_TOKEN": CANARY, "LOG_LEVEL": "debug"},
                "disabled": false,
                "autoApprove": ["echo"]
            },
            "capa": {"command": "/opt/capa/bin/capa", "args": ["mcp"]},
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer abcd1234", "X-Team": "blue"}},
            "broken": "npx foo",
            "nothing": {}
        },
        "globalShortcut": "Ctrl+Space"
    })
    .to_string()
}

#[test]
fn claude_desktop_entries_map_to_sources_and_capas_own_is_skipped() {
    let found = read_text(&claude_desktop(), "claude_desktop_config.json").expect("read");
    let names: Vec<&str> = found.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["everything", "remote"]);
    let skipped: Vec<(&str, &str)> = found
        .skipped
        .iter()
        .map(|s| (s.name.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert!(skipped[0].1.contains("capa's own entry"));
    assert_eq!(skipped[1], ("broken", "the entry is not a JSON object"));
    assert!(skipped[2].1.contains("neither `command` nor `url`"));

    let everything = &found.servers[0];
    assert_eq!(everything.ignored, ["autoApprove", "disabled"]);
    assert_eq!(
        everything.description,
        "Imported from claude_desktop_config.json"
    );
    let offers: Vec<&SecretOffer> = everything.secrets().collect();
    assert_eq!(offers.len(), 1);
    assert_eq!(offers[0].field, "API_TOKEN");
    assert_eq!(offers[0].length, CANARY.chars().count());

    let moved = everything.plan("everything", true);
    assert_eq!(moved.server.env["API_TOKEN"], "${secret:API_TOKEN}");
    assert_eq!(moved.server.env["LOG_LEVEL"], "debug");
    assert_eq!(moved.secrets.len(), 1);
    assert_eq!(moved.secrets[0].1.expose(), CANARY);
    let kept = everything.plan("everything", false);
    assert_eq!(kept.server.env["API_TOKEN"], CANARY);
    assert!(kept.secrets.is_empty());

    let remote = found.servers[1].plan("remote", true);
    assert_eq!(
        remote.server.url.as_deref(),
        Some("https://example.com/mcp")
    );
    assert_eq!(
        remote.server.headers["Authorization"],
        "Bearer ${secret:Authorization}"
    );
    assert_eq!(remote.server.headers["X-Team"], "blue");
    assert_eq!(remote.secrets[0].1.expose(), "abcd1234");
}

#[test]
fn a_secret_never_reaches_the_preview_or_debug_output() {
    let found = read_text(&claude_desktop(), "c.json").expect("read");
    let json = serde_json::to_string(&found).expect("json");
    let debug = format!("{found:?} {:?}", found.servers[0].plan("x", true));
    for shown in [&json, &debug] {
        assert!(!shown.contains("sk-"), "{shown}");
        assert!(!shown.contains("abcd1234"), "{shown}");
    }
    assert!(json.contains(r#""value":"debug""#), "{json}");
    assert!(json.contains(r#""field":"API_TOKEN""#), "{json}");
}

#[test]
fn vscode_jsonc_with_types_inputs_and_comments() {
    let text = r#"{
  // My servers
  "inputs": [{"type": "promptString", "id": "gh-token", "password": true}],
  "servers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer ${input:gh-token}"}, /* VS Code asks */
    },
    "files": {"type": "stdio", "command": "npx", "args": ["-y", "pkg", "${workspaceFolder}",], "envFile": "${workspaceFolder}/.env"},
    "old": {"type": "sse", "url": "http://localhost:3001/sse"},
  },
}"#;
    let found = read_text(text, "mcp.json").expect("jsonc");
    assert_eq!(found.format, "VS Code");
    let [github, files, old] = &found.servers[..] else {
        panic!("{found:?}");
    };
    let plan = github.plan("github", true);
    assert_eq!(
        plan.server.headers["Authorization"],
        "Bearer ${secret:gh-token}"
    );
    assert!(plan.secrets.is_empty(), "an input is not a value to move");
    assert!(github.warnings[0].contains("Connections page"));
    assert_eq!(files.ignored, ["envFile"]);
    assert!(files.warnings.iter().any(|w| w.contains("envFile")));
    assert!(old.warnings[0].contains("SSE"));
    // settings.json's `mcp.servers`.
    let settings = r#"{"editor.fontSize": 14, "mcp": {"servers": {"t": {"command": "uvx", "args": ["mcp-server-time"]}}}}"#;
    assert_eq!(
        read_text(settings, "settings.json").expect("read").servers[0].name,
        "t"
    );
}

#[test]
fn claude_code_user_file_has_user_and_project_servers() {
    let text = serde_json::json!({
        "numStartups": 3,
        "mcpServers": {"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {}}},
        "projects": {
            "/home/me/app": {"mcpServers": {"memory": {"command": "npx", "args": ["other"]}}, "history": []},
            "/home/me/empty": {"allowedTools": []}
        }
    })
    .to_string();
    let found = read_text(&text, ".claude.json").expect("read");
    let keys: Vec<&str> = found.servers.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, ["memory", "/home/me/app::memory"]);
    assert_eq!(found.servers[1].project.as_deref(), Some("/home/me/app"));
    assert!(
        found.servers[1]
            .description
            .ends_with("(project /home/me/app)")
    );
    // Cursor: the same shape as Claude Desktop.
    let cursor =
        r#"{"mcpServers": {"web": {"url": "https://mcp.example.com/sse?api_key=zzzz9999"}}}"#;
    let found = read_text(cursor, "mcp.json").expect("read");
    let json = serde_json::to_string(&found).expect("json");
    assert!(!json.contains("zzzz9999"), "{json}");
    assert!(found.servers[0].warnings[0].contains("query"));
}

#[test]
fn hostile_shapes_are_clear_errors_or_skipped_entries() {
    let deep = format!(
        "{{\"mcpServers\": {{\"x\": {}1{}}}}}",
        "{\"a\":".repeat(10_000),
        "}".repeat(10_000)
    );
    let error = read_text(&deep, "f").expect_err("deep");
    assert!(error.0.contains("deeper than 128"), "{error}");
    for (text, wanted) in [
        ("[]", "not a JSON object"),
        ("{\"mcpServers\": []}", "not a JSON object of servers"),
        ("{\"other\": 1}", "no `mcpServers`"),
        ("not json", "not JSON"),
    ] {
        let error = read_text(text, "f").expect_err(text);
        assert!(error.0.contains(wanted), "{text}: {error}");
    }
    let entries = serde_json::json!({"mcpServers": {
        "a": 1, "b": null, "c": [1],
        "d": {"command": 5},
        "e": {"command": "x", "args": "not a list"},
        "f": {"command": "x", "args": [{"o": 1}]},
        "g": {"command": "x", "env": {"K": {"nested": true}}},
        "h": {"url": "file:///etc/passwd"},
        "i": {"command": "x", "args": ["a".repeat(20_000)]},
        "ok": {"command": "x", "args": [1, true], "env": {"N": 5}}
    }})
    .to_string();
    let found = read_text(&entries, "f").expect("read");
    assert_eq!(found.servers.len(), 1, "{:?}", found.skipped);
    assert_eq!(found.skipped.len(), 9);
    let Transport::Stdio { args, env, .. } = &found.servers[0].transport else {
        panic!("stdio");
    };
    assert_eq!(args, &["1", "true"]);
    assert_eq!(env[0].value(), "5");
}

#[test]
fn a_huge_file_is_refused_before_it_is_read_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.json");
    let file = std::fs::File::create(&path).expect("create");
    file.set_len(20 * 1024 * 1024).expect("20 MB");
    let error = read_file(&path).expect_err("too big");
    assert!(error.0.contains("larger than 16 MiB"), "{error}");
    assert!(
        read_file(dir.path())
            .expect_err("dir")
            .0
            .contains("directory")
    );
    let missing = read_file(Path::new("/nonexistent/claude.json")).expect_err("missing");
    assert!(missing.0.contains("does not exist"), "{missing}");
    std::fs::write(&path, [0xff, 0xfe, b'{', b'}']).expect("write");
    assert!(read_file(&path).expect_err("binary").0.contains("UTF-8"));
}

#[test]
fn secret_names_and_short_values() {
    use entries::looks_secret;
    for name in [
        "GITHUB_TOKEN",
        "OPENAI_API_KEY",
        "Authorization",
        "X-Api-Key",
        "DB_PASSWORD",
        "authToken",
        "AWS_SECRET_ACCESS_KEY",
        "GITLAB_PAT",
    ] {
        assert!(looks_secret(name), "{name}");
    }
    for name in [
        "LOG_LEVEL",
        "MONKEY_MODE",
        "PATH",
        "HOME",
        "X-Team",
        "AUTHOR",
    ] {
        assert!(!looks_secret(name), "{name}");
    }
    let text = r#"{"mcpServers": {"s": {"command": "x", "env": {"TOKEN": "abc", "EMPTY_TOKEN": "", "REF_TOKEN": "${env:T}"}}}}"#;
    let found = read_text(text, "f").expect("read");
    let offers: Vec<&SecretOffer> = found.servers[0].secrets().collect();
    assert_eq!(offers.len(), 1, "{offers:?}");
    assert!(!offers[0].movable);
    assert!(
        offers[0]
            .why_not
            .as_deref()
            .is_some_and(|w| w.contains("too short"))
    );
    let plan = found.servers[0].plan("s", true);
    assert_eq!(plan.server.env["TOKEN"], "abc", "an unmovable secret stays");
    assert!(plan.secrets.is_empty());
}

#[test]
fn planned_sources_load_as_written() {
    let found = read_text(&claude_desktop(), "c.json").expect("read");
    let file = Path::new("/x/capabilities.yaml");
    let mut text = String::new();
    for server in &found.servers {
        let plan = server.plan(&server.suggested_id, true);
        let (edited, source) =
            capa_config::config_edit::add_server(file, &text, &plan.server).expect("add");
        assert_eq!(source.id, server.suggested_id);
        text = edited;
    }
    assert!(!text.contains("sk-"), "{text}");
    assert!(text.contains("${secret:API_TOKEN}"), "{text}");
}

#[test]
fn a_url_with_a_password_is_a_secret_whatever_its_name() {
    let text = r#"{"mcpServers": {"db": {"command": "x", "env": {"DATABASE_URL": "postgres://me:hunter22@db:5432/app", "PLAIN_URL": "https://a@b.example/x", "PORT_URL": "http://host:8080/"}}}}"#;
    let found = read_text(text, "f").expect("read");
    let fields: Vec<&str> = found.servers[0]
        .secrets()
        .map(|s| s.field.as_str())
        .collect();
    assert_eq!(fields, ["DATABASE_URL"]);
    assert!(
        !serde_json::to_string(&found)
            .expect("json")
            .contains("hunter22")
    );
}
