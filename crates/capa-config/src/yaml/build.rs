//! From the YAML parser's events to a [`Node`] tree, without recursion: open lists and maps are
//! kept on a stack, so input nested 100,000 deep costs a check, not the stack. Depth, values and
//! text (alias copies included) are counted as they arrive and reading stops at the first limit
//! crossed. A key written twice is reported with both lines (the first is kept) and reading goes
//! on; `<<: *anchor` merges are applied here, as YAML 1.1 defines them.

use std::collections::HashMap;

use serde_saphyr::granit_parser::{Event, Options, Parser, ScalarStyle, Span};

use crate::located::Position;
use crate::yaml::fatal::Fatal;
use crate::yaml::limits::{MAX_DEPTH, MAX_TEXT_BYTES, MAX_VALUES};
use crate::yaml::problem::{FieldPath, Problem, Seg, Shape};
use crate::yaml::tree::{CoreTag, Found, Key, Node, Scalar, Value};

/// The document's top value (none for a file of comments) and the problems met on the way.
#[derive(Debug)]
pub(crate) struct Built {
    pub root: Option<Node>,
    pub shapes: Vec<Shape>,
}

/// How much a value holds, itself included: values, scalar bytes, and levels of lists and maps.
#[derive(Debug, Clone, Copy, Default)]
struct Size {
    values: usize,
    bytes: usize,
    depth: usize,
}

impl Size {
    fn add(&mut self, child: Size) {
        self.values += child.values;
        self.bytes += child.bytes;
        self.depth = self.depth.max(child.depth + 1);
    }
}

/// What a map waits for after its key.
#[derive(Debug)]
enum PendingKey {
    Text(Key),
    Merge,
    /// A list or map used as a key; its value is read and dropped.
    Bad {
        found: String,
        position: Position,
    },
}

#[derive(Debug)]
enum Open {
    List(Vec<Node>),
    Map {
        entries: Vec<(Key, Node)>,
        /// Line of each key written so far, to report a second one with both lines.
        lines: HashMap<String, u64>,
        key: Option<PendingKey>,
        merges: Vec<Node>,
    },
}

#[derive(Debug)]
struct Frame {
    position: Position,
    anchor: usize,
    /// This collection's step from its parent, for the paths of problems inside it.
    seg: Option<Seg>,
    size: Size,
    open: Open,
}

struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
    shapes: Vec<Shape>,
    anchors: HashMap<usize, (Node, Size)>,
    values: usize,
    bytes: usize,
}

fn position(span: &Span) -> Position {
    Position {
        line: span.start.line() as u64,
        column: span.start.col() as u64 + 1,
    }
}

/// Reads `text` into a tree, or stops at the first problem that leaves nothing to read.
pub(crate) fn build(text: &str) -> Result<Built, Fatal> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(Fatal::TooMuch {
            position: Position::default(),
            by_alias: false,
        });
    }
    let mut builder = Builder {
        stack: Vec::new(),
        root: None,
        shapes: Vec::new(),
        anchors: HashMap::new(),
        values: 0,
        bytes: 0,
    };
    let mut documents = 0;
    // The parser looks ahead for keys, so it meets deep brackets before their events reach
    // the check in `open`; its own nesting limits, set to ours, stop it at the same depth.
    let mut options = Options::default();
    options.flow_nesting_limit = MAX_DEPTH;
    options.block_nesting_limit = MAX_DEPTH;
    for event in Parser::new_from_str_with_options(text, options) {
        let (event, span) = event.map_err(|e| Fatal::from_scan(&e))?;
        let at = position(&span);
        match event {
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return Err(Fatal::SecondDocument { position: at });
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                builder.count(1, text.len(), at, false)?;
                let tag = tag
                    .as_deref()
                    .and_then(|t| t.core_suffix())
                    .and_then(CoreTag::from_suffix);
                let size = Size {
                    values: 1,
                    bytes: text.len(),
                    depth: 0,
                };
                let node = Node {
                    position: at,
                    value: Value::Scalar(Scalar {
                        text: text.into_owned(),
                        plain: style == ScalarStyle::Plain,
                        tag,
                    }),
                    placeholder: false,
                };
                builder.complete(node, size, anchor)?;
            }
            Event::SequenceStart(_, anchor, _) => {
                builder.open(at, anchor, Open::List(Vec::new()))?;
            }
            Event::MappingStart(_, anchor, _) => builder.open(
                at,
                anchor,
                Open::Map {
                    entries: Vec::new(),
                    lines: HashMap::new(),
                    key: None,
                    merges: Vec::new(),
                },
            )?,
            Event::SequenceEnd | Event::MappingEnd => builder.close()?,
            Event::Alias(id) => builder.alias(id, at)?,
            // Stream and document ends, comments and anchor names carry no values.
            _ => {}
        }
    }
    Ok(Built {
        root: builder.root,
        shapes: builder.shapes,
    })
}

