//! BM25F scores checked against a hand computation, and against what tantivy's boosted
//! per-field sum gives for the same corpus (it must differ: that is the point of BM25F).

use capa_search::{Ranker, SearchIndex, ToolDoc};

fn doc(address: &str, description: &str, params: &[&str]) -> ToolDoc {
    ToolDoc {
        address: address.to_owned(),
        namespace: "t".to_owned(),
        title: None,
        description: description.to_owned(),
        params: params.iter().map(|p| (*p).to_owned()).collect(),
    }
}

fn corpus() -> SearchIndex {
    SearchIndex::build(vec![
        // name: t, issu, t.issu (3)   description: open, issu (2)        params: titl (1)
        doc("t.issues", "Open issues.", &["title"]),
        // name: t, label, t.label (3) description: label, issu, pull, request, issu (5)
        // params: issu, count (2)
        doc(
            "t.labels",
            "Labels of issues and pull requests, or issues.",
            &["issues", "count"],
        ),
        // name: t, whoami, t.whoami (3) description: who, am (2)    params: user (1)
        doc("t.whoami", "Who am I", &["user"]),
    ])
    .expect("index")
}

/// By hand, with the default parameters (k1 1.2; name w 3, b 0.5; description w 1, b 0.75;
/// params w 1.5, b 0.5). Average lengths: name 3, description 9/3 = 3, params 4/3.
/// The query "issues" is the term `issu`, in 2 of 3 documents:
///   idf = ln(1 + (3 − 2 + 0.5) / (2 + 0.5)) = ln 1.6 = 0.4700036
/// t.issues: tf~ = 3·1/(0.5 + 0.5·3/3) + 1·1/(0.25 + 0.75·2/3) = 3 + 1.3333333 = 4.3333333
///           score = 0.4700036 · 4.3333333 · 2.2 / (1.2 + 4.3333333) = 0.8097653
/// t.labels: tf~ = 1·2/(0.25 + 0.75·5/3) + 1.5·1/(0.5 + 0.5·2/(4/3)) = 1.3333333 + 1.2
///           score = 0.4700036 · 2.5333333 · 2.2 / (1.2 + 2.5333333) = 0.7016483
#[test]
fn bm25f_matches_the_hand_computation() {
    let index = corpus();
    let hits = index.search("issues").expect("search");
    let scored: Vec<(&str, f32)> = hits
        .iter()
        .map(|h| (index.docs()[h.doc].address.as_str(), h.score))
        .collect();
    assert_eq!(scored.len(), 2, "{scored:?}");
    assert_eq!(scored[0].0, "t.issues");
    assert!((scored[0].1 - 0.809_765_3).abs() < 1e-5, "{scored:?}");
    assert_eq!(scored[1].0, "t.labels");
    assert!((scored[1].1 - 0.701_648_3).abs() < 1e-5, "{scored:?}");
}

/// Summing per-field BM25 scores is another function: the same corpus scores otherwise.
#[test]
fn tantivy_boosted_sum_is_not_bm25f() {
    let index = corpus();
    let ours = index.search("issues").expect("bm25f");
    let summed = index
        .rank(Ranker::TantivyBoostedSum, "issues")
        .expect("boosted sum");
    assert_eq!(ours.len(), summed.len());
    for (a, b) in ours.iter().zip(&summed) {
        assert_eq!(a.doc, b.doc);
        assert!((a.score - b.score).abs() > 0.05, "{ours:?} vs {summed:?}");
    }
}

#[test]
fn prefixes_and_whole_names_find_tools() {
    let index = corpus();
    let top = |q: &str| {
        let hits = index.search(q).expect("search");
        hits.first().map(|h| index.docs()[h.doc].address.clone())
    };
    assert_eq!(top("whoami").as_deref(), Some("t.whoami"));
    assert_eq!(top("who").as_deref(), Some("t.whoami"));
    // `whoa` is no word of any tool: it is read as the start of one.
    assert_eq!(top("whoa").as_deref(), Some("t.whoami"));
    assert_eq!(top("t.whoam").as_deref(), Some("t.whoami"));
    assert_eq!(top("zzz"), None);
}
