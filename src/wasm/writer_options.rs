//! `WriterOptions`: the TypeScript interface users see, read into the core's
//! `WriteOptions`.

use wasm_bindgen::prelude::*;

use super::error::{usage, WasmResult};
use super::options::{bool_field, byte_count, number_field, options_object, string_field};
use crate::ipc::codec::Compression;
use crate::ipc::writer::{
    max_chunk_bytes_refused, ChunkSizing, WriteOptions, DEFAULT_MAX_CHUNK_BYTES,
};

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
  /**
   * `'stream'` (the default) or `'file'`: the IPC format `tableToIPC` and `toIPC` write.
   * `StreamWriter` writes streams and `FileWriter` files, whatever this says.
   */
  format?: 'stream' | 'file';
  /**
   * Whether a stream sends a dictionary that extends the one sent before as a delta
   * (only the new values). `false` (the default), as pyarrow's `emit_dictionary_deltas`:
   * a changed dictionary is sent whole, as a replacement, since some readers (polars)
   * refuse deltas. A file extends a dictionary with deltas whatever this says, as the
   * file format allows no replacement.
   */
  dictionaryDeltas?: boolean;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// `WriterOptions` as JavaScript passes it.
    #[wasm_bindgen(typescript_type = "WriterOptions")]
    pub type WriterOptionsJs;
}

/// The option names (a misspelled option is an error).
const FIELDS: [&str; 6] = [
    "compression",
    "zstdLevel",
    "maxChunkBytes",
    "chunkSizing",
    "format",
    "dictionaryDeltas",
];

/// The IPC format a whole-table write produces.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Stream,
    File,
}

/// Reads `WriterOptions` into the core's options (validated again by the core).
pub(crate) fn write_options(options: Option<WriterOptionsJs>) -> WasmResult<WriteOptions> {
    Ok(write_options_and_format(options)?.0)
}

/// [`write_options`], and the format the options ask for.
pub(crate) fn write_options_and_format(
    options: Option<WriterOptionsJs>,
) -> WasmResult<(WriteOptions, Format)> {
    let object = options_object(options.map(Into::into), "WriterOptions", &FIELDS)?;
    let object = object.as_ref();
    let format = match string_field(object, "format")?.as_deref() {
        None | Some("stream") => Format::Stream,
        Some("file") => Format::File,
        Some(other) => {
            return Err(usage(format!(
                "format must be 'stream' or 'file', found '{other}'"
            )))
        }
    };
    let compression = match string_field(object, "compression")?.as_deref() {
        None => None,
        Some("lz4") => Some(Compression::Lz4Frame),
        Some("zstd") => Some(Compression::Zstd),
        Some(other) => {
            return Err(usage(format!(
                "compression must be null, 'lz4' or 'zstd', found '{other}'"
            )))
        }
    };
    let chunk_sizing = match string_field(object, "chunkSizing")?.as_deref() {
        None | Some("exact") => ChunkSizing::Exact,
        Some("fixed") => ChunkSizing::Fixed,
        Some(other) => {
            return Err(usage(format!(
                "chunkSizing must be 'exact' or 'fixed', found '{other}'"
            )))
        }
    };
    let zstd_level = match number_field(object, "zstdLevel")? {
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
        number_field(object, "maxChunkBytes")?,
        DEFAULT_MAX_CHUNK_BYTES as u64,
    )?;
    let options = WriteOptions {
        compression,
        zstd_level,
        // Above u32::MAX it would be cut to wasm32's usize::MAX (u32::MAX), and pass.
        max_chunk_bytes: u32::try_from(max_chunk_bytes)
            .map_err(|_| max_chunk_bytes_refused(max_chunk_bytes))?
            as usize,
        chunk_sizing,
        dictionary_deltas: bool_field(object, "dictionaryDeltas")?.unwrap_or(false),
    };
    options.validate()?;
    Ok((options, format))
}