impl Builder {
    fn count(
        &mut self,
        values: usize,
        bytes: usize,
        at: Position,
        by_alias: bool,
    ) -> Result<(), Fatal> {
        self.values += values;
        self.bytes += bytes;
        if self.values > MAX_VALUES || self.bytes > MAX_TEXT_BYTES {
            return Err(Fatal::TooMuch {
                position: at,
                by_alias,
            });
        }
        Ok(())
    }

    /// The path of the innermost open collection.
    fn path(&self) -> FieldPath {
        FieldPath(self.stack.iter().filter_map(|f| f.seg.clone()).collect())
    }

    /// The step a value about to be added to the innermost collection takes.
    fn next_seg(&self) -> Option<Seg> {
        let frame = self.stack.last()?;
        Some(match &frame.open {
            Open::List(items) => Seg::Index(items.len()),
            Open::Map {
                key: Some(PendingKey::Text(key)),
                ..
            } => Seg::Key(key.text.clone()),
            Open::Map {
                key: Some(PendingKey::Merge),
                ..
            } => Seg::Key("<<".to_owned()),
            Open::Map { .. } => Seg::Key("?".to_owned()),
        })
    }

    fn open(&mut self, at: Position, anchor: usize, open: Open) -> Result<(), Fatal> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(Fatal::TooDeep { position: at });
        }
        self.count(1, 0, at, false)?;
        let seg = self.next_seg();
        self.stack.push(Frame {
            position: at,
            anchor,
            seg,
            size: Size {
                values: 1,
                bytes: 0,
                depth: 1,
            },
            open,
        });
        Ok(())
    }

    fn close(&mut self) -> Result<(), Fatal> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        let path = self.path().child_opt(frame.seg.clone());
        let value = match frame.open {
            Open::List(items) => Value::List(items),
            Open::Map {
                mut entries,
                mut lines,
                merges,
                ..
            } => {
                for merge in merges {
                    self.merge(&path, merge, &mut entries, &mut lines);
                }
                Value::Map(entries)
            }
        };
        let node = Node {
            position: frame.position,
            value,
            placeholder: false,
        };
        self.complete(node, frame.size, frame.anchor)
    }

    /// Adds the entries of `source` (a map, or a list of maps) that `entries` lacks: keys written
    /// in the map itself, and those of earlier sources, win.
    fn merge(
        &mut self,
        path: &FieldPath,
        source: Node,
        entries: &mut Vec<(Key, Node)>,
        lines: &mut HashMap<String, u64>,
    ) {
        let maps = match source.value {
            Value::Map(_) | Value::Scalar(_) => vec![source],
            Value::List(items) => items,
        };
        for map in maps {
            match map.value {
                Value::Map(merged) => {
                    for (key, value) in merged {
                        if !lines.contains_key(&key.text) {
                            lines.insert(key.text.clone(), key.position.line);
                            entries.push((key, value));
                        }
                    }
                }
                other => self.shapes.push(Shape {
                    path: path.child(Seg::Key("<<".to_owned())),
                    position: map.position,
                    problem: Problem::BadMerge {
                        found: Found(&other).to_string(),
                    },
                }),
            }
        }
    }

    fn alias(&mut self, id: usize, at: Position) -> Result<(), Fatal> {
        let Some((node, size)) = self.anchors.get(&id) else {
            // The parser refuses aliases to names never defined, so this one is inside the
            // value its anchor marks, which would then contain itself.
            return Err(Fatal::SelfAlias { position: at });
        };
        let (mut node, size) = (node.clone(), *size);
        if self.stack.len() + size.depth > MAX_DEPTH {
            return Err(Fatal::TooDeep { position: at });
        }
        self.count(size.values, size.bytes, at, true)?;
        node.position = at;
        self.complete(node, size, 0)
    }

    /// A finished value goes into the innermost open collection, or is the document. An
    /// anchored one is also kept for its aliases; that copy counts against the limits too, so
    /// anchors nested in anchors cannot multiply what is held.
    fn complete(&mut self, node: Node, size: Size, anchor: usize) -> Result<(), Fatal> {
        if anchor != 0 {
            self.count(size.values, size.bytes, node.position, true)?;
            self.anchors.insert(anchor, (node.clone(), size));
        }
        let path = self.path();
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        frame.size.add(size);
        match &mut frame.open {
            Open::List(items) => items.push(node),
            Open::Map {
                entries,
                lines,
                key,
                merges,
            } => match key.take() {
                None => {
                    *key = Some(match node.value {
                        Value::Scalar(Scalar {
                            text, plain: true, ..
                        }) if text == "<<" => PendingKey::Merge,
                        Value::Scalar(scalar) => PendingKey::Text(Key {
                            text: scalar.text,
                            position: node.position,
                        }),
                        other => PendingKey::Bad {
                            found: Found(&other).to_string(),
                            position: node.position,
                        },
                    });
                }
                Some(PendingKey::Text(k)) => {
                    if let Some(first_line) = lines.get(&k.text) {
                        self.shapes.push(Shape {
                            path: path.child(Seg::Key(k.text.clone())),
                            position: k.position,
                            problem: Problem::Duplicate {
                                first_line: *first_line,
                                second_line: k.position.line,
                            },
                        });
                    } else {
                        lines.insert(k.text.clone(), k.position.line);
                        entries.push((k, node));
                    }
                }
                Some(PendingKey::Merge) => merges.push(node),
                Some(PendingKey::Bad { found, position }) => self.shapes.push(Shape {
                    path,
                    position,
                    problem: Problem::KeyNotText { found },
                }),
            },
        }
        Ok(())
    }
}

