//! The configuration the hub runs with: files checked, merged and reduced to what each part needs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use crate::file::{ExposureMode, ProfileMode, SemanticSearch};

/// Upper bound of `upstreamTimeoutMs` (spec: Default limits; hosts may lower, never raise).
pub const MAX_UPSTREAM_TIMEOUT_MS: u64 = 30_000;
/// The spec's `approvalTtlMs`: a pending approval waits at most 24 hours.
pub const MAX_APPROVAL_TTL_MS: u64 = 86_400_000;

/// Everything the hub needs from its configuration files.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// Sources in file order (global file first, then the project file).
    pub sources: Vec<SourceConfig>,
    /// Sources turned off (`disabled: true`) whose id no active source uses: listed as `off`,
    /// never started.
    pub off_sources: Vec<SourceConfig>,
    /// Skills in file order (global file first, then the project file), active and inactive.
    pub skills: Vec<SkillConfig>,
    /// The exposure mode and which file and rule decided it.
    pub exposure: ExposureChoice,
    /// Timeout of one upstream call.
    pub upstream_timeout: Duration,
    /// How long a pending approval waits for a person.
    pub approval_ttl: Duration,
    /// Whether the built-in `demo` source is served.
    pub demo: bool,
    /// `options.search.semantic` as the person set it; `None` when no file sets it (the hub
    /// then ranks by meaning when the model's files are installed).
    pub semantic_search: Option<SemanticSearch>,
    /// Named profiles by name (the project file's win over the global file's).
    pub profiles: BTreeMap<String, ProfileConfig>,
    /// The files that were read, in order.
    pub files: Vec<PathBuf>,
    /// Things worth telling a person that do not stop the hub.
    pub warnings: Vec<String>,
    /// What the project file found from the working directory up brings besides sources of its
    /// own, and whether the person trusted it (held until then); `None` without such a file.
    pub project: Option<ProjectSettings>,
}

impl Default for HubConfig {
    fn default() -> Self {
        Self {
            sources: Vec::new(),
            off_sources: Vec::new(),
            skills: Vec::new(),
            exposure: ExposureChoice {
                mode: ExposureMode::Code,
                decided_by:
                    "no capabilities file was found; the hub's default profile (code mode) applies"
                        .into(),
            },
            upstream_timeout: Duration::from_millis(MAX_UPSTREAM_TIMEOUT_MS),
            approval_ttl: Duration::from_millis(MAX_APPROVAL_TTL_MS),
            demo: true,
            semantic_search: None,
            profiles: BTreeMap::new(),
            files: Vec::new(),
            warnings: Vec::new(),
            project: None,
        }
    }
}

/// What a found project file brings that waits for the person's trust of the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectSettings {
    /// The project file.
    pub file: PathBuf,
    /// SHA-256 (hex) of every item as the file says it now, skill texts and profile rules
    /// included: what a person trusts.
    pub digest: String,
    /// Whether the person trusted this digest for the file: the items apply; else they are held.
    pub trusted: bool,
    /// Each item, in the order a person reads them.
    pub items: Vec<ProjectItem>,
    /// The project's sources with the id of a global source: served in its place only once the
    /// file is trusted (and the source itself, by how it starts).
    pub replacing: Vec<SourceConfig>,
}

/// One thing a project file brings besides its own new sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProjectItem {
    /// A source with the id of one of the person's global sources, which it would replace.
    ReplacesSource { id: String },
    /// A skill, served to clients over MCP; `requires` may make callable a tool a source's
    /// `expose` policy hides.
    Skill {
        id: String,
        /// What it tells the model it is for.
        description: String,
        requires: Vec<SkillRequirement>,
        replaces_global: bool,
    },
    /// A named profile (`/mcp/<name>`).
    Profile {
        name: String,
        mode: ProfileMode,
        /// The sources it serves; `None` for all.
        sources: Option<Vec<String>>,
        /// The tool patterns it hides (a profile that replaces the person's own may drop theirs).
        deny: Vec<String>,
        replaces_global: bool,
    },
    /// The exposure mode the project picks (or implies: a project file without
    /// `options.toolExposure` serves expose-all).
    Exposure { mode: ExposureMode, implied: bool },
    /// Another option: its name and value as a person reads them.
    Option { name: &'static str, value: String },
}

