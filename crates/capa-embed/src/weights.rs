//! A dense layer's weights, in the layout the CPU's best product for a few tokens reads: tiles
//! for the integer product where the CPU has AVX-512 VNNI ([`Q8Tiles`]), rows for the f32 one
//! elsewhere ([`Q8Rows`], [`few_tokens`]). Either holds the same codes and scales, once.

use candle_core::{Device, Result, Tensor};

use crate::few_tokens;
use crate::q8_rows::Q8Rows;
#[cfg(target_arch = "x86_64")]
use crate::q8_tiles::Q8Tiles;

pub(crate) enum Weights {
    Rows(Q8Rows),
    #[cfg(target_arch = "x86_64")]
    Tiles(Q8Tiles),
}

impl Weights {
    /// `rows` in the layout this CPU's product reads.
    pub(crate) fn new(rows: Q8Rows) -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(tiles) = Q8Tiles::from_rows(&rows) {
            return Self::Tiles(tiles);
        }
        Self::Rows(rows)
    }

    /// The whole matrix in f32, for candle's product over a batch of long texts.
    pub(crate) fn to_tensor(&self, device: &Device) -> Result<Tensor> {
        match self {
            Self::Rows(rows) => rows.to_tensor(device),
            #[cfg(target_arch = "x86_64")]
            Self::Tiles(tiles) => tiles.to_tensor(device),
        }
    }

    /// `x` (`tokens` × width, row-major) times the transpose of the matrix, plus `bias`:
    /// tokens × rows, row-major; zeros if the shapes do not match.
    pub(crate) fn linear(&self, x: &[f32], tokens: usize, bias: &[f32]) -> Vec<f32> {
        match self {
            Self::Rows(rows) => few_tokens::linear(x, tokens, rows, bias),
            #[cfg(target_arch = "x86_64")]
            Self::Tiles(tiles) => tiles.linear(x, tokens, bias),
        }
    }
}

/// Whether a query's dense products are integer products on this CPU (AVX-512 VNNI; see
/// `q8_tiles.rs`), rather than f32 ones: for reports that give the figures beside the machine.
pub fn integer_query_products() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::q8_tiles::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