impl FieldPath {
    fn child_opt(self, seg: Option<Seg>) -> Self {
        match seg {
            Some(seg) => self.child(seg),
            None => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        build(text).expect("reads").root.expect("a document")
    }

    #[test]
    fn positions_are_one_based_lines_and_columns() {
        let node = root("servers:\n  - id: a\n");
        let Value::Map(entries) = &node.value else {
            panic!("a map: {node:?}");
        };
        assert_eq!(entries[0].0.position, Position { line: 1, column: 1 });
        let Value::List(items) = &entries[0].1.value else {
            panic!("a list");
        };
        assert_eq!(items[0].position, Position { line: 2, column: 5 });
    }

    #[test]
    fn a_second_key_is_reported_with_both_lines_and_the_first_kept() {
        let built = build("a: 1\nb: 2\na: 3\n").expect("reads");
        assert_eq!(built.shapes.len(), 1, "{:?}", built.shapes);
        assert_eq!(
            built.shapes[0].problem,
            Problem::Duplicate {
                first_line: 1,
                second_line: 3
            }
        );
        let Some(Node {
            value: Value::Map(entries),
            ..
        }) = built.root
        else {
            panic!("a map");
        };
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn merges_fill_in_keys_the_map_lacks() {
        let node = root("d: &d {command: x, cwd: /}\ne:\n  <<: *d\n  cwd: /tmp\n");
        let Value::Map(top) = &node.value else {
            panic!("a map");
        };
        let Value::Map(e) = &top[1].1.value else {
            panic!("a map");
        };
        let keys: Vec<&str> = e.iter().map(|(k, _)| k.text.as_str()).collect();
        assert_eq!(keys, ["cwd", "command"]);
    }

    #[test]
    fn a_file_of_comments_has_no_document() {
        assert!(build("# nothing\n").expect("reads").root.is_none());
    }
}
