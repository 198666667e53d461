//! The capabilities file's types: what a person writes in `capabilities.yaml`.
//!
//! Field names are camelCase in the file. Unknown fields are refused so that a typo is an error
//! with a position, not a silently ignored setting.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::located::Located;

mod profiles;

pub use profiles::{ProfileEntry, ProfileLimits, ProfileMode};

/// A capabilities file: the sources (MCP servers) a hub serves, tool entries, skills and options.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "Capabilities file")]
pub struct CapabilitiesFile {
    /// JSON Schema reference for editors; ignored by the hub.
    #[serde(default, rename = "$schema")]
    pub schema: Option<String>,
    /// Upstream MCP servers. Each becomes a namespace named by its `id`.
    #[serde(default)]
    pub servers: Vec<ServerEntry>,
    /// Explicit tool entries. Once any entry points at a server, those entries are the whole set
    /// of that server's tools and its `expose` policy is ignored.
    #[serde(default)]
    pub tools: Vec<ToolEntry>,
    /// Named tasks and the tools they need. In `expose-all` every tool an active skill requires
    /// is listed, even one its server's `expose` policy hides; `on-demand` activates skills by
    /// id; in `search` they have no effect.
    #[serde(default)]
    pub skills: Vec<SkillEntry>,
    /// Named profiles: what one client sees (a mode, some of the sources and skills, a
    /// stricter policy, lower limits), served at `/mcp/<name>` and by
    /// `capa mcp --profile <name>`. Names as source ids; `default` is the hub's own.
    #[serde(default)]
    pub profiles: BTreeMap<String, Located<ProfileEntry>>,
    /// Hub options.
    #[serde(default)]
    pub options: Options,
}

/// One upstream MCP server.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ServerEntry {
    /// Namespace of the server's tools (`github` gives `github.create_issue`). Lower-case letters,
    /// digits, `-` and `_`, starting with a letter; at most 64 characters.
    pub id: Located<String>,
    /// Kind of source: `mcp` (an MCP server) or `openapi` (an HTTP API described by an
    /// OpenAPI 3.0 or 3.1 document, each operation a tool).
    #[serde(rename = "type")]
    pub kind: Located<ServerKind>,
    /// Which of the server's live tools are exposed. Default `all`.
    #[serde(default)]
    pub expose: Option<Located<ExposePolicy>>,
    /// Remote tool names for `expose: except` or `expose: exactly`.
    #[serde(default)]
    pub tools: Option<Located<Vec<String>>>,
    /// How to reach the server: a command (stdio) or a URL (Streamable HTTP); for `openapi`,
    /// the document (`spec`) and optionally `baseUrl`, `auth` and `headers`.
    pub def: Located<ServerDef>,
    /// `false`: where the hub serves this source alone (it is the only source, or a profile
    /// serves only it), its tools and prompts keep the server's own names (`get_weather`, not
    /// `weather.get_weather`), so the hub looks like the server to a client. Default `true`.
    #[serde(default)]
    pub namespace: Option<Located<bool>>,
    /// A short note shown in listings.
    #[serde(default)]
    pub description: Option<String>,
    /// Turned off: the hub lists the server as `off` and starts nothing of it. Turning it on
    /// again (removing the line, or `false`) needs a person: the app's switch, or
    /// `capa sources enable <id>` at a terminal; otherwise the server waits for confirmation.
    #[serde(default)]
    pub disabled: bool,
}

/// Kind of source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    /// A Model Context Protocol server.
    Mcp,
    /// An HTTP API described by an OpenAPI 3.0 or 3.1 document: each operation is a tool.
    #[serde(rename = "openapi")]
    OpenApi,
}

