//! Names: which strings are valid names, and how close two names are.

/// Connection names: lower-case letters, digits, `-`, `_`; 1 to 64 characters.
pub fn is_connection_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// Levenshtein distance in characters, for "did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("creat_issue", "create_issue"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("ünï", "uni"), 2);
    }

    #[test]
    fn connection_names() {
        assert!(is_connection_name("personal"));
        assert!(is_connection_name("work-2_b"));
        assert!(!is_connection_name(""));
        assert!(!is_connection_name("Work"));
        assert!(!is_connection_name("a.b"));
        assert!(!is_connection_name(&"a".repeat(65)));
    }
}
