//! Identifier forms: how catalog names (namespaces, tools, properties, `$defs` keys) become
//! TypeScript names. The sandbox exposes tools under the same member names, so every rule here
//! is deterministic and depends only on the names themselves (and, for clashes, catalog order).

use std::collections::{HashMap, HashSet};

/// Words that cannot name a binding (or a `declare namespace`) in strict-mode TypeScript. The
/// primitive type names are included because `declare namespace string` is rejected too.
const RESERVED: &[&str] = &[
    "any",
    "arguments",
    "await",
    "bigint",
    "boolean",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "eval",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "never",
    "new",
    "null",
    "number",
    "object",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "string",
    "super",
    "switch",
    "symbol",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "undefined",
    "unknown",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

fn is_reserved(name: &str) -> bool {
    RESERVED.binary_search(&name).is_ok()
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$'
}

fn is_ident_part(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// An ASCII identifier name (reserved words allowed): what may stand unquoted as a property key.
pub(crate) fn is_identifier_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(is_ident_start) && chars.all(is_ident_part)
}

/// The deterministic identifier form of a namespace or tool name: every character outside
/// `[A-Za-z0-9_$]` becomes `_`, a leading digit (or an empty name) gets a `_` prefix, and a
/// reserved word gets a trailing `_`. Names that already are identifiers come back unchanged:
/// `get-sum` → `get_sum`, `tool.with.dots` → `tool_with_dots`, `2fa` → `_2fa`, `delete` →
/// `delete_` (`identifier_forms` below).
pub fn js_identifier(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if is_ident_part(c) { c } else { '_' })
        .collect();
    if !out.chars().next().is_some_and(is_ident_start) {
        out.insert(0, '_');
    }
    if is_reserved(&out) {
        out.push('_');
    }
    out
}

/// Member names for the tools of one namespace, in the order given (catalog order): each is
/// [`js_identifier`] of the name, and a name already taken gets `_2`, `_3`, … so the first tool
/// keeps the plain form. The same function maps the namespaces of a catalog to global names.
pub fn member_names(tool_names: &[&str]) -> Vec<String> {
    let mut taken = HashSet::with_capacity(tool_names.len());
    // Base → the suffix to try next: names are never freed, so every smaller suffix is still
    // taken, and 5,000 tools of one identifier form cost 5,000 tries, not 12 million.
    let mut next_suffix: HashMap<String, usize> = HashMap::new();
    tool_names
        .iter()
        .map(|name| {
            let base = js_identifier(name);
            if taken.insert(base.clone()) {
                return base;
            }
            let n = next_suffix.entry(base.clone()).or_insert(2);
            loop {
                let candidate = format!("{base}_{n}");
                *n += 1;
                if taken.insert(candidate.clone()) {
                    return candidate;
                }
            }
        })
        .collect()
}

/// `create_issue` → `CreateIssue`, `perPage` → `PerPage`: words split at anything that is not
/// an ASCII letter or digit, each word's first letter upper-cased, the rest kept.
pub(crate) fn pascal_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for word in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

/// A type name from a `PascalCase` base: never empty and never starting with a digit.
pub(crate) fn type_ident(base: &str) -> String {
    if base.is_empty() {
        "Type".to_owned()
    } else if base.starts_with(|c: char| c.is_ascii_digit()) {
        format!("T{base}")
    } else {
        base.to_owned()
    }
}

/// A title usable as a type name as it is (`IssueSearchResult`), not a sentence.
pub(crate) fn is_safe_type_name(title: &str) -> bool {
    title.starts_with(|c: char| c.is_ascii_uppercase())
        && title.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A property key: bare when it is an identifier name, else a JSON string literal.
pub(crate) fn property_key(name: &str) -> String {
    if is_identifier_name(name) {
        name.to_owned()
    } else {
        quote(name)
    }
}

/// A double-quoted string literal valid in both JSON and TypeScript.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Control characters and the JS line separators, which some tools mishandle.
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_list_is_sorted_for_binary_search() {
        let mut sorted = RESERVED.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, RESERVED);
    }

    #[test]
    fn identifier_forms() {
        assert_eq!(js_identifier("create_issue"), "create_issue");
        assert_eq!(js_identifier("get-sum"), "get_sum");
        assert_eq!(js_identifier("tool.with.dots"), "tool_with_dots");
        assert_eq!(js_identifier("aws-kb"), "aws_kb");
        assert_eq!(js_identifier("1password"), "_1password");
        assert_eq!(js_identifier("2fa"), "_2fa");
        assert_eq!(js_identifier("delete"), "delete_");
        assert_eq!(js_identifier("class"), "class_");
        assert_eq!(js_identifier("string"), "string_");
        assert_eq!(js_identifier(""), "_");
        assert_eq!(js_identifier("Summarize Detection"), "Summarize_Detection");
        assert_eq!(js_identifier("长亭 IP"), "___IP");
    }

    #[test]
    fn clashing_members_get_numbered_in_catalog_order() {
        let names = member_names(&["get-sum", "get_sum", "get.sum", "get_sum_2"]);
        assert_eq!(names, ["get_sum", "get_sum_2", "get_sum_3", "get_sum_2_2"]);
    }

    #[test]
    fn pascal_and_keys() {
        assert_eq!(pascal_case("create_issue"), "CreateIssue");
        assert_eq!(pascal_case("perPage"), "PerPage");
        assert_eq!(pascal_case("API-coins-id"), "APICoinsId");
        assert_eq!(type_ident("2fa"), "T2fa");
        assert_eq!(property_key("foo-bar"), "\"foo-bar\"");
        assert_eq!(property_key("default"), "default");
        assert_eq!(quote("a\"b\\\u{1}"), "\"a\\\"b\\\\\\u0001\"");
    }
}
