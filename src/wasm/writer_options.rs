//! `WriterOptions`: the TypeScript interface users see, read into the core's
//! `WriteOptions`.

use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::error::{usage, WasmResult};
use super::options::{byte_count, check_fields};
use crate::ipc::codec::Compression;
use crate::ipc::writer::{ChunkSizing, WriteOptions, DEFAULT_MAX_CHUNK_BYTES};

#[wasm_bindgen(typescript_custom_section)]
const WRITER_OPTIONS_TS: &str = r#"
/** How a `StreamWriter` (or `tableToIPC`, `messageSize`) encodes. */
export interface WriterOptions {
  /** Body compression: `null` (the default), `'lz4'` (LZ4_FRAME) or `'zstd'`. */
  compression?: null | 'lz4' | 'zstd';
  /**
   * ZSTD level, 1 to 22 (default 1). Honoured by the C zstd build (`zstd-c`); the
   * default ruzstd build implements only its fastest level, so it compresses like level 1.
   */
  zstdLevel?: number;
  /** The largest chunk in bytes, at least 8 (default 1 MiB). Longer messages are split. */
  maxChunkBytes?: number;
  /**
   * `'exact'` (the default): each chunk is allocated at its exact size. `'fixed'`: each
   * chunk is a zeroed allocation of `maxChunkBytes`, copied to its size when full; the
   * old way, for benchmarks that show what it cost.
   */
  chunkSizing?: 'exact' | 'fixed';
}
"#;

#[wasm_bindgen]
extern "C" {
    /// `WriterOptions` as JavaScript passes it.
    #[wasm_bindgen(typescript_type = "WriterOptions")]
    pub type WriterOptionsJs;
}

/// The option names, checked by `check_fields` (a misspelled option is an error).
const FIELDS: [&str; 4] = ["compression", "zstdLevel", "maxChunkBytes", "chunkSizing"];

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct WriterOptions {
    compression: Option<String>,
    zstd_level: Option<Number>,
    max_chunk_bytes: Option<Number>,
    chunk_sizing: Option<String>,
}

/// A number option as given, so that a non-number gets an error naming the option.
#[derive(Deserialize)]
#[serde(untagged)]
enum Number {
    Number(f64),
    Other(serde_json::Value),
}

fn number(name: &str, value: Option<Number>) -> WasmResult<Option<f64>> {
    match value {
        None => Ok(None),
        Some(Number::Number(v)) => Ok(Some(v)),
        Some(Number::Other(v)) => Err(usage(format!("{name} must be a number, found {v}"))),
    }
}

/// Reads `WriterOptions` into the core's options (validated again by the core).
pub(crate) fn write_options(options: Option<WriterOptionsJs>) -> WasmResult<WriteOptions> {
    let options: WriterOptions = match options {
        Some(value) if !value.is_undefined() && !value.is_null() => {
            check_fields(&value, "WriterOptions", &FIELDS)?;
            serde_wasm_bindgen::from_value(value.into())
                .map_err(|e| usage(format!("invalid WriterOptions: {e}")))?
        }
        _ => WriterOptions::default(),
    };
    let compression = match options.compression.as_deref() {
        None => None,
        Some("lz4") => Some(Compression::Lz4Frame),
        Some("zstd") => Some(Compression::Zstd),
        Some(other) => {
            return Err(usage(format!(
                "compression must be null, 'lz4' or 'zstd', found '{other}'"
            )))
        }
    };
    let chunk_sizing = match options.chunk_sizing.as_deref() {
        None | Some("exact") => ChunkSizing::Exact,
        Some("fixed") => ChunkSizing::Fixed,
        Some(other) => {
            return Err(usage(format!(
                "chunkSizing must be 'exact' or 'fixed', found '{other}'"
            )))
        }
    };
    let zstd_level = match number("zstdLevel", options.zstd_level)? {
        None => 1,
        Some(v) if v.fract() == 0.0 && (1.0..=22.0).contains(&v) => v as i32,
        Some(v) => {
            return Err(usage(format!(
                "zstdLevel must be a whole number from 1 to 22, found {v}"
            )))
        }
    };
    let max_chunk_bytes = byte_count(
        "maxChunkBytes",
        number("maxChunkBytes", options.max_chunk_bytes)?,
        DEFAULT_MAX_CHUNK_BYTES as u64,
    )?;
    let options = WriteOptions {
        compression,
        zstd_level,
        max_chunk_bytes: usize::try_from(max_chunk_bytes).unwrap_or(usize::MAX),
        chunk_sizing,
    };
    options.validate()?;
    Ok(options)
}
