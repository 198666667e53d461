//! Configuration errors that name the file, the line and column, and the fix.

use std::fmt;
use std::path::PathBuf;

use crate::located::Position;

/// One problem in a capabilities file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigIssue {
    /// The file that holds the problem.
    pub file: PathBuf,
    /// Where in the file; `0:0` when the problem is not tied to one place.
    pub position: Position,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when there is one obvious fix.
    pub fix: Option<String>,
}

impl fmt::Display for ConfigIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.position.line > 0 {
            write!(f, ":{}:{}", self.position.line, self.position.column)?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(fix) = &self.fix {
            write!(f, "\n  fix: {fix}")?;
        }
        Ok(())
    }
}

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", file.display())]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file could not be written (the policy file, which capa edits).
    #[error("cannot write {}: {source}", file.display())]
    Write {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file was read but holds one or more problems; every one found is listed.
    #[error("{}", display_issues(.0))]
    Invalid(Vec<ConfigIssue>),
}

impl ConfigError {
    /// The issues of an invalid file (empty for read errors).
    pub fn issues(&self) -> &[ConfigIssue] {
        match self {
            Self::Invalid(issues) => issues,
            Self::Read { .. } | Self::Write { .. } => &[],
        }
    }
}

fn display_issues(issues: &[ConfigIssue]) -> String {
    let lines: Vec<String> = issues.iter().map(ToString::to_string).collect();
    lines.join("\n")
}
