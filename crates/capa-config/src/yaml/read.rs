//! A file's text into its type, with every problem of its shape: the tree is built once, then
//! read into the type in passes. A pass that meets a missing field teaches the next one that
//! the struct needs it (the derived code only says so after the whole map is read); every other
//! problem is noted without stopping, so the last pass reports them all.

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::ConfigIssue;
use crate::located::Position;
use crate::yaml::build::build;
use crate::yaml::de::{DeError, DeErrorKind, NodeDe, Pass};
use crate::yaml::limits::MAX_ISSUES;
use crate::yaml::problem::{FieldPath, Problem, Shape};
use crate::yaml::tree::{Node, Value};

/// Passes before giving up; each pass learns one needed field, and the file types have about
/// ten.
const MAX_PASSES: usize = 32;

/// What reading a file gave: its value when the YAML could be read (even with problems, so that
/// the file's other rules can still be checked), and the problems of its shape.
#[derive(Debug)]
pub(crate) struct Read<T> {
    pub value: Option<T>,
    pub issues: Vec<ConfigIssue>,
}

/// Reads `text` (the contents of `file`) as a `T`; fixes that need the format point at `docs`.
/// An empty document (nothing, comments, `~`) reads as an empty map.
pub(crate) fn read<T: DeserializeOwned>(file: &Path, text: &str, docs: &str) -> Read<T> {
    let built = match build(text) {
        Ok(built) => built,
        Err(fatal) => {
            return Read {
                value: None,
                issues: vec![fatal.to_issue(file)],
            };
        }
    };
    let root = match built.root {
        Some(node) if !matches!(&node.value, Value::Scalar(s) if s.is_null()) => node,
        _ => Node {
            position: Position { line: 1, column: 1 },
            value: Value::Map(Vec::new()),
            placeholder: false,
        },
    };
    let mut shapes = built.shapes;
    let mut required: BTreeMap<&'static str, Vec<&'static str>> = BTreeMap::new();
    for _ in 0..MAX_PASSES {
        let pass = Pass {
            required: required.clone(),
            ..Pass::default()
        };
        let result = T::deserialize(NodeDe {
            node: &root,
            path: FieldPath::default(),
            pass: &pass,
        });
        let learnt = match &result {
            Err(DeError {
                kind: DeErrorKind::MissingField(field),
                at: Some((_, _, name)),
            }) if !required.get(name).is_some_and(|f| f.contains(field)) => Some((*name, *field)),
            _ => None,
        };
        if let Some((name, field)) = learnt {
            required.entry(name).or_default().push(field);
            continue;
        }
        shapes.extend(pass.shapes.into_inner());
        let value = match result {
            Ok(value) => Some(value),
            Err(error) => {
                let message = error.to_string();
                let (path, position) = match error.at {
                    Some((path, position, _)) => (path, position),
                    None => (FieldPath::default(), Position::default()),
                };
                shapes.push(Shape {
                    path,
                    position,
                    problem: Problem::Other(message),
                });
                None
            }
        };
        return Read {
            value,
            issues: shapes.iter().map(|s| s.to_issue(file, docs)).collect(),
        };
    }
    Read {
        value: None,
        issues: shapes.iter().map(|s| s.to_issue(file, docs)).collect(),
    }
}

/// The problems of a file in one list: those of its shape, then those its rules found
/// (`checked`), in file order and at most [`MAX_ISSUES`]. A rule's problem at an unknown
/// position is about a stand-in for a broken value, so it is a consequence of a shape problem
/// already listed and is left out.
pub(crate) fn settle(shape: Vec<ConfigIssue>, checked: Vec<ConfigIssue>) -> Vec<ConfigIssue> {
    let had_shape_problems = !shape.is_empty();
    let mut issues = shape;
    issues.extend(
        checked
            .into_iter()
            .filter(|i| !had_shape_problems || i.position.line != 0),
    );
    issues.sort_by_key(|i| (i.position.line, i.position.column));
    if issues.len() > MAX_ISSUES {
        let more = issues.len() - MAX_ISSUES;
        let file = issues[0].file.clone();
        issues.truncate(MAX_ISSUES);
        issues.push(ConfigIssue {
            file,
            position: Position::default(),
            message: format!("and {more} more problems"),
            fix: Some("fix the ones above first; the rest are listed on the next check".to_owned()),
        });
    }
    issues
}
