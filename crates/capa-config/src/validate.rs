//! The rules a capabilities file must follow beyond its syntax (tool-exposure spec, "Server tool
//! exposure", and skills), each reported with its position and fix. Every problem is collected, not only the
//! first, so one edit can fix them all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::ConfigIssue;
use crate::file::{
    CapabilitiesFile, ExposePolicy, ExposureMode, SemanticSearch, ServerDef, ServerEntry,
    ServerKind,
};
use crate::located::{Located, Position};
use crate::resolved::{
    ExplicitTool, MAX_APPROVAL_TTL_MS, MAX_UPSTREAM_TIMEOUT_MS, ProfileConfig, SkillConfig,
    SourceConfig, SourceScope, SourceTransport, ToolSelection,
};
use crate::secret_ref;

mod namespace;
mod oauth;
mod openapi;
mod profiles;
mod skills;
use self::namespace::check_bare_names;
use self::oauth::check_oauth;
use self::openapi::check_openapi_def;
use self::profiles::check_profiles;
pub use self::profiles::{DEFAULT_PROFILE, no_such_profile};
use self::skills::check_skills;
pub(crate) use self::skills::{SkillServers, check_requirement};

/// Namespaces the hub keeps for itself.
pub const RESERVED_IDS: &[&str] = &["hub", "capa", "capabilities", DEMO_ID];

/// The built-in source, which skills may name without declaring it.
const DEMO_ID: &str = "demo";

/// What one checked file contributes to the hub's configuration.
#[derive(Debug, Clone, Default)]
pub struct CheckedFile {
    pub file: PathBuf,
    pub sources: Vec<SourceConfig>,
    /// Servers declared with `disabled: true` (turned off): checked like the others, listed by
    /// the hub as `off`, never started.
    pub off: Vec<SourceConfig>,
    /// Every server id the file declares, disabled servers included.
    pub declared: BTreeSet<String>,
    pub skills: Vec<SkillConfig>,
    pub exposure: Option<ExposureMode>,
    pub upstream_timeout: Option<Duration>,
    pub approval_ttl: Option<Duration>,
    pub demo: Option<bool>,
    pub semantic_search: Option<SemanticSearch>,
    pub profiles: Vec<ProfileConfig>,
    pub warnings: Vec<String>,
}

struct Checker<'a> {
    file: &'a Path,
    issues: Vec<ConfigIssue>,
}

impl Checker<'_> {
    fn issue(&mut self, position: Position, message: impl Into<String>, fix: impl Into<String>) {
        self.issues.push(ConfigIssue {
            file: self.file.to_path_buf(),
            position,
            message: message.into(),
            fix: Some(fix.into()),
        });
    }
}

/// Servers declared in another file that this file's skills may name: the global file's, for a
/// project file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inherited<'a> {
    pub file: &'a Path,
    pub servers: &'a BTreeSet<String>,
}

