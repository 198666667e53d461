//! The capabilities file (its format, the rules it must follow, where it is found, the
//! configuration the hub runs with) and the policy file (`policy.yaml`: which tools run freely,
//! ask a person first, or stay hidden).
//!
//! A person writes `capabilities.yaml` (a global one in the platform's config dir and, optionally,
//! one per project): servers, their expose policies, skills and options. This crate turns those
//! files into a [`HubConfig`], or into errors that name the
//! file, the line and column, and the fix. It knows nothing about MCP or processes.

pub mod config_edit;
mod error;
mod file;
mod load;
mod located;
mod policy_file;
mod project_trust;
mod resolved;
mod schema;
pub mod secret_ref;
mod skill_md;
mod validate;
mod yaml;

pub use error::{ConfigError, ConfigIssue};
pub use file::{
    CapabilitiesFile, ExposePolicy, ExposureMode, OAuthClientDef, OAuthSetting, Options,
    ProfileEntry, ProfileLimits, ProfileMode, SearchOptions, SemanticSearch, ServerDef,
    ServerEntry, ServerKind, SkillEntry, ToolEntry,
};
pub use load::{
    ConfigFiles, PROJECT_FILE_NAMES, ProjectOrigin, SelectError, find_project_file, load,
    load_file, parse_str,
};
pub use located::{Located, Position};
pub use policy_file::{
    POLICY_FILE_NAME, PolicyDecision, PolicyRule, RuleProblem, canonical_pattern,
    check_policy_connection, check_policy_pattern, load_policy_file, parse_policy_str,
    render_policy, reset_all_policy_rules, reset_policy_rule, set_policy_rule,
};
pub use resolved::{
    ExplicitTool, ExposureChoice, HubConfig, LoweredLimits, MAX_APPROVAL_TTL_MS,
    MAX_UPSTREAM_TIMEOUT_MS, OAuthConfig, ProfileConfig, ProjectConnections, ProjectItem,
    ProjectSettings, SkillConfig, SkillDocument, SkillRequirement, SourceConfig, SourceScope,
    SourceTransport, SpecLocation, ToolSelection,
};
pub use schema::json_schema;
pub use skill_md::{MAX_SKILL_BYTES, SKILL_FILE, SKILLS_DIR, is_skill_name};
pub use validate::{CheckedFile, DEFAULT_PROFILE, RESERVED_IDS, is_source_id, no_such_profile};
