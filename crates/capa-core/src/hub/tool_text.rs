//! Flagged tool text (docs/tool-text.md): which tools of the catalog have text that hides
//! characters or turns on the model, read from the definitions as their sources sent them, and
//! a person's Accept of one exact text. Tag characters are removed from what the model reads
//! where definitions enter the core ([`Hub::definitions`]); this module only judges.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use capa_domain::SharedCatalog;
use capa_domain::tool_text::{self, TextContext, TextFlag, TextReview};

use super::{ChangedBy, Hub};
use crate::clock::now_ms;
use crate::digest::sha256_hex;

/// Why an Accept was not recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolTextError {
    /// No tool at that address is served now.
    #[error("no tool `{0}` is served now; `capa tools list` shows the tools")]
    UnknownTool(String),
    /// The tool's text breaks no rule: nothing to accept.
    #[error("`{0}` is not flagged: there is nothing to accept")]
    NotFlagged(String),
    /// The text changed since the person saw it: they accept what they saw, never what came
    /// after.
    #[error(
        "the text of `{0}` changed since it was shown (its digest differs): look at it again and accept what is shown now"
    )]
    Changed(String),
    /// Only a person may accept (the bearer token alone is not one).
    #[error(
        "accepting a flagged tool needs a person: in the Capabilities app (Tools page), or `capa tools accept-text <address>` at an interactive terminal"
    )]
    PersonRequired,
    /// The database could not be written.
    #[error("the hub's database could not record it: {0}; try again")]
    Store(String),
}

impl ToolTextError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownTool(_) => "unknown_tool",
            Self::NotFlagged(_) => "not_flagged",
            Self::Changed(_) => "text_changed",
            Self::PersonRequired => "person_required",
            Self::Store(_) => "store_unavailable",
        }
    }
}

/// `definition` with the Unicode tag characters out of what a model reads, and a notice where
/// there were some: applied to each definition as it enters the core ([`Hub::definitions`]).
pub(super) fn for_model(
    mut definition: capa_domain::ToolDefinition,
) -> capa_domain::ToolDefinition {
    tool_text::for_model(&mut definition);
    definition
}

/// The flags and text digest of each flagged tool, by address.
type Judged = BTreeMap<String, (Vec<TextFlag>, String)>;

/// The flags of the last judged listing, kept until the catalog or a source's tool list changes
/// (judging thousands of tools is work a listing need not repeat).
#[derive(Default)]
pub(super) struct FlagsCache(Mutex<Option<(Key, Arc<Judged>)>>);

/// What the flags were judged on: the catalog and each source's tool list as the source sent it.
type Key = (SharedCatalog, Vec<Arc<Vec<capa_upstream::Tool>>>);

fn same(a: &Key, b: &Key) -> bool {
    Arc::ptr_eq(&a.0, &b.0)
        && a.1.len() == b.1.len()
        && a.1.iter().zip(&b.1).all(|(x, y)| Arc::ptr_eq(x, y))
}

impl Hub {
    /// Every served tool whose text breaks a rule, by address, with whether a person accepted
    /// that exact text. Tools with clean text are not in the map.
    pub fn tool_text_reviews(&self) -> BTreeMap<String, TextReview> {
        let accepted = self.store.accepted_tool_texts().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "could not read the accepted tool texts");
            HashSet::new()
        });
        self.judged_tool_texts()
            .iter()
            .map(|(address, (flags, digest))| {
                let review = TextReview {
                    flags: flags.clone(),
                    accepted: accepted.contains(&(address.clone(), digest.clone())),
                    digest: digest.clone(),
                };
                (address.clone(), review)
            })
            .collect()
    }

    /// The flags of the current listing, judged now unless they were for the same one.
    fn judged_tool_texts(&self) -> Arc<Judged> {
        let catalog = self.catalog();
        let upstreams = self.lock_upstreams().clone();
        let sources: Vec<(String, Arc<Vec<capa_upstream::Tool>>)> = self
            .source_defs()
            .into_iter()
            .filter_map(|d| {
                let tools = upstreams.get(&(d.id.clone(), None))?.tools();
                Some((d.id, tools))
            })
            .collect();
        let key: Key = (
            catalog.clone(),
            sources.iter().map(|(_, t)| t.clone()).collect(),
        );
        let mut slot = self
            .text_flags
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((judged_on, judged)) = slot.as_ref()
            && same(judged_on, &key)
        {
            return judged.clone();
        }
        let judged = Arc::new(self.judge(&catalog, &sources));
        *slot = Some((key, judged.clone()));
        judged
    }

    /// Judges the text of every tool of `sources` as the source sent it.
    fn judge(
        &self,
        catalog: &SharedCatalog,
        sources: &[(String, Arc<Vec<capa_upstream::Tool>>)],
    ) -> Judged {
        let addresses: HashSet<String> = catalog
            .tools()
            .iter()
            .map(|t| t.address.to_string())
            .collect();
        let mut judged = Judged::new();
        for (id, tools) in sources {
            let own = format!("{id}.");
            let is_other_tool = |a: &str| addresses.contains(a) && !a.starts_with(&own);
            let context = TextContext {
                namespace: id,
                is_other_tool: &is_other_tool,
            };
            for tool in tools.iter() {
                let definition = crate::tools::definition_of(tool);
                let flags = tool_text::inspect(&definition, &context);
                if flags.is_empty() {
                    continue;
                }
                let flags: Vec<TextFlag> = flags
                    .into_iter()
                    .map(|f| TextFlag {
                        message: self.redactor.redact(&f.message),
                        ..f
                    })
                    .collect();
                let digest = sha256_hex(
                    self.redactor
                        .redact(&tool_text::text_of(&definition))
                        .as_bytes(),
                );
                for listed in catalog
                    .tools()
                    .iter()
                    .filter(|t| t.address.namespace == *id && t.remote_name == definition.name)
                {
                    judged.insert(listed.address.to_string(), (flags.clone(), digest.clone()));
                }
            }
        }
        judged
    }

    /// A person accepts the flagged text of `address` as it was shown to them (`digest`): the
    /// tool is listed without its warning until its text changes.
    pub fn accept_tool_text(
        &self,
        address: &str,
        digest: &str,
        by: ChangedBy,
    ) -> Result<(), ToolTextError> {
        if by != ChangedBy::Person {
            return Err(ToolTextError::PersonRequired);
        }
        let shown = self.redactor.redact(address);
        let reviews = self.tool_text_reviews();
        let Some(review) = reviews.get(address) else {
            return Err(if self.catalog().get(address).is_some() {
                ToolTextError::NotFlagged(shown)
            } else {
                ToolTextError::UnknownTool(shown)
            });
        };
        if review.digest != digest {
            return Err(ToolTextError::Changed(shown));
        }
        self.store
            .accept_tool_text(address, digest, now_ms())
            .map_err(|e| ToolTextError::Store(e.to_string()))?;
        tracing::info!(address = %shown, rules = %review.codes(), "a person accepted a flagged tool text");
        Ok(())
    }
}
