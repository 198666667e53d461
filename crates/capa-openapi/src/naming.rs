//! Tool names of operations: the `operationId` where there is one, else a name made of the
//! method and the path, deterministic, and unique within the document.

use std::collections::HashSet;

/// The longest tool name made; the hub takes up to 128 bytes.
const MAX_NAME_BYTES: usize = 64;

/// The name of one operation before it is made unique: its `operationId` with every character
/// outside `A-Z a-z 0-9 _` as `_` (`repos/list-for-user` → `repos_list_for_user`, which is
/// also the member name code calls), or `get_repos_owner_repo` from
/// `GET /repos/{owner}/{repo}`.
pub(crate) fn base_name(operation_id: Option<&str>, method: &str, path: &str) -> String {
    let from_id = operation_id.map(sanitize).filter(|n| !n.is_empty());
    let name = from_id.unwrap_or_else(|| {
        let mut name = method.to_ascii_lowercase();
        let path = sanitize(path);
        if !path.is_empty() {
            name.push('_');
            name.push_str(&path);
        }
        name
    });
    cut(&name, MAX_NAME_BYTES).to_owned()
}

/// Makes `name` unique among `taken` by a `_2`, `_3`… suffix, and records it.
pub(crate) fn unique(name: String, taken: &mut HashSet<String>) -> String {
    if taken.insert(name.clone()) {
        return name;
    }
    let mut n = 2;
    loop {
        let suffix = format!("_{n}");
        let candidate = format!("{}{suffix}", cut(&name, MAX_NAME_BYTES - suffix.len()));
        if taken.insert(candidate.clone()) {
            return candidate;
        }
        n += 1;
    }
}

fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    out.trim_end_matches('_').to_owned()
}

/// `text` cut to at most `limit` bytes (it is ASCII after `sanitize`).
fn cut(text: &str, limit: usize) -> &str {
    let mut end = text.len().min(limit);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_ids_are_kept_and_others_named_from_method_and_path() {
        assert_eq!(
            base_name(Some("repos/list-for-user"), "GET", "/x"),
            "repos_list_for_user"
        );
        assert_eq!(base_name(Some("listTasks"), "GET", "/x"), "listTasks");
        assert_eq!(
            base_name(None, "GET", "/repos/{owner}/{repo}/issues"),
            "get_repos_owner_repo_issues"
        );
        assert_eq!(base_name(Some("///"), "DELETE", "/"), "delete");
        assert_eq!(base_name(Some("ünïcode op"), "GET", "/"), "n_code_op");
    }

    #[test]
    fn names_are_unique_and_bounded() {
        let mut taken = HashSet::new();
        let long = "a".repeat(200);
        let first = unique(base_name(Some(&long), "GET", "/"), &mut taken);
        let second = unique(base_name(Some(&long), "GET", "/"), &mut taken);
        assert_eq!(first.len(), MAX_NAME_BYTES);
        assert!(second.ends_with("_2") && second.len() == MAX_NAME_BYTES);
        assert_ne!(first, second);
    }
}
