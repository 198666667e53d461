//! `capa init`: a commented starter capabilities file with `toolExposure: search`, as the
//! tool-exposure spec asks of new files. The text is checked with the real loader before it is
//! written, and an existing file is kept unless `--force`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use capa_config::PROJECT_FILE_NAMES;

use crate::cli::InitArgs;

/// The name `capa init` writes (the first name project lookup tries).
const FILE_NAME: &str = "capabilities.yaml";

const HEADER: &str = "\
# Capabilities file: the MCP servers of this project, and what AI clients see of their tools.
# Check it with `capa config check`; configure the MCP clients of this project with `capa install`.
# Every field: docs/configuration.md in the Capabilities documentation.
#
# Completion in editors: save the JSON Schema beside this file and uncomment the `$schema` line.
#   capa config schema > capabilities.schema.json
# $schema: ./capabilities.schema.json
";

/// Example servers, written commented out. Uncommented they must load (a test checks).
const EXAMPLE_SERVERS: &str = "\
servers:
  - id: github
    type: mcp
    description: GitHub issues and pull requests
    expose: except                 # all (default) | except | exactly | none
    tools: [delete_repository]     # remote tool names, for except and exactly
    def:
      url: https://api.githubcopilot.com/mcp/
      headers:
        Authorization: \"Bearer ${secret:token}\"   # capa connections set github personal
  - id: files
    type: mcp
    def:
      command: npx
      args: [\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]
";

/// An example skill, written commented out.
const EXAMPLE_SKILLS: &str = "\
skills:
  - id: triage
    description: Triage new GitHub issues and label them.
    requires: [github.search_issues, github.update_issue]
";

const OPTIONS: &str = "\
options:
  # What MCP clients see after `capa install`:
  #   search      `search` and `call_tool`: the agent finds tools by task; best for many tools
  #   expose-all  every tool (servers' expose policies plus skills) as its own MCP tool
  #   on-demand   `setup_tools` and `call_tool`: the agent activates a skill or a @server
  #   none        no MCP tools and no client config written; run tools with `capa sh`
  #   code        `search`, `describe` and `execute` (code mode)
  toolExposure: search
";

/// The starter file.
fn starter() -> String {
    let mut text = String::from(HEADER);
    text.push_str(
        "\n# Upstream MCP servers. Each `id` is a namespace: `github` gives `github.create_issue`.\n",
    );
    text.push_str(&commented(EXAMPLE_SERVERS));
    text.push_str(
        "\n# Skills: named tasks and the tools they need, `server.tool` (even one the server's\n\
         # `expose` hides) or `@server` (every tool the server exposes).\n",
    );
    text.push_str(&commented(EXAMPLE_SKILLS));
    text.push('\n');
    text.push_str(OPTIONS);
    text
}

fn commented(yaml: &str) -> String {
    yaml.lines().map(|line| format!("# {line}\n")).collect()
}

pub(super) fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => std::env::current_dir().context("reading the working directory")?,
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join(FILE_NAME);
    let existing: Vec<_> = PROJECT_FILE_NAMES
        .iter()
        .map(|name| dir.join(name))
        .filter(|p| p.exists())
        .collect();
    if !args.force
        && let Some(first) = existing.first()
    {
        bail!(
            "{} already exists; keep it, or run `capa init --force` to replace it with a starter file",
            first.display()
        );
    }
    let text = starter();
    check(&file, &text)?;
    std::fs::write(&file, &text).with_context(|| format!("writing {}", file.display()))?;
    println!(
        "Wrote {} (toolExposure: search, the demo source on).",
        file.display()
    );
    for other in existing.iter().filter(|p| **p != file) {
        println!(
            "note: {} is now ignored: {FILE_NAME} comes first",
            other.display()
        );
    }
    println!(
        "Next: add your servers (examples are in the file, commented out), then run `capa install`. A project file applies once you trust it: `capa install` asks at a terminal, or run `capa config trust`."
    );
    Ok(ExitCode::SUCCESS)
}

/// The starter must load with the loader `capa` itself uses.
fn check(file: &Path, text: &str) -> anyhow::Result<()> {
    capa_config::parse_str(file, text)
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("the starter file does not load (a bug in capa):\n{e}"))
}

#[cfg(test)]
mod tests {
    use capa_config::ExposureMode;

    use super::*;

    #[test]
    fn the_starter_loads_with_search_exposure() {
        let checked = capa_config::parse_str(Path::new("/p/capabilities.yaml"), &starter())
            .expect("the starter loads");
        assert_eq!(checked.exposure, Some(ExposureMode::Search));
        assert!(checked.sources.is_empty() && checked.skills.is_empty());
    }

    #[test]
    fn the_commented_examples_load_once_uncommented() {
        let text = format!("{EXAMPLE_SERVERS}{EXAMPLE_SKILLS}{OPTIONS}");
        let checked = capa_config::parse_str(Path::new("/p/capabilities.yaml"), &text)
            .unwrap_or_else(|e| panic!("examples do not load:\n{e}"));
        assert_eq!(checked.sources.len(), 2);
        assert_eq!(checked.skills.len(), 1);
        // Uncommenting in the written file (dropping `# `) gives the same text.
        let uncommented: String = starter()
            .lines()
            .map(|l| l.strip_prefix("# ").unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(uncommented.contains(EXAMPLE_SERVERS.trim_end()));
        assert!(uncommented.contains(EXAMPLE_SKILLS.trim_end()));
    }
}
