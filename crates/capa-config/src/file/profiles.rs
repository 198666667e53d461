//! `profiles:` of a capabilities file: what one client sees, picked by endpoint
//! (`/mcp/<name>`) or by `capa mcp --profile <name>` (docs/profiles.md).

use schemars::JsonSchema;
use serde::Deserialize;

use super::ExposureMode;
use crate::located::Located;

/// One named profile.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProfileEntry {
    /// What the profile's clients see: `code`, `direct` (each tool as its own MCP tool, the same
    /// as `expose-all`), `expose-all`, `search`, `on-demand` or `none`. Default `code`.
    #[serde(default)]
    pub tool_exposure: Option<Located<ProfileMode>>,
    /// The sources whose tools the profile serves, by id. Default: every source.
    #[serde(default)]
    pub sources: Option<Located<Vec<Located<String>>>>,
    /// The skills the profile serves, by name. Default: every skill.
    #[serde(default)]
    pub skills: Option<Located<Vec<Located<String>>>>,
    /// Tools that ask a person first in this profile, even where the policy allows them: tool
    /// patterns as in the policy (`github.create_*`, `github`, `*`).
    #[serde(default)]
    pub ask: Vec<Located<String>>,
    /// Tools hidden in this profile: tool patterns as in the policy. A profile can only make
    /// the policy stricter.
    #[serde(default)]
    pub deny: Vec<Located<String>>,
    /// Run limits lowered for this profile's `execute` (and the size of direct results).
    #[serde(default)]
    pub limits: ProfileLimits,
    /// In a `direct` (or `expose-all`) profile, a result over `inlineResultBytes` is kept whole
    /// and a `read_result` tool reads it in pieces (default true). `false`: results are only cut.
    #[serde(default)]
    pub read_result: Option<bool>,
    /// A short note shown in listings.
    #[serde(default)]
    pub description: Option<String>,
}

/// A profile's mode: the exposure modes, and `direct`, the spec's name for `expose-all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileMode {
    /// `search`, `describe` and `execute` (code mode).
    Code,
    /// Each tool as its own MCP tool: `expose-all` under the spec's name.
    Direct,
    /// Every exposed tool as its own MCP tool.
    ExposeAll,
    /// `setup_tools` and `call_tool`.
    OnDemand,
    /// `search` and `call_tool`.
    Search,
    /// An empty tool list.
    None,
}

impl ProfileMode {
    /// The spelling used in capabilities files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Direct => "direct",
            Self::ExposeAll => "expose-all",
            Self::OnDemand => "on-demand",
            Self::Search => "search",
            Self::None => "none",
        }
    }

    /// The exposure mode this names (`direct` is `expose-all`).
    pub fn exposure(self) -> ExposureMode {
        match self {
            Self::Code => ExposureMode::Code,
            Self::Direct | Self::ExposeAll => ExposureMode::ExposeAll,
            Self::OnDemand => ExposureMode::OnDemand,
            Self::Search => ExposureMode::Search,
            Self::None => ExposureMode::None,
        }
    }
}

/// Limits a profile lowers; the spec's defaults (and the hub's options) stay the ceiling: a
/// higher value has no effect.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProfileLimits {
    /// Size of the code of one `execute`, in bytes.
    #[serde(default)]
    pub code_bytes: Option<Located<u64>>,
    /// Guest execution time of one run, in milliseconds.
    #[serde(default)]
    pub compute_ms: Option<Located<u64>>,
    /// Ceiling of one run attempt, tool calls included, in milliseconds.
    #[serde(default)]
    pub wall_ms: Option<Located<u64>>,
    /// Guest heap of one run, in bytes.
    #[serde(default)]
    pub memory_bytes: Option<Located<u64>>,
    /// Tool calls per run.
    #[serde(default)]
    pub max_calls: Option<Located<u64>>,
    /// Tool calls of one run in flight at once.
    #[serde(default)]
    pub max_concurrent: Option<Located<u64>>,
    /// Bytes of result and logs returned inline.
    #[serde(default)]
    pub inline_result_bytes: Option<Located<u64>>,
    /// Milliseconds one upstream call of a run may take.
    #[serde(default)]
    pub upstream_timeout_ms: Option<Located<u64>>,
}

impl ProfileLimits {
    /// Each limit the profile sets, by its name in the file.
    pub fn named(&self) -> [(&'static str, Option<&Located<u64>>); 8] {
        [
            ("codeBytes", self.code_bytes.as_ref()),
            ("computeMs", self.compute_ms.as_ref()),
            ("wallMs", self.wall_ms.as_ref()),
            ("memoryBytes", self.memory_bytes.as_ref()),
            ("maxCalls", self.max_calls.as_ref()),
            ("maxConcurrent", self.max_concurrent.as_ref()),
            ("inlineResultBytes", self.inline_result_bytes.as_ref()),
            ("upstreamTimeoutMs", self.upstream_timeout_ms.as_ref()),
        ]
    }
}
