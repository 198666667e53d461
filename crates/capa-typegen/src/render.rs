//! The [`Ty`] language to TypeScript text. One renderer serves every budget level: settings say
//! which objects stay inline and which become references to named types, and the renderer
//! records what it referenced so the caller can declare it or list it as not shown.

use std::collections::HashSet;

use crate::doc::{DocMode, escape_comment, write_jsdoc};
use crate::ident::property_key;
use crate::model::{Model, TypeRef};
use crate::ty::{ObjNode, Ty};

/// Objects that fit on one line this short, without docs, are written on one line.
const ONE_LINE_MAX: usize = 100;

/// The most one method, declaration or signature may write, in bytes of property lines (docs,
/// key, indentation) and literals, plus one per type: 30 times the largest real tool's
/// declarations (8.8 KB, over `tests/fixtures/catalogs`). The converter bounds how deep and how
/// many parts a schema has; this bounds what they print (long docs, a type written out at each
/// mention). Past it the rest of the item is `unknown`, so no schema makes one item hang or
/// grow without bound, and other items are not affected.
const MAX_ITEM_BYTES: usize = 256 * 1024;
/// The note on the first part cut by [`MAX_ITEM_BYTES`].
const TOO_LARGE: &str = "too large to show: over 256 KiB of declarations";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settings {
    /// Objects with a path name this deep or deeper are referenced by name, not shown.
    pub cut_depth: Option<usize>,
    /// Whether referenced named types (`$defs`, results) are declared or only listed.
    pub declare_named: bool,
    pub docs: DocMode,
    /// Comments such as `/* unsupported schema */` and JSDoc; off for one-line signatures.
    pub comments: bool,
    /// One-line signatures: cut objects read `{…}` instead of naming a type.
    pub elide: bool,
    /// One-line signatures: at most this many properties of the root object, then `…`.
    pub max_props: Option<usize>,
}

impl Settings {
    /// Declarations at a budget level: comments on, nothing elided.
    pub(crate) fn level(cut_depth: Option<usize>, declare_named: bool, docs: DocMode) -> Self {
        Settings {
            cut_depth,
            declare_named,
            docs,
            comments: true,
            elide: false,
            max_props: None,
        }
    }
}

pub(crate) struct Renderer<'m, 'a> {
    model: &'m Model<'a>,
    settings: Settings,
    /// Named types to declare, in the order first referenced.
    pub pending: Vec<TypeRef>,
    queued: HashSet<TypeRef>,
    /// Types referenced but not declared here, as `ns.Name`, in the order first referenced.
    pub not_shown: Vec<String>,
    not_shown_set: HashSet<TypeRef>,
    /// Types that count as declared elsewhere: referenced without being queued or listed.
    pub declared_elsewhere: HashSet<TypeRef>,
    /// Object depth of the root being rendered (declarations of deep objects start there).
    base_depth: usize,
    /// What the current item has written, against [`MAX_ITEM_BYTES`].
    spent: usize,
}

impl<'m, 'a> Renderer<'m, 'a> {
    pub(crate) fn new(model: &'m Model<'a>, settings: Settings) -> Self {
        Renderer {
            model,
            settings,
            pending: Vec::new(),
            queued: HashSet::new(),
            not_shown: Vec::new(),
            not_shown_set: HashSet::new(),
            declared_elsewhere: HashSet::new(),
            base_depth: 0,
            spent: 0,
        }
    }

    fn over_budget(&self) -> bool {
        self.spent > MAX_ITEM_BYTES
    }

    /// `unknown` for a part past [`MAX_ITEM_BYTES`]; the first such part says why.
    fn cut_here(&mut self, out: &mut String) {
        out.push_str("unknown");
        if self.settings.comments && self.spent != usize::MAX {
            out.push_str(" /* ");
            out.push_str(TOO_LARGE);
            out.push_str(" */");
        }
        self.spent = usize::MAX;
    }

    /// Marks a type as declared by this output, so it is not queued again.
    pub(crate) fn mark_declared(&mut self, target: TypeRef) {
        self.queued.insert(target);
    }

    /// One method of the `declare const` block, JSDoc included, at one tab.
    pub(crate) fn method(&mut self, out: &mut String, tool: usize) {
        let Some(tool) = self.model.tools.get(tool) else {
            return;
        };
        if self.settings.comments {
            let extra = &tool.extra;
            write_jsdoc(out, "\t", &tool.doc, extra, self.settings.docs);
        }
        self.base_depth = 0;
        self.spent = 0;
        out.push('\t');
        out.push_str(&tool.member);
        out.push_str(if tool.input_optional {
            "(input?: "
        } else {
            "(input: "
        });
        self.ty(out, &tool.input, 1);
        out.push_str(", options?: CallOptions): Promise<");
        match &tool.output {
            Some(output) => self.ty(out, output, 1),
            None => out.push_str("unknown"),
        }
        out.push_str(">;\n");
    }

