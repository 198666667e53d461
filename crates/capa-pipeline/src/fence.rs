//! Models often wrap code in a Markdown fence, with prose around it: run the fenced code.

/// The code of a fenced block, and the line (1-based, in the original text) where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fenced {
    pub text: String,
    pub first_line: u32,
}

/// The body of the first ```` ``` ```` block, when the text has one. An unclosed fence runs to
/// the end.
pub(crate) fn body(code: &str) -> Option<Fenced> {
    let lines: Vec<&str> = code.lines().collect();
    let open = lines
        .iter()
        .position(|line| line.trim_start().starts_with("```"))?;
    let close = lines[open + 1..]
        .iter()
        .position(|line| line.trim_start().starts_with("```"))
        .map_or(lines.len(), |i| open + 1 + i);
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a model's code is kilobytes long, far from u32::MAX lines"
    )]
    let first_line = open as u32 + 2;
    Some(Fenced {
        text: lines[open + 1..close].join("\n"),
        first_line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_first_fenced_block() {
        let code = "Here you go:\n```ts\nconst a = 1;\nreturn a;\n```\nDone.";
        let fenced = body(code).expect("fenced");
        assert_eq!(fenced.text, "const a = 1;\nreturn a;");
        assert_eq!(fenced.first_line, 3);
        assert_eq!(body("return 1;"), None);
        assert_eq!(body("```\nreturn 2;").expect("open").text, "return 2;");
    }
}