impl std::fmt::Display for ProjectItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let replacing = |yes: bool| if yes { ", replacing your own" } else { "" };
        match self {
            Self::ReplacesSource { id } => {
                write!(f, "source `{id}` replaces your global source `{id}`")
            }
            Self::Skill {
                id,
                description,
                requires,
                replaces_global,
            } => {
                let requires: Vec<String> = requires.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "skill `{id}`{}: requires {} — “{}”",
                    replacing(*replaces_global),
                    listed(&requires, "nothing"),
                    shortened(description, 100)
                )
            }
            Self::Profile {
                name,
                mode,
                sources,
                deny,
                replaces_global,
            } => write!(
                f,
                "profile `{name}` ({}){}: sources {}; hides {}",
                mode.as_str(),
                replacing(*replaces_global),
                sources
                    .as_deref()
                    .map_or("all".to_owned(), |s| listed(s, "none")),
                listed(deny, "nothing"),
            ),
            Self::Exposure { mode, implied } => write!(
                f,
                "tool exposure {mode}{}",
                if *implied {
                    " (a project file without options.toolExposure serves expose-all)"
                } else {
                    ""
                }
            ),
            Self::Option { name, value } => write!(f, "option {name}: {value}"),
        }
    }
}

/// `items` joined with commas, or `empty` for none.
fn listed(items: &[String], empty: &str) -> String {
    if items.is_empty() {
        empty.to_owned()
    } else {
        items.join(", ")
    }
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn shortened(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max).collect();
    cut.push('…');
    cut
}

/// A named profile (`profiles:`), checked: what the clients of `/mcp/<name>` see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileConfig {
    pub name: String,
    /// As written (`direct` stays `direct` in listings); [`ProfileMode::exposure`] is the mode.
    pub mode: ProfileMode,
    /// The sources served; `None` for every source.
    pub sources: Option<BTreeSet<String>>,
    /// The skills served; `None` for every skill.
    pub skills: Option<BTreeSet<String>>,
    /// Tool patterns that ask a person first in this profile.
    pub ask: Vec<String>,
    /// Tool patterns hidden in this profile.
    pub deny: Vec<String>,
    pub limits: LoweredLimits,
    /// Whether a direct profile keeps large results for `read_result`.
    pub read_result: bool,
    pub description: Option<String>,
    /// The capabilities file that declared it.
    pub file: PathBuf,
}

/// The limits a profile lowers (`None`: the hub's own).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoweredLimits {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inline_result_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_timeout_ms: Option<u64>,
}

/// The exposure mode in force and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExposureChoice {
    pub mode: ExposureMode,
    /// A sentence naming the file and rule that decided the mode.
    pub decided_by: String,
}

/// A skill: a named task and the tools it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillConfig {
    pub id: String,
    /// What the skill is for; shown to models.
    pub description: String,
    /// In file order, each once.
    pub requires: Vec<SkillRequirement>,
    /// False for `disabled: true`: the skill adds no tools and cannot be activated.
    pub active: bool,
    /// The file that declared the skill: a capabilities file, or the skill's own SKILL.md.
    pub file: PathBuf,
    /// A skill written as `skills/<name>/SKILL.md`: its text, front matter and instructions.
    /// `None` for a skill of a capabilities file's `skills:`.
    pub document: Option<SkillDocument>,
}

/// A skill's SKILL.md as read (crate `skill_md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDocument {
    /// The whole file, front matter included: what `resources/read` of the skill serves.
    pub text: String,
    /// The front matter as JSON, verbatim.
    pub front_matter: serde_json::Map<String, serde_json::Value>,
    /// The body after the front matter, trimmed: the skill's instructions.
    pub instructions: String,
}

/// One entry of a skill's `requires:`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkillRequirement {
    /// `@server`: every tool the server exposes through its `expose` policy (or its top-level
    /// `tools:` entries). Adds nothing beyond that set.
    Server(String),
    /// `server.tool`: one remote tool, exposed under its remote name even when the server's
    /// policy leaves it out.
    Tool { server: String, tool: String },
}

impl SkillRequirement {
    /// Reads `@server` or `server.tool` (split at the first dot); `None` when it is neither.
    /// Does not check that the server id is valid.
    pub fn parse(text: &str) -> Option<Self> {
        if let Some(server) = text.strip_prefix('@') {
            return (!server.is_empty()).then(|| Self::Server(server.to_owned()));
        }
        let (server, tool) = text.split_once('.')?;
        (!server.is_empty() && !tool.is_empty()).then(|| Self::Tool {
            server: server.to_owned(),
            tool: tool.to_owned(),
        })
    }

    /// The server the requirement names.
    pub fn server(&self) -> &str {
        match self {
            Self::Server(server) | Self::Tool { server, .. } => server,
        }
    }
}

impl std::fmt::Display for SkillRequirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Server(server) => write!(f, "@{server}"),
            Self::Tool { server, tool } => write!(f, "{server}.{tool}"),
        }
    }
}