/// How to start or reach an MCP server. Exactly one of `command` or `url`.
///
/// Values of `env` and `headers` may contain `${secret:NAME}`: the hub replaces it with the secret
/// `NAME` of the connection in use, read from the OS keychain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ServerDef {
    /// Program to start; the server speaks MCP on its stdin and stdout.
    #[serde(default)]
    pub command: Option<String>,
    /// Arguments of `command`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables of `command`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory of `command`; relative paths are relative to the capabilities file.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Streamable HTTP endpoint (`http://` or `https://`).
    #[serde(default)]
    pub url: Option<String>,
    /// Extra HTTP headers sent with every request to `url`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The server authorizes with OAuth: `true`, or the client to use. People sign in from the
    /// app or with `capa connections login`; the tokens stay in the OS keychain. A `url` server
    /// that answers 401 is offered a sign-in without this too.
    #[serde(default)]
    pub oauth: Option<OAuthSetting>,
    /// `openapi` sources: the OpenAPI document, a path (relative to the capabilities file) or
    /// an `http://`/`https://` URL; JSON or YAML.
    #[serde(default)]
    pub spec: Option<String>,
    /// `openapi` sources: where requests go, instead of the document's first `servers:` entry.
    #[serde(default)]
    pub base_url: Option<String>,
    /// `openapi` sources: a credential per security scheme of the document, by the scheme's
    /// name: the key of an `apiKey` scheme, the token of `http: bearer` (and of `oauth2` or
    /// `openIdConnect`, sent as a bearer token), `user:password` for `http: basic`. Values
    /// are usually `${secret:NAME}`.
    #[serde(default)]
    pub auth: BTreeMap<String, String>,
}

/// `oauth:` of a `url` server. Read by hand (below): the YAML reader hands scalars over as
/// text, which serde's untagged enums do not take for a boolean.
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema)]
#[serde(untagged)]
pub enum OAuthSetting {
    /// `true`: sign in, registering the hub with the server (RFC 7591); `false`: no OAuth.
    Enabled(bool),
    /// A client registered with the server beforehand, and the scopes to ask for.
    Client(OAuthClientDef),
}

impl<'de> Deserialize<'de> for OAuthSetting {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Setting;
        impl<'de> serde::de::Visitor<'de> for Setting {
            type Value = OAuthSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "`oauth: true`, `oauth: false` or `oauth: { clientId, scopes, clientSecret, clientMetadataUrl }`",
                )
            }
            fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Self::Value, E> {
                Ok(OAuthSetting::Enabled(value))
            }
            fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Self::Value, E> {
                match value {
                    "true" => Ok(OAuthSetting::Enabled(true)),
                    "false" => Ok(OAuthSetting::Enabled(false)),
                    other => Err(E::invalid_value(serde::de::Unexpected::Str(other), &self)),
                }
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                OAuthClientDef::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(OAuthSetting::Client)
            }
        }
        deserializer.deserialize_any(Setting)
    }
}

/// A client registered with the authorization server beforehand.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OAuthClientDef {
    /// The client id; without one the hub registers itself where the server allows it.
    #[serde(default)]
    pub client_id: Option<String>,
    /// Scopes to ask for; without them, those the server names.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The secret of a confidential client, as `${secret:NAME}`: stored first with
    /// `capa connections set <source> <connection> --field NAME`, never written here.
    #[serde(default)]
    pub client_secret: Option<String>,
    /// The https address of a Client ID Metadata Document that describes the hub (SEP-991): where
    /// the authorization server supports such documents, the hub uses this address as its
    /// client id instead of registering itself; `clientId` goes first when both are set.
    #[serde(default)]
    pub client_metadata_url: Option<String>,
}

/// A server's tool exposure policy (tool-exposure spec, "Server tool exposure").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExposePolicy {
    /// Every tool the server advertises.
    All,
    /// Every tool except the names in the server's `tools` list.
    Except,
    /// Only the names in the server's `tools` list.
    Exactly,
    /// Nothing from the policy; only explicit top-level `tools:` entries.
    None,
}

/// An explicit tool: a remote tool of one server, exposed under an id of its own.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolEntry {
    /// The tool's name in the namespace (`server.id`). Defaults to the remote name.
    #[serde(default)]
    pub id: Option<Located<String>>,
    /// The `id` of the server that provides the tool.
    pub server: Located<String>,
    /// The remote tool name, as the server advertises it.
    pub tool: Located<String>,
    /// Replaces the server's description of the tool.
    #[serde(default)]
    pub description: Option<String>,
}

