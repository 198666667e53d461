//! `describe`: declarations for tools, namespaces and named types within a token budget.
//!
//! Budget strategy, cheapest loss first: (0) everything inline; (1) objects two levels deep
//! become named types that are referenced but not shown; (2) the same from one level deep;
//! (3) `$defs` and result types are listed instead of declared; (4) tools are dropped from the
//! end, with a comment naming a few of them; (5) a lone tool's descriptions are shortened, then
//! dropped; (6) its whole input becomes a reference. The text is counted exactly only when a
//! byte-length bound cannot already reject it.

use std::collections::HashSet;
use std::fmt::Write as _;

use crate::ToolSpec;
use crate::catalog::{Catalog, Target};
use crate::doc::DocMode;
use crate::error::DescribeError;
use crate::model::{Model, TypeRef};
use crate::render::{Renderer, Settings};
use crate::tokens::{MAX_BYTES_PER_TOKEN, count_tokens};

/// At most this many targets per call, as the MCP surface says.
pub const MAX_TARGETS: usize = 10;
/// Names listed in a "not shown" comment before "… and N more".
const LISTED_NAMES: usize = 8;
/// Tool addresses listed in a "more tools not shown" comment.
const LISTED_TOOLS: usize = 5;

const CALL_OPTIONS: &str = "interface CallOptions { /** Connection to use; the source's default \
                            when omitted. */ connection?: string }\n";

/// Declarations produced by [`describe`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// TypeScript declarations; valid on their own once the types in `not_shown` exist.
    pub text: String,
    /// Tokens of `text` in `o200k_base`; never more than the budget.
    pub tokens: usize,
    /// Named types the text refers to but does not declare (`github.CreateIssueInputLabels`),
    /// each of which can be described on its own.
    pub not_shown: Vec<String>,
    /// Named types the text declares.
    pub declared: Vec<String>,
}

/// What to show of one namespace.
struct Selection {
    ns: usize,
    /// Tool indexes in catalog order.
    tools: Vec<usize>,
    /// Named types asked for by name, in request order.
    types: Vec<TypeRef>,
}

/// Declarations for `targets` (tool addresses, namespaces, named types) over the visible
/// `tools` (sorted by namespace, then name), within `budget_tokens` (`o200k_base`).
pub fn describe(
    tools: &[ToolSpec],
    targets: &[String],
    budget_tokens: usize,
) -> Result<Description, DescribeError> {
    if targets.is_empty() {
        return Err(DescribeError::NoTargets);
    }
    if targets.len() > MAX_TARGETS {
        return Err(DescribeError::TooManyTargets {
            count: targets.len(),
            max: MAX_TARGETS,
        });
    }
    let mut catalog = Catalog::new(tools);
    let selections = select(&mut catalog, targets)?;
    let models: Vec<&Model> = models_for(&mut catalog, &selections);
    fit(&models, &selections, budget_tokens)
}

/// Full declarations (no budget) of the named types `types` (addresses `ns.Type`) and the
/// named types they use, except those in `exclude`, which count as declared elsewhere.
/// Together with a budgeted [`Description`] (`types` = its `not_shown`, `exclude` = its
/// `declared`) this gives a complete program, which is how the tests type-check short forms.
pub fn declare_types(
    tools: &[ToolSpec],
    types: &[String],
    exclude: &[String],
) -> Result<String, DescribeError> {
    let mut catalog = Catalog::new(tools);
    let selections = select(&mut catalog, types)?;
    let mut excluded: Vec<(usize, TypeRef)> = Vec::new();
    for address in exclude {
        if let Ok(Target::Type(ns, target)) = catalog.resolve(address) {
            excluded.push((ns, target));
        }
    }
    let models = models_for(&mut catalog, &selections);
    let settings = Settings::level(None, true, DocMode::Full);
    let typed: Vec<Selection> = selections
        .into_iter()
        .map(|s| Selection {
            ns: s.ns,
            tools: Vec::new(),
            types: s.types,
        })
        .collect();
    Ok(render(&models, &typed, settings, usize::MAX, &excluded).text)
}