/// One upstream source as the hub starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceConfig {
    /// Namespace of the source's tools.
    pub id: String,
    pub transport: SourceTransport,
    /// Which tools are exposed.
    pub selection: ToolSelection,
    pub description: Option<String>,
    /// The file that declared the source.
    pub file: PathBuf,
    /// Whose file it is: the person's own, or a project's (which needs the person's trust).
    pub scope: SourceScope,
    /// `namespace: false`: served alone, its tools and prompts keep the server's own names.
    pub bare_names: bool,
}

/// Whose file declared a source, which decides what it needs before it runs and whose
/// connections (secrets) it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SourceScope {
    /// The global file, or a file named with `--config FILE`: the person's own. Its sources wait
    /// for a confirmation when they are new or changed; their connections are stored under the
    /// source's id.
    #[default]
    User,
    /// A project file found from the working directory (or `--project DIR`) up, which may come
    /// from a cloned repository: its sources run only once the person trusted them, and their
    /// connections are the project's own unless the person granted those of the global source
    /// with the same id.
    Project {
        /// The global file declares a source with the same id, which this one replaces.
        replaces_global: bool,
    },
}

/// Whose connections (secrets) a trusted project source uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProjectConnections {
    /// Its own: stored under a key of the project file, which no global source shares.
    #[default]
    Own,
    /// Those of the global source with the same id, which the person granted it.
    Global,
}

impl SourceScope {
    /// Whether the source comes from a project file.
    pub fn is_project(self) -> bool {
        matches!(self, Self::Project { .. })
    }

    /// Whether the source comes from a project file and has the id of a global source, which it
    /// replaces.
    pub fn replaces_global(self) -> bool {
        self == Self::Project {
            replaces_global: true,
        }
    }
}

impl SourceConfig {
    /// Names of the secrets the source's `env` or `headers` refer to.
    pub fn secret_names(&self) -> BTreeSet<String> {
        match &self.transport {
            SourceTransport::Stdio { env, .. } => crate::secret_ref::referenced(env.values()),
            SourceTransport::Http { headers, oauth, .. } => {
                let mut names = crate::secret_ref::referenced(headers.values());
                names.extend(oauth.as_ref().and_then(|o| o.client_secret.clone()));
                names
            }
            SourceTransport::OpenApi { headers, auth, .. } => {
                crate::secret_ref::referenced(headers.values().chain(auth.values()))
            }
        }
    }
}

/// How the hub reaches a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceTransport {
    /// A child process speaking MCP over stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        /// Declared OAuth (`oauth:`), with its client settings.
        oauth: Option<OAuthConfig>,
    },
    /// An HTTP API described by an OpenAPI document; the hub serves its operations as tools.
    OpenApi {
        /// Where the document is.
        spec: SpecLocation,
        /// Overrides the document's `servers:`.
        base_url: Option<String>,
        /// Extra headers of every request.
        headers: BTreeMap<String, String>,
        /// A credential per security scheme name.
        auth: BTreeMap<String, String>,
    },
}

/// Where an OpenAPI document is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecLocation {
    /// A file, resolved against the capabilities file's directory.
    File(PathBuf),
    /// An `http://` or `https://` URL.
    Url(String),
}

impl std::fmt::Display for SpecLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Url(url) => f.write_str(url),
        }
    }
}

/// How a source signs in with OAuth.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthConfig {
    pub client_id: Option<String>,
    pub scopes: Vec<String>,
    /// The NAME of `clientSecret: ${secret:NAME}`: a secret field of the connection.
    pub client_secret: Option<String>,
    /// The https address of the Client ID Metadata Document the hub is known by there.
    pub client_metadata_url: Option<String>,
}

/// Which of a source's live tools are exposed, and under which names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSelection {
    /// Every tool the server advertises.
    All,
    /// Every tool except these remote names.
    Except(BTreeSet<String>),
    /// Only these remote names.
    Exactly(BTreeSet<String>),
    /// Nothing.
    Nothing,
    /// Top-level `tools:` entries: the whole set, the server's `expose` ignored.
    Explicit(Vec<ExplicitTool>),
}

/// A top-level `tools:` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplicitTool {
    /// Name in the namespace.
    pub id: String,
    /// Remote tool name.
    pub remote: String,
    pub description: Option<String>,
}

impl ToolSelection {
    /// The remote names the selection mentions, for warnings about names a server lacks.
    pub fn named_tools(&self) -> Vec<&str> {
        match self {
            Self::Except(names) | Self::Exactly(names) => {
                names.iter().map(String::as_str).collect()
            }
            Self::Explicit(tools) => tools.iter().map(|t| t.remote.as_str()).collect(),
            Self::All | Self::Nothing => Vec::new(),
        }
    }
}
