//! The MCP Skills extension (`io.modelcontextprotocol/skills`, SEP-2640) over the hub's skills:
//! `skills/list` and `skills/get` answer each skill's entry (its SKILL.md's URI, front matter and
//! file manifest), and each SKILL.md is a resource (`resources/list`, `resources/read`). rmcp
//! declares the extension (`enable_skills`) and checks every entry against it before it goes out.
//!
//! A skill is served as one file, its SKILL.md: supporting files beside it are not served (yet;
//! docs/skills.md). There is no change notification in the extension: a client calls
//! `skills/list` again.

use capa_core::SkillFile;
use rmcp::model::{
    ErrorData, GetSkillResult, ListResourcesResult, ListSkillsResult, ReadResourceResult, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};
use serde_json::{Value, json};

const MARKDOWN: &str = "text/markdown";

/// The skills a client may be served: those whose name the extension allows (a capabilities
/// file's skill may have a `_` in its id, which a SKILL.md name may not).
pub(crate) fn servable(files: Vec<SkillFile>) -> Vec<SkillFile> {
    files
        .into_iter()
        .filter(|f| capa_config::is_skill_name(&f.name))
        .collect()
}

/// One skill's entry in `skills/list` and `skills/get`.
fn entry(file: &SkillFile) -> Skill {
    let mut front_matter = SkillFrontmatter::new(file.name.clone(), file.description.clone());
    for (key, value) in &file.front_matter {
        if key != "name" && key != "description" {
            front_matter = front_matter.with_field(key.clone(), value.clone());
        }
    }
    Skill::new(
        file.uri.clone(),
        front_matter,
        SkillResources::Files(vec![SkillResource::new(
            file.uri.clone(),
            file.digest.clone(),
            file.size() as u64,
        )]),
    )
}

/// `skills/list`: every skill, on one page.
pub(crate) fn list_skills(files: &[SkillFile]) -> ListSkillsResult {
    ListSkillsResult::with_all_items(files.iter().map(entry).collect())
}

/// `skills/get`: the skill whose SKILL.md is at `uri`; `-32602` with the URI for any other.
pub(crate) fn get_skill(files: &[SkillFile], uri: &str) -> Result<GetSkillResult, ErrorData> {
    files
        .iter()
        .find(|f| f.uri == uri)
        .map(|f| GetSkillResult::new(entry(f)))
        .ok_or_else(|| unknown_uri("skill", uri))
}

/// `resources/list`: every SKILL.md.
pub(crate) fn list_resources(files: &[SkillFile]) -> Result<ListResourcesResult, ErrorData> {
    let resources: Vec<Value> = files
        .iter()
        .map(|f| {
            json!({
                "uri": f.uri,
                "name": f.name,
                "description": f.description,
                "mimeType": MARKDOWN,
                "size": f.size(),
                "annotations": { "audience": ["assistant"] },
            })
        })
        .collect();
    // `resultType` spelled out: a result read from JSON without it has none, and 2026-07-28
    // requires it (rmcp drops it for older versions).
    serde_json::from_value(json!({ "resultType": "complete", "resources": resources }))
        .map_err(|e| ErrorData::internal_error(format!("listing skills: {e}"), None))
}

/// `resources/read` of a SKILL.md; `-32602` with the URI for any other.
pub(crate) fn read_resource(
    files: &[SkillFile],
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let file = files
        .iter()
        .find(|f| f.uri == uri)
        .ok_or_else(|| unknown_uri("resource", uri))?;
    serde_json::from_value(json!({
        "resultType": "complete",
        "contents": [{ "uri": file.uri, "mimeType": MARKDOWN, "text": file.text }],
    }))
    .map_err(|e| ErrorData::internal_error(format!("reading a skill: {e}"), None))
}

/// A skill the running hub listed, with the text its SKILL.md read gave (`capa mcp`'s bridge).
pub(crate) fn file_from_read(listed: Skill, read: &ReadResourceResult) -> Option<SkillFile> {
    let text = read.contents.iter().find_map(|c| match c {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => Some(text.clone()),
        _ => None,
    })?;
    let mut front_matter = listed.frontmatter.extra.clone();
    front_matter.insert("name".into(), Value::from(listed.frontmatter.name.clone()));
    front_matter.insert(
        "description".into(),
        Value::from(listed.frontmatter.description.clone()),
    );
    Some(SkillFile::new(
        listed.frontmatter.name,
        listed.frontmatter.description,
        listed.uri,
        text,
        front_matter,
    ))
}

fn unknown_uri(what: &str, uri: &str) -> ErrorData {
    // The URI is the client's own input: echoed in `data` (as the spec's resource-not-found
    // error does), not trusted; bounded so an enormous one is not sent back whole.
    let shown: String = uri.chars().take(200).collect();
    ErrorData::invalid_params(
        format!("no {what} at this URI; skills/list gives the hub's skills"),
        Some(json!({ "uri": shown })),
    )
}