fn select(catalog: &mut Catalog, targets: &[String]) -> Result<Vec<Selection>, DescribeError> {
    let mut selections: Vec<Selection> = Vec::new();
    for target in targets {
        let resolved = catalog.resolve(target)?;
        let ns = match resolved {
            Target::Namespace(ns) | Target::Tool(ns, _) | Target::Type(ns, _) => ns,
        };
        let at = if let Some(at) = selections.iter().position(|s| s.ns == ns) {
            at
        } else {
            selections.push(Selection {
                ns,
                tools: Vec::new(),
                types: Vec::new(),
            });
            selections.len() - 1
        };
        let selection = &mut selections[at];
        match resolved {
            Target::Namespace(_) => {
                let count = catalog.tools_of(ns).len();
                selection.tools = (0..count).collect();
            }
            Target::Tool(_, tool) => selection.tools.push(tool),
            Target::Type(_, named) => {
                if !selection.types.contains(&named) {
                    selection.types.push(named);
                }
            }
        }
    }
    // One block per namespace, in catalog order, tools in catalog order.
    selections.sort_by_key(|s| s.ns);
    for selection in &mut selections {
        selection.tools.sort_unstable();
        selection.tools.dedup();
    }
    Ok(selections)
}

fn models_for<'c, 'a>(
    catalog: &'c mut Catalog<'_, 'a>,
    selections: &[Selection],
) -> Vec<&'c Model<'a>> {
    for selection in selections {
        catalog.model(selection.ns);
    }
    // Second pass: shared borrows only, now that every model exists.
    let catalog: &'c Catalog<'_, 'a> = catalog;
    selections
        .iter()
        .filter_map(|s| catalog.built_model(s.ns))
        .collect()
}

fn fit(
    models: &[&Model],
    selections: &[Selection],
    budget: usize,
) -> Result<Description, DescribeError> {
    let total_tools: usize = selections.iter().map(|s| s.tools.len()).sum();
    let level = Settings::level;
    let full = DocMode::Full;
    let levels = [
        level(None, true, full),
        level(Some(2), true, full),
        level(Some(1), true, full),
        level(Some(1), false, full),
    ];
    let mut previous = String::new();
    for settings in levels {
        let rendered = render(models, selections, settings, total_tools, &[]);
        // A level that changes nothing (no deep objects, no named types) needs no recount.
        if rendered.text == previous {
            continue;
        }
        previous.clone_from(&rendered.text);
        if let Some(done) = accept(rendered, budget) {
            return Ok(done);
        }
    }
    let compact = levels[3];
    // Drop tools from the end: estimate from per-tool counts, then confirm exactly.
    let mut keep = total_tools.min(1);
    if total_tools > 1 {
        let all = render(models, selections, compact, total_tools, &[]);
        let overhead = count_tokens(&render(models, selections, compact, 0, &[]).text);
        let mut used = overhead;
        keep = 0;
        for span in &all.tool_spans {
            used += count_tokens(&all.text[span.0..span.1]);
            if used > budget {
                break;
            }
            keep += 1;
        }
        while keep >= 1 {
            let rendered = render(models, selections, compact, keep, &[]);
            if let Some(done) = accept(rendered, budget) {
                return Ok(done);
            }
            keep -= 1;
        }
        keep = 1;
    }
    let mut needed = usize::MAX;
    for docs in [DocMode::Short(120), DocMode::Short(40), DocMode::None] {
        for cut_depth in [Some(1), Some(0)] {
            let settings = level(cut_depth, false, docs);
            let rendered = render(models, selections, settings, keep, &[]);
            let tokens = count_tokens(&rendered.text);
            needed = needed.min(tokens);
            if tokens <= budget {
                return Ok(describe_result(rendered, tokens));
            }
        }
    }
    Err(DescribeError::BudgetTooSmall { budget, needed })
}

/// The rendering, if it fits; the byte bound rejects clearly oversized texts uncounted.
fn accept(rendered: Rendered, budget: usize) -> Option<Description> {
    if rendered.text.len() > budget.saturating_mul(MAX_BYTES_PER_TOKEN) {
        return None;
    }
    let tokens = count_tokens(&rendered.text);
    (tokens <= budget).then(|| describe_result(rendered, tokens))
}

fn describe_result(rendered: Rendered, tokens: usize) -> Description {
    Description {
        text: rendered.text,
        tokens,
        not_shown: rendered.not_shown,
        declared: rendered.declared,
    }
}