/// Checks a parsed file and reduces it to sources, skills and options.
pub(crate) fn check(
    file: &Path,
    parsed: CapabilitiesFile,
    inherited: Option<Inherited<'_>>,
) -> Result<CheckedFile, Vec<ConfigIssue>> {
    let mut checker = Checker {
        file,
        issues: Vec::new(),
    };
    let mut warnings = Vec::new();
    let base_dir = file.parent().unwrap_or(Path::new("."));

    let mut seen: BTreeMap<String, Position> = BTreeMap::new();
    for server in &parsed.servers {
        check_id(&mut checker, &server.id, &mut seen);
    }

    let explicit = explicit_tools(&mut checker, &parsed, &seen);
    let skills = check_skills(&mut checker, &parsed.skills, &seen, inherited);
    let profiles = check_profiles(&mut checker, &parsed.profiles, &seen, inherited);
    check_bare_names(&mut checker, &parsed, &profiles);

    let mut sources = Vec::new();
    let mut off = Vec::new();
    for server in &parsed.servers {
        let transport = check_transport(&mut checker, server, base_dir);
        let selection = check_expose(&mut checker, server);
        let selection = match explicit.get(server.id.as_str()) {
            Some(tools) => {
                if server.expose.is_some() {
                    warnings.push(format!(
                        "{}: server `{}` has top-level `tools:` entries, so its `expose` is ignored",
                        file.display(),
                        server.id.value
                    ));
                }
                ToolSelection::Explicit(tools.clone())
            }
            None => selection,
        };
        if let Some(transport) = transport {
            let list = if server.disabled {
                &mut off
            } else {
                &mut sources
            };
            list.push(SourceConfig {
                id: server.id.value.clone(),
                transport,
                selection,
                description: server.description.clone(),
                file: file.to_path_buf(),
                scope: SourceScope::User,
                bare_names: server.namespace.as_ref().is_some_and(|n| !n.value),
            });
        }
    }

    let upstream_timeout = check_upstream_timeout(&mut checker, &parsed);

    let approval_ttl = parsed.options.approval_ttl_ms.as_ref().and_then(|ms| {
        if (1000..=MAX_APPROVAL_TTL_MS).contains(&ms.value) {
            Some(Duration::from_millis(ms.value))
        } else {
            checker.issue(
                ms.position,
                format!("approvalTtlMs is {}, outside 1000 to {MAX_APPROVAL_TTL_MS}", ms.value),
                format!("use a value from 1000 to {MAX_APPROVAL_TTL_MS} (24 hours); hosts may lower the limit, never raise it"),
            );
            None
        }
    });

    let semantic_search = parsed.options.search.semantic.as_ref().and_then(|word| {
        let choice = SemanticSearch::from_word(&word.value);
        if choice.is_none() {
            checker.issue(
                word.position,
                format!("options.search.semantic must be on or off, not `{}`", word.value),
                "write `semantic: on` (rank by meaning and terms) or `semantic: off` (by terms only); `true` and `false` mean the same",
            );
        }
        choice
    });

    if checker.issues.is_empty() {
        Ok(CheckedFile {
            file: file.to_path_buf(),
            sources,
            off,
            declared: seen.into_keys().collect(),
            skills,
            exposure: parsed.options.tool_exposure.map(|m| m.value),
            upstream_timeout,
            approval_ttl,
            demo: parsed.options.demo,
            semantic_search,
            profiles,
            warnings,
        })
    } else {
        Err(checker.issues)
    }
}

/// `options.upstreamTimeoutMs`, if set and within the spec's bounds (else reported).
fn check_upstream_timeout(
    checker: &mut Checker<'_>,
    parsed: &CapabilitiesFile,
) -> Option<Duration> {
    let ms = parsed.options.upstream_timeout_ms.as_ref()?;
    if (1..=MAX_UPSTREAM_TIMEOUT_MS).contains(&ms.value) {
        return Some(Duration::from_millis(ms.value));
    }
    checker.issue(
        ms.position,
        format!("upstreamTimeoutMs is {}, outside 1 to {MAX_UPSTREAM_TIMEOUT_MS}", ms.value),
        format!("use a value from 1 to {MAX_UPSTREAM_TIMEOUT_MS}; hosts may lower the limit, never raise it"),
    );
    None
}

fn check_id(
    checker: &mut Checker<'_>,
    id: &Located<String>,
    seen: &mut BTreeMap<String, Position>,
) {
    if !is_source_id(id) {
        checker.issue(
            id.position,
            format!("server id {:?} is not a valid namespace", id.value),
            "use lower-case letters, digits, `-` and `_`, starting with a letter (at most 64 characters), for example `github`",
        );
    } else if RESERVED_IDS.contains(&id.as_str()) {
        checker.issue(
            id.position,
            format!("server id `{}` is reserved by the hub", id.value),
            "pick another id, for example `my-{id}`".replace("{id}", id),
        );
    }
    if let Some(first) = seen.get(id.as_str()) {
        let first_line = first.line;
        checker.issue(
            id.position,
            format!(
                "server id `{}` is already used on line {first_line}",
                id.value
            ),
            "give each server its own id",
        );
    } else {
        seen.insert(id.value.clone(), id.position);
    }
}