    /// `ns.member(input: …): Promise<…>` on one line, for search results.
    pub(crate) fn signature(&mut self, out: &mut String, tool: usize) {
        let Some(tool) = self.model.tools.get(tool) else {
            return;
        };
        self.base_depth = 0;
        self.spent = 0;
        out.push_str(&self.model.ident);
        out.push('.');
        out.push_str(&tool.member);
        out.push_str(if tool.input_optional {
            "(input?: "
        } else {
            "(input: "
        });
        let mut input = String::new();
        self.ty(&mut input, &tool.input, 0);
        out.push_str(&one_line(&input));
        out.push_str("): Promise<");
        match &tool.output {
            Some(output) => self.ty(out, output, 0),
            None => out.push_str("unknown"),
        }
        out.push('>');
    }

    /// A declaration inside `declare namespace`, at one tab.
    pub(crate) fn declaration(&mut self, out: &mut String, target: TypeRef) {
        let model = self.model;
        let (name, body, doc) = match target {
            TypeRef::Named(id) => {
                let Some(named) = model.types.get(id) else {
                    return;
                };
                (&named.name, named.body.clone(), Some(&named.doc))
            }
            TypeRef::Object(id) => {
                let Some(Some(name)) = model.objects.get(id).map(|o| o.name.as_ref()) else {
                    return;
                };
                (name, Ty::Object(id), None)
            }
        };
        if self.settings.comments
            && let Some(doc) = doc
        {
            write_jsdoc(out, "\t", doc, &[], self.settings.docs);
        }
        self.spent = 0;
        match body {
            Ty::Object(id) => {
                let Some(object) = model.objects.get(id) else {
                    return;
                };
                self.base_depth = object.depth;
                out.push_str("\tinterface ");
                out.push_str(name);
                out.push(' ');
                self.object_body(out, object, 1);
                out.push('\n');
            }
            other => {
                self.base_depth = 0;
                out.push_str("\ttype ");
                out.push_str(name);
                out.push_str(" = ");
                self.ty(out, &other, 1);
                out.push_str(";\n");
            }
        }
    }

    fn reference(&mut self, out: &mut String, target: TypeRef, name: &str, declare: bool) {
        if !self.declared_elsewhere.contains(&target) {
            if declare {
                if self.queued.insert(target) {
                    self.pending.push(target);
                }
            } else if self.not_shown_set.insert(target) {
                self.not_shown.push(format!("{}.{name}", self.model.ident));
            }
        }
        out.push_str(&self.model.ident);
        out.push('.');
        out.push_str(name);
    }

