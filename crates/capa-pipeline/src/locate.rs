//! Positions in the model's own code.

/// A 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

/// The position of byte `offset` of `source`, whose first line is line `first_line` of the
/// model's code.
#[expect(
    clippy::cast_possible_truncation,
    reason = "a model's code is kilobytes long, far from u32::MAX lines or columns"
)]
pub(crate) fn position(source: &str, offset: usize, first_line: u32) -> Position {
    let offset = offset.min(source.len());
    let before = source.get(..offset).unwrap_or(source);
    let line = before.matches('\n').count() as u32;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32;
    Position {
        line: first_line + line,
        column: column + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_are_one_based() {
        let source = "a\nbcd\nef";
        assert_eq!(position(source, 0, 1), Position { line: 1, column: 1 });
        assert_eq!(position(source, 4, 1), Position { line: 2, column: 3 });
        assert_eq!(
            position(source, 7, 10),
            Position {
                line: 12,
                column: 2
            }
        );
    }
}
