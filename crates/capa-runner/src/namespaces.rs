//! A run's sandbox globals, made once for a catalog and the policy it is listed by.
//!
//! Every run needs its namespaces: each source a global, each tool the policy does not deny a
//! member of it, with identifier forms of both (the same rule as the TypeScript declarations).
//! Made afresh for each run that was the policy's decision for every tool, two passes of
//! `member_names` and every address formatted again: about 8 ms of a core per run on a hub
//! with 6,000 tools. They change only when the catalog, the policy or the sources a run waits
//! for change, so a few recent lists are kept, and runs with the same ones share one list
//! (which the sandbox pool, in turn, compares by pointer first).

use std::sync::{Arc, Mutex, PoisonError, Weak};

use capa_domain::catalog::Catalog;
use capa_domain::{CatalogTool, Policy, SharedCatalog};
use capa_sandbox::{Namespace, ToolBinding};

use crate::gateway::Unready;

/// Lists kept: one a profile the hub's clients use at once is plenty.
const KEPT: usize = 4;

/// The recent runs' namespaces, shared by every runner of a hub.
#[derive(Default)]
pub struct NamespaceCache {
    recent: Mutex<Vec<Made>>,
}

impl std::fmt::Debug for NamespaceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.recent.lock().map_or(0, |recent| recent.len());
        f.debug_struct("NamespaceCache")
            .field("kept", &kept)
            .finish()
    }
}

/// One list and what it was made from. The catalog is held weakly: a catalog the hub replaced
/// is freed (a hub with thousands of tools would otherwise keep up to four), while its
/// allocation's header stays as long as this does, so no new catalog can take its address and
/// be mistaken for it.
struct Made {
    catalog: Weak<Catalog>,
    listing: Arc<Policy>,
    unready: Vec<Unready>,
    namespaces: Arc<[Namespace]>,
}

impl Made {
    fn is_for(&self, catalog: &SharedCatalog, listing: &Arc<Policy>, unready: &[Unready]) -> bool {
        std::ptr::eq(self.catalog.as_ptr(), Arc::as_ptr(catalog))
            && (Arc::ptr_eq(&self.listing, listing) || *self.listing == **listing)
            && self.unready == unready
    }

    /// Whether its catalog is gone, so that no run can ask for this list again.
    fn is_stale(&self) -> bool {
        self.catalog.strong_count() == 0
    }
}

impl NamespaceCache {
    /// The namespaces of a run over `catalog`, listed by `listing`, waiting for `unready`.
    pub(crate) fn get(
        &self,
        catalog: &SharedCatalog,
        listing: Arc<Policy>,
        unready: &[Unready],
    ) -> Arc<[Namespace]> {
        {
            let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(at) = recent
                .iter()
                .position(|made| made.is_for(catalog, &listing, unready))
            {
                // Most recent last: the one used now is kept longest.
                let made = recent.remove(at);
                let namespaces = made.namespaces.clone();
                recent.push(made);
                return namespaces;
            }
        }
        // Made outside the lock: two runs that miss at once each make the same list.
        let namespaces: Arc<[Namespace]> = make(catalog, &listing, unready).into();
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        recent.retain(|made| !made.is_stale());
        if recent.len() >= KEPT {
            recent.remove(0);
        }
        recent.push(Made {
            catalog: Arc::downgrade(catalog),
            listing,
            unready: unready.to_vec(),
            namespaces: namespaces.clone(),
        });
        namespaces
    }
}

/// The sources as sandbox globals: identifier forms of namespaces and tool names (the same
/// rule as the TypeScript declarations), tools the policy denies left out; and, from
/// `unready`, the sources that wait for their first connection, whose tools are not known
/// yet: any member of theirs is a call the run waits on until the person connected it.
fn make(catalog: &SharedCatalog, listing: &Policy, unready: &[Unready]) -> Vec<Namespace> {
    let mut groups: Vec<(&str, Vec<&CatalogTool>)> = Vec::new();
    for tool in catalog.tools() {
        if listing.hides(tool) {
            continue;
        }
        match groups.last_mut() {
            Some((ns, tools)) if *ns == tool.address.namespace => tools.push(tool),
            _ => groups.push((&tool.address.namespace, vec![tool])),
        }
    }
    let unlisted: Vec<&str> = unready
        .iter()
        .filter(|u| u.needs_connection && !groups.iter().any(|(ns, _)| *ns == u.source))
        .map(|u| u.source.as_str())
        .collect();
    let names: Vec<&str> = groups
        .iter()
        .map(|(ns, _)| *ns)
        .chain(unlisted.iter().copied())
        .collect();
    let mut globals = capa_typegen::member_names(&names);
    let unlisted_globals = globals.split_off(groups.len());
    let mut namespaces: Vec<Namespace> = groups
        .iter()
        .zip(globals)
        .map(|((_, tools), global)| {
            let tool_names: Vec<&str> = tools.iter().map(|t| t.address.name.as_str()).collect();
            let members = capa_typegen::member_names(&tool_names);
            Namespace {
                global,
                tools: tools
                    .iter()
                    .zip(members)
                    .map(|(tool, member)| ToolBinding {
                        member,
                        address: tool.address.to_string(),
                    })
                    .collect(),
                unlisted_source: None,
            }
        })
        .collect();
    namespaces.extend(
        unlisted
            .into_iter()
            .zip(unlisted_globals)
            .map(|(source, global)| Namespace {
                global,
                tools: Vec::new(),
                unlisted_source: Some(source.to_owned()),
            }),
    );
    namespaces
}