    fn ty(&mut self, out: &mut String, ty: &Ty, indent: usize) {
        self.spent = self.spent.saturating_add(1);
        // A reference is only a name (what it names is an item of its own), so a tool cut for
        // size still names its result type.
        if self.over_budget() && !matches!(ty, Ty::Named(_)) {
            self.cut_here(out);
            return;
        }
        match ty {
            Ty::Unknown => out.push_str("unknown"),
            Ty::Never => out.push_str("never"),
            Ty::Unsupported(why) => {
                out.push_str("unknown");
                if self.settings.comments {
                    out.push_str(" /* unsupported schema: ");
                    out.push_str(&escape_comment(why));
                    out.push_str(" */");
                }
            }
            Ty::Prim(name) => out.push_str(name),
            Ty::Literal(text) => {
                self.spent = self.spent.saturating_add(text.len());
                out.push_str(text);
            }
            Ty::Array(item) => {
                let wrap = matches!(**item, Ty::Union(_) | Ty::Intersection(_));
                self.wrapped(out, item, indent, wrap);
                out.push_str("[]");
            }
            Ty::Tuple(items, rest) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.ty(out, item, indent);
                }
                if let Some(rest) = rest {
                    if !items.is_empty() {
                        out.push_str(", ");
                    }
                    out.push_str("...");
                    let wrap = matches!(**rest, Ty::Union(_) | Ty::Intersection(_));
                    self.wrapped(out, rest, indent, wrap);
                    out.push_str("[]");
                }
                out.push(']');
            }
            // Shortened signatures: a long list of literals reads as its base type.
            Ty::Union(members)
                if self.settings.elide
                    && self.settings.cut_depth.is_some()
                    && members.len() > 4
                    && members.iter().all(|m| matches!(m, Ty::Literal(_))) =>
            {
                out.push_str(&literal_bases(members));
            }
            Ty::Union(members) => {
                for (i, member) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" | ");
                    }
                    self.ty(out, member, indent);
                }
            }
            Ty::Intersection(members) => {
                for (i, member) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" & ");
                    }
                    self.wrapped(out, member, indent, matches!(member, Ty::Union(_)));
                }
            }
            Ty::Named(id) => {
                let model = self.model;
                if let Some(named) = model.types.get(*id) {
                    let declare = self.settings.declare_named;
                    self.reference(out, TypeRef::Named(*id), &named.name, declare);
                } else {
                    out.push_str("unknown");
                }
            }
            Ty::Object(id) => {
                let model = self.model;
                let Some(object) = model.objects.get(*id) else {
                    out.push_str("unknown");
                    return;
                };
                let depth = object.depth.saturating_sub(self.base_depth);
                match (&object.name, self.settings.cut_depth) {
                    (Some(_), Some(cut)) if depth >= cut && self.settings.elide => {
                        out.push_str("{…}");
                    }
                    (Some(name), Some(cut)) if depth >= cut => {
                        self.reference(out, TypeRef::Object(*id), name, false);
                    }
                    _ => self.object_body(out, object, indent),
                }
            }
        }
    }

    /// `ty`, in parentheses when it is a union or intersection that still reads as one.
    fn wrapped(&mut self, out: &mut String, ty: &Ty, indent: usize, wrap: bool) {
        let mut text = String::new();
        self.ty(&mut text, ty, indent);
        let wrap = wrap && (text.contains(" | ") || text.contains(" & "));
        if wrap {
            out.push('(');
        }
        out.push_str(&text);
        if wrap {
            out.push(')');
        }
    }

    /// `{ … }` for an object whose closing brace sits at `indent` tabs.
    fn object_body(&mut self, out: &mut String, object: &ObjNode, indent: usize) {
        if object.props.is_empty() && object.index.is_none() {
            out.push_str("{}");
            return;
        }
        let inner = "\t".repeat(indent + 1);
        let mut body = String::from("{\n");
        let shown = match self.settings.max_props {
            Some(max) if object.depth == self.base_depth => max.min(object.props.len()),
            _ => object.props.len(),
        };
        let mut written = 0;
        for prop in &object.props[..shown] {
            if self.over_budget() {
                break;
            }
            let start = body.len();
            if self.settings.comments {
                write_jsdoc(&mut body, &inner, &prop.doc, &[], self.settings.docs);
            }
            body.push_str(&inner);
            body.push_str(&property_key(&prop.key));
            body.push_str(if prop.optional { "?: " } else { ": " });
            self.spent = self.spent.saturating_add(body.len() - start);
            if self.over_budget() {
                body.truncate(start);
                break;
            }
            self.ty(&mut body, &prop.ty, indent + 1);
            body.push_str(";\n");
            written += 1;
        }
        if written < shown {
            // Cut for size: the properties not written are admitted by an open index, so the
            // type stays valid (and only wider).
            body.push_str(&inner);
            body.push_str("[key: string]: ");
            self.cut_here(&mut body);
            body.push_str(";\n");
        } else if shown < object.props.len() {
            body.push_str(&inner);
            body.push_str("…\n");
        } else if let Some(index) = &object.index {
            body.push_str(&inner);
            body.push_str("[key: string]: ");
            self.ty(&mut body, index, indent + 1);
            body.push_str(";\n");
        }
        for _ in 0..indent {
            body.push('\t');
        }
        body.push('}');
        if !body.contains("/*") && body.len() <= ONE_LINE_MAX * 2 {
            let line = one_line(&body);
            if line.chars().count() <= ONE_LINE_MAX {
                out.push_str(&line);
                return;
            }
        }
        out.push_str(&body);
    }
}

/// The base types of a union of literals (`"a" | "b" | 1` → `string | number`), in the order
/// they first appear: how a shortened signature writes a long list of literals.
fn literal_bases(members: &[Ty]) -> String {
    let mut bases: Vec<&str> = Vec::new();
    for member in members {
        let base = match member {
            Ty::Literal(text) if text.starts_with('"') => "string",
            Ty::Literal(text) if text == "true" || text == "false" => "boolean",
            _ => "number",
        };
        if !bases.contains(&base) {
            bases.push(base);
        }
    }
    bases.join(" | ")
}

/// Joins a rendered multi-line object (no comments inside) into `{ a: string; b?: number }`.
fn one_line(text: &str) -> String {
    if !text.contains('\n') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if out.ends_with(';') && line.starts_with('}') {
            out.pop();
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn joins_objects_onto_one_line() {
        assert_eq!(
            one_line("{\n\t\ta: string;\n\t\tb?: {\n\t\t\tc: number;\n\t\t};\n\t}"),
            "{ a: string; b?: { c: number } }"
        );
    }
}