/// A skill: a named task and the tools it needs.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SkillEntry {
    /// Name of the skill (`setup_tools(['triage'])`). Lower-case letters, digits, `-` and `_`,
    /// starting with a letter; at most 64 characters. Unique among skills.
    pub id: Located<String>,
    /// What the skill is for, in a sentence; shown to models.
    #[schemars(length(min = 1))]
    pub description: Located<String>,
    /// The tools the skill needs: `@server` (every tool the server exposes through its `expose`
    /// policy) or `server.tool` (one remote tool, listed even when the policy hides it).
    #[schemars(length(min = 1))]
    pub requires: Located<Vec<Located<String>>>,
    /// Keep the skill but make it inactive: it adds no tools and cannot be activated.
    #[serde(default)]
    pub disabled: bool,
}

/// Hub options.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Options {
    /// What MCP clients see: `code`, `expose-all`, `on-demand`, `search` or `none`.
    /// When omitted, a project file gets `expose-all`.
    #[serde(default)]
    pub tool_exposure: Option<Located<ExposureMode>>,
    /// Timeout of one upstream call in milliseconds (1 to 30000; default 30000).
    #[serde(default)]
    pub upstream_timeout_ms: Option<Located<u64>>,
    /// How long a pending approval waits for a person, in milliseconds (1000 to 86400000;
    /// default 86400000, 24 hours).
    #[serde(default)]
    pub approval_ttl_ms: Option<Located<u64>>,
    /// Serve the built-in `demo` source (default true). `demo: false` turns it off.
    #[serde(default)]
    pub demo: Option<bool>,
    /// How tools are found.
    #[serde(default)]
    pub search: SearchOptions,
}

/// `options.search`: how tools are found.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SearchOptions {
    /// Rank code mode's `search` by meaning (an embedded sentence model) as well as by terms:
    /// `on` or `off` (`true` and `false` mean the same). When omitted, on when the model's
    /// files are installed. `off` ranks by terms only (BM25F); search mode always does.
    // Read as text and checked by the rules (`validate.rs`): a wrong value is one issue with
    // its line and fix, and a bare `on` is text to this reader, not a boolean.
    #[serde(default)]
    #[schemars(with = "Option<SemanticSearch>")]
    pub semantic: Option<Located<String>>,
}

/// `options.search.semantic`: whether search ranks by meaning as well as by terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SemanticSearch {
    /// Hybrid ranking: the sentence model's similarity together with term matching.
    On,
    /// Term matching only (BM25F).
    Off,
}

impl SemanticSearch {
    /// Reads `on`/`off`, or the booleans `true`/`false` (YAML 1.1 reads bare `on` and `off` as
    /// booleans, so both spellings are taken), in any case; `None` for anything else.
    pub fn from_word(word: &str) -> Option<Self> {
        let is = |words: [&str; 2]| words.iter().any(|w| word.trim().eq_ignore_ascii_case(w));
        if is(["on", "true"]) {
            Some(Self::On)
        } else if is(["off", "false"]) {
            Some(Self::Off)
        } else {
            None
        }
    }

    /// The spelling used in capabilities files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
        }
    }
}

impl std::fmt::Display for SemanticSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `on` or `off`, or a boolean: what an editor that reads YAML 1.1 makes of a bare `on`.
impl JsonSchema for SemanticSearch {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SemanticSearch".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Whether search ranks by meaning as well as by terms.",
            "anyOf": [
                {
                    "description": "`on`: by meaning and terms; `off`: by terms only.",
                    "type": "string",
                    "enum": ["on", "off"]
                },
                {
                    "description": "`true` is `on`, `false` is `off`.",
                    "type": "boolean"
                }
            ]
        })
    }
}

/// How a client sees the hub's tools (tool-exposure spec, "Modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ExposureMode {
    /// `search`, `describe` and `execute` (code mode).
    Code,
    /// Every exposed tool as its own MCP tool.
    ExposeAll,
    /// `setup_tools` and `call_tool`.
    OnDemand,
    /// `search` and `call_tool`.
    Search,
    /// An empty tool list; `capa sh` runs tools.
    None,
}

impl ExposureMode {
    /// The spelling used in capabilities files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::ExposeAll => "expose-all",
            Self::OnDemand => "on-demand",
            Self::Search => "search",
            Self::None => "none",
        }
    }
}

impl std::fmt::Display for ExposureMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
