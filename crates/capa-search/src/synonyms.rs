//! A small thesaurus of the words people and tool authors use for the same thing. People ask
//! to "open a bug report on a repo"; GitHub's tool says "Create a new issue in a repository".
//! BM25 only matches words, so a query word also searches its synonyms, at a discount, and a
//! tool that uses the person's own word still ranks first.
//!
//! The groups are general vocabulary of tools (actions, objects of developer and office work),
//! not fitted to any catalog or query set. Each group is symmetric; a member may be several words
//! ("pull request"), each of which is searched.

use std::collections::HashMap;

use tantivy::tokenizer::TextAnalyzer;

use crate::analyzer;

/// A synonym counts for less than the word itself…
pub(crate) const SYNONYM_WEIGHT: f32 = 0.3;
/// …unless no tool uses the word: then its synonyms are all the query has of it.
pub(crate) const STAND_IN_WEIGHT: f32 = 0.8;

const GROUPS: &[&[&str]] = &[
    // actions
    &[
        "create", "new", "add", "make", "open", "start", "register", "insert",
    ],
    &[
        "delete", "remove", "erase", "drop", "destroy", "trash", "purge",
    ],
    &[
        "update", "edit", "modify", "change", "patch", "rename", "set",
    ],
    &[
        "get", "fetch", "retrieve", "read", "show", "view", "lookup", "see", "display",
    ],
    &["list", "enumerate", "browse", "all", "index"],
    &[
        "search", "find", "query", "lookup", "look", "locate", "discover", "grep",
    ],
    &["send", "post", "publish", "share", "deliver"],
    &[
        "run", "execute", "exec", "invoke", "launch", "trigger", "call",
    ],
    &["stop", "kill", "terminate", "halt", "cancel", "abort"],
    &["close", "resolve", "finish", "complete", "done"],
    &["download", "export", "save", "pull"],
    &["upload", "import", "push"],
    &["write", "save", "store", "put"],
    &["summarize", "summary", "tldr", "digest", "overview"],
    &["translate", "translation"],
    &["convert", "transform", "format"],
    &["count", "number", "total", "how many"],
    &["schedule", "book", "plan", "calendar"],
    &["subscribe", "follow", "watch", "star"],
    &["approve", "accept", "merge"],
    &["assign", "allocate", "delegate"],
    &["login", "signin", "authenticate", "auth"],
    // objects
    &["repository", "repo", "project", "codebase"],
    &[
        "issue",
        "bug",
        "bug report",
        "ticket",
        "defect",
        "problem",
        "report",
    ],
    &["pull request", "pr", "merge request", "mr", "patch"],
    &["commit", "revision", "changeset"],
    &["branch", "ref"],
    &["message", "msg", "chat", "dm", "post", "text"],
    &["email", "mail", "gmail", "inbox"],
    &["channel", "room", "chat"],
    &["file", "document", "doc", "attachment"],
    &["directory", "folder", "dir"],
    &[
        "user", "account", "person", "member", "profile", "people", "me", "whoami",
    ],
    &["team", "group", "organization", "org"],
    &["container", "docker"],
    &["kubernetes", "k8s", "kubectl", "cluster", "pod"],
    &["database", "db", "sql", "table"],
    &["spreadsheet", "sheet", "excel", "csv"],
    &["presentation", "slides", "powerpoint", "ppt", "deck"],
    &["image", "picture", "photo", "screenshot", "img"],
    &["video", "movie", "clip"],
    &["webpage", "page", "website", "site", "url", "link", "web"],
    &["weather", "forecast", "temperature", "climate"],
    &["stock", "share", "ticker", "quote", "price", "market"],
    &["money", "payment", "invoice", "charge", "billing"],
    &["customer", "client", "buyer"],
    &["note", "memo", "notes"],
    &["task", "todo", "job", "work item", "checklist"],
    &["event", "meeting", "appointment"],
    &["log", "logs", "history", "audit"],
    &["error", "exception", "crash", "failure", "incident"],
    &["build", "pipeline", "ci", "workflow", "action"],
    &["release", "version", "tag"],
    &["comment", "reply", "review", "feedback"],
    &["secret", "credential", "token", "password", "key"],
    &["permission", "role", "access", "policy"],
    &["map", "location", "place", "address", "directions", "route"],
    &["news", "headlines", "articles"],
    &["recipe", "cook", "cooking", "dish", "meal"],
    &["train", "rail", "railway"],
    &["flight", "plane", "airline"],
    &["package", "library", "dependency", "module", "npm", "crate"],
    &["documentation", "docs", "manual", "reference", "guide"],
    &["random", "roll", "dice", "flip"],
    &["time", "clock", "date", "timezone"],
    &["latest", "recent", "newest", "last"],
];

/// Query word (analysed) → its synonyms' terms (analysed), without the word itself; and the
/// same for two-word phrases ("bug report", "pull request"), which name one thing.
#[derive(Debug, Default)]
pub(crate) struct Thesaurus {
    by_term: HashMap<String, Vec<String>>,
    by_phrase: HashMap<(String, String), Vec<String>>,
}

impl Thesaurus {
    /// Analyses every group with `analyzer`, so synonyms meet the index's terms.
    pub(crate) fn new(analyzer: &mut TextAnalyzer) -> Self {
        let mut by_term: HashMap<String, Vec<String>> = HashMap::new();
        let mut by_phrase: HashMap<(String, String), Vec<String>> = HashMap::new();
        for group in GROUPS {
            let members: Vec<Vec<String>> = group
                .iter()
                .map(|member| analyzer::terms(analyzer, member))
                .filter(|terms| !terms.is_empty())
                .collect();
            for (i, member) in members.iter().enumerate() {
                let entry = match member.as_slice() {
                    [word] => by_term.entry(word.clone()).or_default(),
                    [first, second] => by_phrase
                        .entry((first.clone(), second.clone()))
                        .or_default(),
                    _ => continue,
                };
                for (j, other) in members.iter().enumerate() {
                    if i == j {
                        continue;
                    }
                    for term in other {
                        if !member.contains(term) && !entry.contains(term) {
                            entry.push(term.clone());
                        }
                    }
                }
            }
        }
        Self { by_term, by_phrase }
    }

    /// Synonyms of the phrase `first second`.
    pub(crate) fn of_phrase(&self, first: &str, second: &str) -> &[String] {
        self.by_phrase
            .get(&(first.to_owned(), second.to_owned()))
            .map_or(&[], Vec::as_slice)
    }

    pub(crate) fn of(&self, term: &str) -> &[String] {
        self.by_term.get(term).map_or(&[], Vec::as_slice)
    }
}
