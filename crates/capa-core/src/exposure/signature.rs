//! Compact signatures for `search` and `setup_tools` answers: the tool's id as `call_tool`
//! takes it, its parameters in TypeScript, and the first line of its description.

use crate::catalog::CatalogTool;
use crate::lookup::one_line;

/// Longest signature shown, in characters (nested objects and optional parameters are elided
/// past it, as code mode's search does).
const SIGNATURE_CHARS: usize = 240;
const DESCRIPTION_CHARS: usize = 160;

/// `github.create_issue(input: { owner: string; repo: string; … })` and, on the next line,
/// the description's first line.
pub fn compact_signature(tool: &CatalogTool) -> String {
    let input = serde_json::Value::Object((*tool.definition.input_schema).clone());
    let output = tool
        .definition
        .output_schema
        .as_ref()
        .map(|o| serde_json::Value::Object((**o).clone()));
    let spec = capa_typegen::ToolSpec {
        namespace: &tool.address.namespace,
        name: &tool.address.name,
        description: tool.definition.description.as_deref(),
        input_schema: &input,
        output_schema: output.as_ref(),
    };
    let line = capa_typegen::signature_line(&spec, SIGNATURE_CHARS);
    // The typegen line names the tool as code would (`github.create_issue(` or a JavaScript
    // identifier form); `call_tool` takes the id, so the line starts with the id.
    let params = line.find('(').map_or("()", |open| &line[open..]);
    let params = params
        .rsplit_once("): ")
        .map_or(params.to_owned(), |(args, _)| format!("{args})"));
    let mut out = format!("{}{params}", tool.address);
    if let Some(description) = tool
        .definition
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
    {
        out.push_str("\n  ");
        out.push_str(&one_line(description, DESCRIPTION_CHARS));
    }
    out
}
