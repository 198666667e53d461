//! `namespace: false` on a server: its tools and prompts keep the server's own names where the
//! hub serves it alone (docs/relay.md, "One source under its own names"). Names of two sources
//! could collide, so the option is refused where nothing would ever serve the source alone.

use super::Checker;
use crate::file::CapabilitiesFile;
use crate::resolved::ProfileConfig;

/// Reports each `namespace: false` server that this file never serves alone: neither the
/// file's only server with the demo source off, nor the one source of one of its profiles.
pub(super) fn check_bare_names(
    checker: &mut Checker<'_>,
    parsed: &CapabilitiesFile,
    profiles: &[ProfileConfig],
) {
    let enabled = parsed.servers.iter().filter(|s| !s.disabled).count();
    let demo = parsed.options.demo.unwrap_or(true);
    for server in &parsed.servers {
        let Some(namespace) = server.namespace.as_ref().filter(|n| !n.value) else {
            continue;
        };
        let id = server.id.as_str();
        let alone_in_file = enabled == 1 && !demo;
        let alone_in_profile = profiles.iter().any(|p| {
            p.sources
                .as_ref()
                .is_some_and(|s| s.len() == 1 && s.contains(id))
        });
        if !(alone_in_file || alone_in_profile) {
            checker.issue(
                namespace.position,
                format!(
                    "server `{id}` has `namespace: false`, but the hub never serves it alone, and two sources' tools could share a name"
                ),
                format!(
                    "serve it alone: make it the file's only server and set `options.demo: false`, or add a profile with `sources: [{id}]`; or remove `namespace: false`"
                ),
            );
        }
    }
}