#[cfg(test)]
mod tests {
    use capa_domain::catalog::{Catalog, SourceTools};
    use capa_domain::{Decision, Rule, ToolDefinition};

    use super::*;

    fn catalog(names: &[&str]) -> SharedCatalog {
        let tools: Vec<ToolDefinition> = names
            .iter()
            .map(|name| {
                serde_json::from_value(serde_json::json!({
                    "name": name,
                    "inputSchema": { "type": "object" }
                }))
                .expect("tool")
            })
            .collect();
        Arc::new(Catalog::build([SourceTools {
            source_id: "notes",
            selection: &capa_config::ToolSelection::All,
            tools: &tools,
        }]))
    }

    fn denying(pattern: &str) -> Arc<Policy> {
        Arc::new(Policy::new(vec![Rule {
            pattern: pattern.to_owned(),
            connection: None,
            decision: Decision::Deny,
        }]))
    }

    fn members(namespaces: &[Namespace]) -> Vec<(String, Vec<String>)> {
        namespaces
            .iter()
            .map(|ns| {
                let tools = ns.tools.iter().map(|t| t.address.clone()).collect();
                (ns.global.clone(), tools)
            })
            .collect()
    }

    #[test]
    fn runs_over_the_same_catalog_and_policy_share_one_list() {
        let cache = NamespaceCache::default();
        let tools = catalog(&["add-note", "delete_note"]);
        let first = cache.get(&tools, denying("notes.delete_note"), &[]);
        // An equal policy in another allocation (a profile's is made per run) is the same.
        let second = cache.get(&tools, denying("notes.delete_note"), &[]);
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(
            members(&first),
            vec![("notes".to_owned(), vec!["notes.add-note".to_owned()])]
        );
        assert_eq!(first[0].tools[0].member, "add_note");
    }

    #[test]
    fn another_catalog_policy_or_unready_source_gets_its_own_list() {
        let cache = NamespaceCache::default();
        let tools = catalog(&["add_note", "delete_note"]);
        let base = cache.get(&tools, denying("other.*"), &[]);
        let stricter = cache.get(&tools, denying("notes.delete_note"), &[]);
        assert_eq!(base[0].tools.len(), 2);
        assert_eq!(stricter[0].tools.len(), 1);
        // The same content in a new catalog is a new catalog: the pointer is the key.
        let rebuilt = cache.get(
            &catalog(&["add_note", "delete_note"]),
            denying("other.*"),
            &[],
        );
        assert!(!Arc::ptr_eq(&base, &rebuilt));
        assert_eq!(members(&base), members(&rebuilt));
        let waiting = Unready {
            source: "mail".to_owned(),
            why: "waits for a sign-in".to_owned(),
            needs_connection: true,
        };
        let with_mail = cache.get(&tools, denying("other.*"), &[waiting]);
        assert_eq!(with_mail.len(), 2);
        assert_eq!(with_mail[1].unlisted_source.as_deref(), Some("mail"));
        // The first list is still kept (four are), and still served.
        assert!(Arc::ptr_eq(
            &base,
            &cache.get(&tools, denying("other.*"), &[])
        ));
    }

    #[test]
    fn a_catalog_the_hub_let_go_is_not_kept_alive() {
        let cache = NamespaceCache::default();
        let old = catalog(&["a"]);
        let weak = Arc::downgrade(&old);
        let _ = cache.get(&old, denying("x.*"), &[]);
        drop(old);
        assert_eq!(weak.strong_count(), 0, "the cache holds no catalog");
        // The next list made drops the stale one.
        let current = catalog(&["a"]);
        let _ = cache.get(&current, denying("x.*"), &[]);
        let kept = cache.recent.lock().map_or(0, |r| r.len());
        assert_eq!(kept, 1);
        let again = cache.get(&current, denying("x.*"), &[]);
        assert!(Arc::ptr_eq(
            &again,
            &cache.get(&current, denying("x.*"), &[])
        ));
    }

    #[test]
    fn only_the_latest_lists_are_kept() {
        let cache = NamespaceCache::default();
        let catalogs: Vec<SharedCatalog> = (0..=KEPT).map(|_| catalog(&["a"])).collect();
        let first = cache.get(&catalogs[0], denying("x.*"), &[]);
        for catalog in &catalogs[1..] {
            let _ = cache.get(catalog, denying("x.*"), &[]);
        }
        let again = cache.get(&catalogs[0], denying("x.*"), &[]);
        assert!(!Arc::ptr_eq(&first, &again), "the oldest list was let go");
    }
}
