//! The code-mode surface's fixed cost: what every client loads before it calls a tool.

use rmcp::model::ListToolsResult;

/// mcp-surface.md: tool definitions plus server instructions within 1,500 tokens.
#[test]
fn the_fixed_surface_stays_within_the_spec_budget() {
    let list = serde_json::to_string(&ListToolsResult::with_all_items(capa_mcp::code_tools()))
        .expect("json");
    let surface = format!("{list}\n{}", capa_mcp::CODE_INSTRUCTIONS);
    let tokens = capa_typegen::count_tokens(&surface);
    println!("code-mode surface: {tokens} tokens (o200k)");
    assert!(tokens <= 1500, "{tokens} tokens");
}