/// Source ids: `[a-z][a-z0-9_-]{0,63}`.
pub fn is_source_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn check_transport(
    checker: &mut Checker<'_>,
    server: &ServerEntry,
    base_dir: &Path,
) -> Option<SourceTransport> {
    match server.kind.value {
        ServerKind::Mcp => check_def(checker, &server.def, base_dir),
        ServerKind::OpenApi => check_openapi_def(checker, &server.def, base_dir),
    }
}

fn check_def(
    checker: &mut Checker<'_>,
    def: &Located<ServerDef>,
    base_dir: &Path,
) -> Option<SourceTransport> {
    let position = def.position;
    let mut ok = true;
    check_placeholders(checker, def, &mut ok);
    if def.spec.is_some() || def.base_url.is_some() || !def.auth.is_empty() {
        checker.issue(
            position,
            "`spec`, `baseUrl` and `auth` only apply to `type: openapi` sources",
            "write `type: openapi` for an HTTP API described by an OpenAPI document, or remove them",
        );
        ok = false;
    }
    match (&def.command, &def.url) {
        (Some(_), Some(_)) => {
            checker.issue(position, "`def` has both `command` and `url`", "keep `command` for a local (stdio) server or `url` for a remote (Streamable HTTP) one, not both");
            None
        }
        (None, None) => {
            checker.issue(position, "`def` has neither `command` nor `url`", "add `command: <program>` (with `args`) for a local server, or `url: https://…/mcp` for a remote one");
            None
        }
        (Some(command), None) => {
            if !def.headers.is_empty() {
                checker.issue(
                    position,
                    "`headers` only apply to `url` servers",
                    "move the values to `env`, or remove `headers`",
                );
                ok = false;
            }
            if def.oauth.is_some() {
                checker.issue(
                    position,
                    "`oauth` only applies to `url` servers",
                    "remove `oauth`; a local server gets its credentials through `env`",
                );
                ok = false;
            }
            if command.trim().is_empty() {
                checker.issue(
                    position,
                    "`command` is empty",
                    "name the program to start, for example `npx`",
                );
                ok = false;
            }
            ok.then(|| SourceTransport::Stdio {
                command: command.clone(),
                args: def.args.clone(),
                env: def.env.clone(),
                cwd: def.cwd.as_ref().map(|cwd| base_dir.join(cwd)),
            })
        }
        (None, Some(url)) => {
            if !def.args.is_empty() || !def.env.is_empty() || def.cwd.is_some() {
                checker.issue(
                    position,
                    "`args`, `env` and `cwd` only apply to `command` servers",
                    "remove them, or pass credentials to a remote server with `headers`",
                );
                ok = false;
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                checker.issue(position, format!("url {url:?} is not an http:// or https:// address"), "write the server's Streamable HTTP endpoint, for example `https://example.com/mcp`");
                ok = false;
            }
            let oauth = check_oauth(checker, def, &mut ok);
            ok.then(|| SourceTransport::Http {
                url: url.clone(),
                headers: def.headers.clone(),
                oauth,
            })
        }
    }
}

/// Reports a malformed `${secret:…}` in any value that may hold one.
fn check_placeholders(checker: &mut Checker<'_>, def: &Located<ServerDef>, ok: &mut bool) {
    let values = def
        .env
        .values()
        .chain(def.headers.values())
        .chain(def.auth.values());
    for value in values {
        if let Err(e) = secret_ref::segments(value) {
            checker.issue(
                def.position,
                format!("bad secret placeholder: {e}"),
                "write `${secret:NAME}` with NAME made of letters, digits, `-` or `_`",
            );
            *ok = false;
        }
    }
}

