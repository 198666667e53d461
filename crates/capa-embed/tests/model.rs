//! The real model, from the files `scripts/setup` installs (`CAPA_MODEL_DIR`).

use capa_embed::{DIMENSIONS, Embedder, Located, cosine};

fn model() -> Option<Embedder> {
    original_dir().map(|dir| Embedder::load(&dir).expect("the model loads"))
}

/// The original model's directory, or `None` to skip.
fn original_dir() -> Option<std::path::PathBuf> {
    match located() {
        Located::Found(dir) => Some(dir),
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
/// float64 written from the model's description, sharing no code with this crate. The hub holds
/// the weights in 8 bits (`Q8_0`), which moves a vector by a cosine of about 1e-4 (0.99986 at
/// worst when this was written; f16 weights had kept it under 1e-5): what that costs in search
/// quality is measured in docs/benchmarks.md, not here.
#[test]
fn vectors_match_an_independent_computation() {
    let Some(model) = model() else { return };
    let references: Vec<Reference> =
        serde_json::from_str(include_str!("data/reference.json")).expect("reference.json");
    let texts: Vec<&str> = references.iter().map(|r| r.text.as_str()).collect();
    for (reference, vector) in references.iter().zip(model.embed(&texts).expect("embed")) {
        let similarity = cosine(&reference.vector, &vector);
        assert!(
            similarity > 0.9995,
            "{:?}: cosine {similarity} with the reference",
            reference.text
        );
        // One text alone: a short one takes the query's path (plain vectors on this thread,
        // GELU without libm), which must agree with the reference as well.
        let alone = model.embed_one(&reference.text).expect("embed one");
        let similarity = cosine(&reference.vector, &alone);
        assert!(
            similarity > 0.9995,
            "{:?} alone: cosine {similarity} with the reference",
            reference.text
        );
    }
}

/// The package's copy (scripts/model-pack.py, which scripts/setup runs): the vocabulary's table and
/// the dense weights already in `Q8_0` blocks, as the hub makes them from the original, so the
/// hub's vectors are bit for bit the same.
#[test]
fn the_packed_model_gives_the_same_vectors_bit_for_bit() {
    let Some(original) = model() else { return };
    let Some(dir) = packed_dir() else { return };
    let packed = Embedder::load(&dir).expect("the packed model loads");
    // Longer than the few-token path: candle's product on widened weights.
    let long =
        "search the web for recent news about the weather in Paris and summarise it ".repeat(3);
    let mut texts: Vec<String> = vec![
        "create an issue in a repository".into(),
        "list the files of a directory".into(),
        long,
    ];
    // Rows from all over the vocabulary's table, each a block of scales and bytes: every 13th
    // word of the vocabulary, in texts of 100.
    texts.extend(vocabulary_sample(&dir.join("tokenizer.json"), 13));
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    for batch in [&texts[..1], &texts[..]] {
        let a = original.embed(batch).expect("embeds");
        let b = packed.embed(batch).expect("embeds");
        for (text, (x, y)) in batch.iter().zip(a.iter().zip(&b)) {
            let same = x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits());
            assert!(same, "the packed file changed the vector of {text:?}");
        }
    }
}

/// The packed file tensor by tensor against the original: the vocabulary's table and every dense
/// weight are the `Q8_0` blocks candle makes of them, every other tensor the hub reads the same
/// f32, and nothing else is kept.
#[test]
fn the_packed_file_holds_what_the_hub_makes_of_the_original() {
    use candle_core::quantized::{GgmlDType, QTensor};
    use candle_core::{DType, Device};
    let (Some(original_dir), Some(dir)) = (original_dir(), packed_dir()) else {
        return;
    };
    let load = |dir: &std::path::Path| {
        candle_core::safetensors::load(dir.join("model.safetensors"), &Device::Cpu)
            .expect("reads model.safetensors")
    };
    let (original, packed) = (load(&original_dir), load(&dir));
    let bits = |t: &candle_core::Tensor| -> Vec<u8> {
        let t = t.flatten_all().expect("flattens");
        match t.dtype() {
            DType::U8 => t.to_vec1::<u8>().expect("bytes"),
            _ => (t.to_vec1::<f32>().expect("f32").iter())
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        }
    };
    let mut kept = 0;
    for (name, tensor) in &original {
        let (packed_name, expected) = match name.as_str() {
            "pooler.dense.weight" | "pooler.dense.bias" | "embeddings.position_ids" => {
                assert!(!packed.contains_key(name), "{name} is kept but never read");
                continue;
            }
            n if n == "embeddings.word_embeddings.weight"
                || (n.starts_with("encoder.layer.")
                    && n.ends_with(".weight")
                    && tensor.rank() == 2) =>
            {
                let blocks = QTensor::quantize(tensor, GgmlDType::Q8_0).expect("quantises");
                let blocks = blocks.data().expect("raw blocks").to_vec();
                (format!("{}q8_0", n.trim_end_matches("weight")), blocks)
            }
            _ => (name.clone(), bits(tensor)),
        };
        let found = packed
            .get(&packed_name)
            .unwrap_or_else(|| panic!("{packed_name} is missing"));
        assert!(
            bits(found) == expected,
            "{packed_name} is not what the hub makes of {name}"
        );
        kept += 1;
    }
    assert_eq!(
        packed.len(),
        kept,
        "the packed file has tensors the original has not"
    );
}

/// The package's form of the model (scripts/setup makes it), or `None` to skip.
fn packed_dir() -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models/all-MiniLM-L6-v2-packed");
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CAPA_REQUIRE_ALL").is_none(),
        "CAPA_REQUIRE_ALL is set but {} is missing; run scripts/setup",
        dir.display()
    );
    eprintln!("skipped: no packed model (run scripts/setup)");
    None
}

/// Every `step`th whole word of the tokenizer's vocabulary (no `##` pieces, no `[…]` markers),
/// joined a hundred to a text.
fn vocabulary_sample(tokenizer: &std::path::Path, step: usize) -> Vec<String> {
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tokenizer).expect("reads tokenizer.json"))
            .expect("tokenizer.json is JSON");
    let vocab = file["model"]["vocab"]
        .as_object()
        .expect("a WordPiece vocab");
    let mut words: Vec<(&String, u64)> = vocab
        .iter()
        .filter(|(word, _)| !word.starts_with("##") && !word.starts_with('['))
        .map(|(word, id)| (word, id.as_u64().unwrap_or(0)))
        .collect();
    words.sort_by_key(|(_, id)| *id);
    let sample: Vec<&str> = words
        .iter()
        .step_by(step)
        .map(|(w, _)| w.as_str())
        .collect();
    sample.chunks(100).map(|chunk| chunk.join(" ")).collect()
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