struct Rendered {
    text: String,
    /// Byte ranges of each shown tool's method in `text`.
    tool_spans: Vec<(usize, usize)>,
    not_shown: Vec<String>,
    declared: Vec<String>,
}

/// Renders every selection with the first `keep` tools (over all selections) shown.
fn render(
    models: &[&Model],
    selections: &[Selection],
    settings: Settings,
    keep: usize,
    exclude: &[(usize, TypeRef)],
) -> Rendered {
    let mut text = String::new();
    let mut tool_spans = Vec::new();
    let mut not_shown_all = Vec::new();
    let mut declared_all = Vec::new();
    let mut remaining = keep;
    if keep > 0 && selections.iter().any(|s| !s.tools.is_empty()) {
        text.push_str(CALL_OPTIONS);
    }
    for (selection, model) in selections.iter().zip(models) {
        let mut renderer = Renderer::new(model, settings);
        for (ns, target) in exclude {
            if *ns == selection.ns {
                renderer.declared_elsewhere.insert(*target);
            }
        }
        for target in &selection.types {
            renderer.mark_declared(*target);
        }
        if !selection.tools.is_empty() {
            let _ = writeln!(text, "declare const {}: {{", model.ident);
            let shown = selection.tools.len().min(remaining);
            remaining -= shown;
            for &tool in &selection.tools[..shown] {
                let start = text.len();
                renderer.method(&mut text, tool);
                tool_spans.push((start, text.len()));
            }
            let omitted = &selection.tools[shown..];
            if !omitted.is_empty() {
                more_tools_comment(&mut text, model, omitted);
            }
            text.push_str("};\n");
        }
        let mut declarations = String::new();
        let mut declared = Vec::new();
        for target in &selection.types {
            renderer.declaration(&mut declarations, *target);
            declared.push(*target);
        }
        let mut next = 0;
        while let Some(&target) = renderer.pending.get(next) {
            renderer.declaration(&mut declarations, target);
            declared.push(target);
            next += 1;
        }
        if !declarations.is_empty() {
            let _ = writeln!(text, "declare namespace {} {{", model.ident);
            text.push_str(&declarations);
            text.push_str("}\n");
        }
        let declared_names: HashSet<String> = declared.iter().map(|t| address(model, *t)).collect();
        let not_shown: Vec<String> = renderer
            .not_shown
            .into_iter()
            .filter(|name| !declared_names.contains(name))
            .collect();
        if !not_shown.is_empty() {
            text.push_str("// Not shown (describe them on their own): ");
            text.push_str(&listed(&not_shown, LISTED_NAMES));
            text.push('\n');
        }
        not_shown_all.extend(not_shown);
        declared_all.extend(declared.iter().map(|t| address(model, *t)));
    }
    Rendered {
        text,
        tool_spans,
        not_shown: not_shown_all,
        declared: declared_all,
    }
}

fn more_tools_comment(text: &mut String, model: &Model, omitted: &[usize]) {
    let addresses: Vec<String> = omitted
        .iter()
        .take(LISTED_TOOLS)
        .filter_map(|&t| model.tools.get(t))
        .map(|t| comment_safe(&format!("{}.{}", model.namespace, t.name)))
        .collect();
    let more = if omitted.len() > LISTED_TOOLS {
        ", …"
    } else {
        ""
    };
    let _ = writeln!(
        text,
        "\t// {} more tool{} not shown: describe {}{more} by address.",
        omitted.len(),
        if omitted.len() == 1 { "" } else { "s" },
        addresses.join(", "),
    );
}

/// A name fit for a `//` comment: no line breaks.
fn comment_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

fn listed(names: &[String], max: usize) -> String {
    let mut list = names
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > max {
        let _ = write!(list, ", … and {} more", names.len() - max);
    }
    list
}

fn address(model: &Model, target: TypeRef) -> String {
    let name = match target {
        TypeRef::Named(id) => model.types.get(id).map(|t| t.name.as_str()),
        TypeRef::Object(id) => model.objects.get(id).and_then(|o| o.name.as_deref()),
    };
    format!("{}.{}", model.ident, name.unwrap_or_default())
}