fn check_expose(checker: &mut Checker<'_>, server: &ServerEntry) -> ToolSelection {
    // An `expose` the reader could not read (reported already) stands in as `all`; checking
    // `tools` against it would report a second, made-up problem.
    if server.expose.as_ref().is_some_and(|e| e.position.line == 0) {
        return ToolSelection::Nothing;
    }
    let policy = server
        .expose
        .as_ref()
        .map_or(ExposePolicy::All, |p| p.value);
    let policy_name = match policy {
        ExposePolicy::All => "all",
        ExposePolicy::Except => "except",
        ExposePolicy::Exactly => "exactly",
        ExposePolicy::None => "none",
    };
    match (policy, &server.tools) {
        (ExposePolicy::Except | ExposePolicy::Exactly, None) => {
            let position = server
                .expose
                .as_ref()
                .map_or(server.id.position, |p| p.position);
            checker.issue(
                position,
                format!("`expose: {policy_name}` needs a `tools` list on server `{}`", server.id.value),
                "add `tools: [remote_tool_name, …]` to the server (remote tool names, not capa ids)",
            );
            ToolSelection::Nothing
        }
        (ExposePolicy::All | ExposePolicy::None, Some(tools)) => {
            checker.issue(
                tools.position,
                format!(
                    "`tools` is not allowed with `expose: {policy_name}` on server `{}`",
                    server.id.value
                ),
                "remove the server's `tools` list, or set `expose: except` or `expose: exactly`",
            );
            ToolSelection::Nothing
        }
        (ExposePolicy::Except | ExposePolicy::Exactly, Some(tools)) if tools.is_empty() => {
            checker.issue(
                tools.position,
                format!(
                    "`expose: {policy_name}` has an empty `tools` list on server `{}`",
                    server.id.value
                ),
                if policy == ExposePolicy::Except {
                    "name the remote tools to hide, or use `expose: all` (and no `tools`)"
                } else {
                    "name the remote tools to expose, or use `expose: none` (and no `tools`)"
                },
            );
            ToolSelection::Nothing
        }
        (ExposePolicy::Except, Some(tools)) => ToolSelection::Except(names(checker, server, tools)),
        (ExposePolicy::Exactly, Some(tools)) => {
            ToolSelection::Exactly(names(checker, server, tools))
        }
        (ExposePolicy::All, None) => ToolSelection::All,
        (ExposePolicy::None, None) => ToolSelection::Nothing,
    }
}

fn names(
    checker: &mut Checker<'_>,
    server: &ServerEntry,
    tools: &Located<Vec<String>>,
) -> BTreeSet<String> {
    let id = server.id.as_str();
    let mut set = BTreeSet::new();
    for name in tools.iter() {
        if name.trim().is_empty() {
            checker.issue(
                tools.position,
                format!("empty tool name in the `tools` of server `{id}`"),
                "remove the empty entry",
            );
        } else if !set.insert(name.clone()) {
            checker.issue(
                tools.position,
                format!("`{name}` is listed twice in the `tools` of server `{id}`"),
                "list each remote tool name once",
            );
        }
    }
    set
}

fn explicit_tools(
    checker: &mut Checker<'_>,
    parsed: &CapabilitiesFile,
    servers: &BTreeMap<String, Position>,
) -> BTreeMap<String, Vec<ExplicitTool>> {
    let mut by_server: BTreeMap<String, Vec<ExplicitTool>> = BTreeMap::new();
    for entry in &parsed.tools {
        if !servers.contains_key(entry.server.as_str()) {
            let known: Vec<&str> = servers.keys().map(String::as_str).collect();
            checker.issue(
                entry.server.position,
                format!(
                    "tool entry points at unknown server `{}`",
                    entry.server.value
                ),
                if known.is_empty() {
                    "declare the server under `servers:` first".to_owned()
                } else {
                    format!("use one of the declared server ids: {}", known.join(", "))
                },
            );
            continue;
        }
        let (id, position) = match &entry.id {
            Some(id) => (id.value.clone(), id.position),
            None => (entry.tool.value.clone(), entry.tool.position),
        };
        if id.trim().is_empty() || id.contains(char::is_whitespace) {
            checker.issue(
                position,
                format!("tool id {id:?} is empty or has spaces"),
                "use a name like `create_issue`",
            );
            continue;
        }
        let tools = by_server.entry(entry.server.value.clone()).or_default();
        if tools.iter().any(|t| t.id == id) {
            checker.issue(
                position,
                format!("tool id `{}.{id}` is declared twice", entry.server.value),
                "give each tool entry of a server its own `id`",
            );
            continue;
        }
        tools.push(ExplicitTool {
            id,
            remote: entry.tool.value.clone(),
            description: entry.description.clone(),
        });
    }
    by_server
}
