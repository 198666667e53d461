//! One-line signatures for `search` results: the same types as `describe`, without comments,
//! shortened step by step to fit a character limit.

use crate::ToolSpec;
use crate::doc::DocMode;
use crate::ident::js_identifier;
use crate::model::Model;
use crate::render::{Renderer, Settings};

/// One-line TypeScript signature of `tool`, at most `max_chars` characters:
/// `github.create_issue(input: { owner: string; repo: string; title: string; body?: string;
/// labels?: string[] }): Promise<unknown>`.
///
/// When too long, nested objects read `{…}`, then properties are dropped from the end (optional
/// ones first, as required ones come first) with a trailing `…`, then the input reads `{…}`.
/// It is cut inside a name only when even `ns.tool(…)` does not fit. Member and type names come
/// from this tool alone; in the rare case of a clash within the namespace, `describe` numbers
/// them (`get_sum_2`).
pub fn signature_line(tool: &ToolSpec, max_chars: usize) -> String {
    let model = Model::build(tool.namespace, js_identifier(tool.namespace), &[tool]);
    let settings = |cut_depth, max_props| Settings {
        cut_depth,
        declare_named: false,
        docs: DocMode::None,
        comments: false,
        elide: true,
        max_props,
    };
    let fits = |line: &String| line.chars().count() <= max_chars;
    for cut in [None, Some(1)] {
        let line = render(&model, settings(cut, None));
        if fits(&line) {
            return line;
        }
    }
    // Each shown property takes more than one character, so more than `max_chars` of them
    // never fit: a tool with thousands of properties costs a few hundred tries, not thousands.
    let props = root_props(&model).min(max_chars.saturating_add(1));
    for max_props in (0..props).rev() {
        let line = render(&model, settings(Some(1), Some(max_props)));
        if fits(&line) {
            return line;
        }
    }
    let line = render(&model, settings(Some(0), None));
    if fits(&line) {
        return line;
    }
    let member = model.tools.first().map_or("", |t| t.member.as_str());
    let line = format!("{}.{member}(…)", model.ident);
    if fits(&line) {
        return line;
    }
    let mut cut: String = line.chars().take(max_chars.saturating_sub(1)).collect();
    if max_chars > 0 {
        cut.push('…');
    }
    cut
}

fn render(model: &Model, settings: Settings) -> String {
    let mut line = String::new();
    Renderer::new(model, settings).signature(&mut line, 0);
    line
}

fn root_props(model: &Model) -> usize {
    let Some(tool) = model.tools.first() else {
        return 0;
    };
    let mut input = &tool.input;
    if let crate::ty::Ty::Named(id) = input
        && let Some(named) = model.types.get(*id)
    {
        input = &named.body;
    }
    match input {
        crate::ty::Ty::Object(id) => model.objects.get(*id).map_or(0, |o| o.props.len()),
        _ => 0,
    }
}
