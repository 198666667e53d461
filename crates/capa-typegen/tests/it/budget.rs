//! Every single tool and every namespace of every catalog fits the default budget.

use capa_typegen::{DEFAULT_BUDGET, describe};

use crate::catalogs;

#[test]
fn every_tool_and_namespace_fits_the_default_budget() {
    let started = std::time::Instant::now();
    let mut described = 0;
    for file in catalogs::FILES {
        let tools = catalogs::load(file);
        let specs = catalogs::specs(&tools);
        // A description depends only on its namespace's tools (and the namespace's global
        // name, which no catalog makes clash), so each namespace is passed on its own: the
        // same outputs, without re-reading 6,000 tools per call in a debug build.
        for namespace in catalogs::namespaces(&specs) {
            let mut targets: Vec<String> = namespace
                .iter()
                .map(|s| format!("{}.{}", s.namespace, s.name))
                .collect();
            targets.push(namespace[0].namespace.to_owned());
            for target in targets {
                let description =
                    describe(namespace, std::slice::from_ref(&target), DEFAULT_BUDGET)
                        .unwrap_or_else(|e| panic!("{target}: {e}"));
                // `describe` counted its final text exactly; the github tests check the count.
                let tokens = description.tokens;
                assert!(tokens <= DEFAULT_BUDGET, "{target}: {tokens} tokens");
                described += 1;
            }
        }
    }
    eprintln!(
        "{described} descriptions within {DEFAULT_BUDGET} tokens in {:.1?}",
        started.elapsed()
    );
}
