//! The real model, from the files `scripts/setup` installs (`CAPA_MODEL_DIR`).

use capa_embed::{DIMENSIONS, Embedder, Located, cosine};

fn model() -> Option<Embedder> {
    match located() {
        Located::Found(dir) => Some(Embedder::load(&dir).expect("the model loads")),
        Located::Missing { searched } => {
            assert!(
                std::env::var_os("CAPA_REQUIRE_ALL").is_none(),
                "CAPA_REQUIRE_ALL is set but the search model is not installed (looked in {searched:?}); run scripts/setup"
            );
            eprintln!("skipped: no search model (run scripts/setup)");
            None
        }
    }
}

#[test]
fn vectors_are_unit_length_and_do_not_depend_on_the_batch() {
    let Some(model) = model() else { return };
    let texts = [
        "list the collaborators of a repository",
        "who else can push to this repo",
        "",
        "a much longer text about container images, their tags and the registries that hold them, repeated: container images, tags, registries",
    ];
    let together = model.embed(&texts).expect("embed");
    assert_eq!(together.len(), texts.len());
    for (text, vector) in texts.iter().zip(&together) {
        assert_eq!(vector.len(), DIMENSIONS);
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{text:?}: norm {norm}");
        let alone = model.embed_one(text).expect("embed one");
        assert!(
            cosine(vector, &alone) > 0.9999,
            "{text:?} changes with its batch"
        );
    }
}

#[test]
fn a_paraphrase_is_nearer_than_an_unrelated_sentence() {
    let Some(model) = model() else { return };
    let v = model
        .embed(&[
            "List the collaborators of a repository",
            "who else can push to this repo",
            "Delete a tag from a container image",
        ])
        .expect("embed");
    let near = cosine(&v[0], &v[1]);
    let far = cosine(&v[1], &v[2]);
    assert!(near > far + 0.1, "near {near}, far {far}");
}

#[test]
fn a_text_over_the_token_limit_is_cut_not_refused() {
    let Some(model) = model() else { return };
    let long = "repository ".repeat(2_000);
    let vector = model.embed_one(&long).expect("embed a long text");
    assert_eq!(vector.len(), DIMENSIONS);
}

#[derive(serde::Deserialize)]
struct Reference {
    text: String,
    vector: Vec<f32>,
}

/// `tests/data/reference.json` was computed by `tests/data/reference.py`: a `NumPy` forward pass in
/// float64 written from the model's description, sharing no code with this crate.
#[test]
fn vectors_match_an_independent_computation() {
    let Some(model) = model() else { return };
    let references: Vec<Reference> =
        serde_json::from_str(include_str!("data/reference.json")).expect("reference.json");
    let texts: Vec<&str> = references.iter().map(|r| r.text.as_str()).collect();
    for (reference, vector) in references.iter().zip(model.embed(&texts).expect("embed")) {
        let similarity = cosine(&reference.vector, &vector);
        assert!(
            similarity > 0.9999,
            "{:?}: cosine {similarity} with the reference",
            reference.text
        );
    }
}

/// The package's copy (scripts/model-f16.py, which scripts/setup runs): the dense weights already
/// rounded to f16 as the hub rounds them, so the hub's vectors are bit for bit the same.
#[test]
fn the_packaged_f16_model_gives_the_same_vectors_bit_for_bit() {
    let Some(original) = model() else { return };
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/all-MiniLM-L6-v2-f16");
    if !dir.join("model.safetensors").is_file() {
        assert!(
            std::env::var_os("CAPA_REQUIRE_ALL").is_none(),
            "CAPA_REQUIRE_ALL is set but {} is missing; run scripts/setup",
            dir.display()
        );
        eprintln!("skipped: no f16 model (run scripts/setup)");
        return;
    }
    let packaged = Embedder::load(&dir).expect("the f16 model loads");
    // Longer than the few-token path: candle's product on widened weights.
    let long =
        "search the web for recent news about the weather in Paris and summarise it ".repeat(3);
    let texts: [&str; 3] = [
        "create an issue in a repository",
        "list the files of a directory",
        &long,
    ];
    for batch in [&texts[..1], &texts[..]] {
        let a = original.embed(batch).expect("embeds");
        let b = packaged.embed(batch).expect("embeds");
        for (x, y) in a.iter().zip(&b) {
            let same = x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits());
            assert!(same, "the f16 file changed a vector");
        }
    }
}

/// `CAPA_MODEL_DIR` when set, else the checkout's `models/`, where scripts/setup installs the
/// model (scripts/test leaves the variable unset, so that the many hubs other tests start do
/// not each load the model).
fn located() -> Located {
    let checkout =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/all-MiniLM-L6-v2");
    match capa_embed::locate(None) {
        Located::Missing { .. } if checkout.join("model.safetensors").is_file() => {
            Located::Found(checkout)
        }
        other => other,
    }
}
