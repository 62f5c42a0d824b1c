//! The JS-facing reader in Node and in headless Chromium: segments pushed from JS arrays
//! decode to exactly what the native core decodes (which `tests/gold.rs` checks against
//! the gold JSON), each byte is copied once, and bad input gives a clear `Error` after
//! which the module keeps working.
#![cfg(target_arch = "wasm32")]

use js_sys::Uint8Array;
use quiver::ipc::{ReadLimits, StreamDecoder};
use quiver::wasm::{table_from_ipc, StreamReader};
use wasm_bindgen::{JsCast, JsError, JsValue};
use wasm_bindgen_test::*;

// No `run_in_browser`: the same suite runs in Node, and in Chromium with
// WASM_BINDGEN_USE_BROWSER=1 (see pkg-scripts/test.sh).

macro_rules! gold {
    ($path:literal) => {
        (
            $path,
            include_bytes!(concat!("data/arrow-testing/integration/", $path)).as_slice(),
        )
    };
}

const GOLD: &[(&str, &[u8])] = &[
    gold!("0.14.1/generated_primitive.stream"),
    gold!("1.0.0-littleendian/generated_dictionary.stream"),
    gold!("1.0.0-littleendian/generated_nested.stream"),
    gold!("1.0.0-littleendian/generated_custom_metadata.stream"),
    gold!("1.0.0-littleendian/generated_union.stream"),
    gold!("2.0.0-compression/generated_lz4.stream"),
    gold!("2.0.0-compression/generated_zstd.stream"),
    gold!("2.0.0-compression/generated_uncompressible_zstd.stream"),
    gold!("4.0.0-shareddict/generated_shared_dict.stream"),
    gold!("cpp-21.0.0/generated_binary_view.stream"),
];

fn native(bytes: &[u8]) -> Vec<arrow_array::RecordBatch> {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.push(bytes).unwrap();
    decoder.finish().unwrap();
    std::iter::from_fn(|| decoder.next_batch()).collect()
}

/// Pushes `bytes` from JS arrays of the given sizes, returning the batches and the stats.
fn via_js(
    bytes: &[u8],
    mut size: impl FnMut() -> usize,
) -> (Vec<arrow_array::RecordBatch>, JsValue) {
    let mut reader = StreamReader::new(None).unwrap();
    let mut batches = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (segment, tail) = rest.split_at(size().clamp(1, rest.len()));
        reader.push(&Uint8Array::from(segment)).unwrap();
        while let Some(batch) = reader.next_batch() {
            batches.push(batch.as_arrow().clone());
        }
        rest = tail;
    }
    reader.finish().unwrap();
    (batches, reader.stats())
}

fn stat(stats: &JsValue, name: &str) -> f64 {
    js_sys::Reflect::get(stats, &name.into())
        .unwrap()
        .as_f64()
        .unwrap()
}

fn message(error: JsError) -> String {
    js_sys::Error::from(JsValue::from(error)).message().into()
}

#[wasm_bindgen_test]
fn js_segments_decode_like_the_core() {
    for (name, bytes) in GOLD {
        let want = native(bytes);
        let mut seed = bytes.len() as u64;
        let sizes: [Box<dyn FnMut() -> usize>; 3] = [
            Box::new(|| usize::MAX),
            Box::new(|| 1),
            Box::new(move || {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                (seed >> 33) as usize % 500 + 1
            }),
        ];
        for size in sizes {
            let (got, stats) = via_js(bytes, size);
            assert_eq!(got, want, "{name}");
            assert_eq!(stat(&stats, "bytesPushed"), bytes.len() as f64, "{name}");
            assert_eq!(stat(&stats, "batches"), want.len() as f64, "{name}");
        }
    }
}

#[wasm_bindgen_test]
fn uncompressed_bytes_are_copied_once() {
    let (_, bytes) = GOLD[2];
    let mut n = 0;
    let (_, stats) = via_js(bytes, || {
        n += 1;
        n * 37 % 300 + 1
    });
    assert_eq!(stat(&stats, "bytesCopied"), stat(&stats, "bytesPushed"));
}

#[wasm_bindgen_test]
fn table_from_ipc_takes_one_array_or_segments() {
    let (_, bytes) = GOLD[1];
    let rows: usize = native(bytes).iter().map(|b| b.num_rows()).sum();
    let whole = table_from_ipc(Uint8Array::from(bytes).into(), None).unwrap();
    assert_eq!(whole.num_rows(), rows);
    let parts = js_sys::Array::new();
    for chunk in bytes.chunks(100) {
        parts.push(&Uint8Array::from(chunk));
    }
    let segmented = table_from_ipc(parts.into(), None).unwrap();
    assert_eq!(segmented.num_rows(), rows);
    assert_eq!(segmented.arrow_batches(), whole.arrow_batches());
}

#[wasm_bindgen_test]
fn bad_input_is_an_error_and_the_module_keeps_working() {
    let (_, bytes) = GOLD[0];
    let truncated = &bytes[..bytes.len() - 20];
    let mut reader = StreamReader::new(None).unwrap();
    reader.push(&Uint8Array::from(truncated)).unwrap();
    let error = message(reader.finish().unwrap_err());
    assert!(
        error.starts_with("stream ended inside a message: message body needs"),
        "{error}"
    );

    let mut corrupt = bytes.to_vec();
    corrupt[8..40].fill(0xAB);
    let error = message(table_from_ipc(Uint8Array::from(&corrupt[..]).into(), None).unwrap_err());
    assert!(
        error.starts_with("invalid Arrow IPC: message metadata is not a valid flatbuffer"),
        "{error}"
    );

    let error = message(table_from_ipc(JsValue::from(42), None).unwrap_err());
    assert_eq!(
        error,
        "tableFromIPC expects a Uint8Array or an array of Uint8Array"
    );

    // The same instance still decodes a valid stream.
    let table = table_from_ipc(Uint8Array::from(bytes).into(), None).unwrap();
    assert_eq!(table.arrow_batches(), native(bytes).as_slice());
}

#[wasm_bindgen_test]
fn hostile_length_is_refused_by_the_limit() {
    let options = js_sys::JSON::parse(r#"{"maxMessageBytes": 1024}"#).unwrap();
    let mut reader = StreamReader::new(Some(options.unchecked_into())).unwrap();
    // Continuation marker, then a 2 GiB - 1 metadata length.
    let error = message(
        reader
            .push(&Uint8Array::from(
                &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F][..],
            ))
            .unwrap_err(),
    );
    assert_eq!(
        error,
        "message metadata of 2147483647 bytes exceeds maxMessageBytes = 1024 bytes"
    );
}

/// The error a `StreamReader` gives for options written as JSON.
fn options_error(json: &str) -> String {
    let options = js_sys::JSON::parse(json).unwrap();
    message(
        StreamReader::new(Some(options.unchecked_into()))
            .err()
            .unwrap(),
    )
}

#[wasm_bindgen_test]
fn invalid_options_are_refused() {
    assert_eq!(
        options_error(r#"{"maxMessageBytes": -5}"#),
        "maxMessageBytes must be a positive whole number of bytes, found -5"
    );
}

#[wasm_bindgen_test]
fn misspelled_options_are_refused() {
    assert_eq!(
        options_error(r#"{"maxMesageBytes": 1024}"#),
        "unknown ReaderOptions field 'maxMesageBytes'; the fields are maxMessageBytes, maxDecompressedBytes, maxDictionaryBytes"
    );
}

#[wasm_bindgen_test]
fn a_buffer_declaring_more_than_wasm32_can_allocate_is_refused() {
    // The LZ4 gold stream, with the first compressed buffer of its first record batch
    // declaring 4 GiB - 1 uncompressed bytes, and a limit above that: on wasm32 the limit
    // that holds is what one allocation can have, 2 GiB - 1.
    let mut bytes = GOLD[5].1.to_vec();
    let mut at = 0;
    loop {
        let len = i32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        let message = arrow_ipc::root_as_message(&bytes[at + 8..at + 8 + len]).unwrap();
        let body = at + 8 + len;
        if let Some(batch) = message.header_as_record_batch() {
            let buffers = batch.buffers().unwrap();
            let buffer = buffers.iter().find(|b| b.length() >= 8).unwrap();
            let prefix = body + buffer.offset() as usize;
            bytes[prefix..prefix + 8].copy_from_slice(&i64::from(u32::MAX).to_le_bytes());
            break;
        }
        at = body + message.bodyLength() as usize;
    }
    let options = js_sys::JSON::parse(r#"{"maxDecompressedBytes": 8589934592}"#).unwrap();
    let mut reader = StreamReader::new(Some(options.unchecked_into())).unwrap();
    let error = message(
        reader
            .push(&Uint8Array::from(bytes.as_slice()))
            .unwrap_err(),
    );
    assert!(
        error.ends_with("exceeds maxDecompressedBytes = 2147483647 bytes"),
        "{error}"
    );
    // The module still decodes.
    assert_eq!(via_js(GOLD[5].1, || 4096).0, native(GOLD[5].1));
}

#[wasm_bindgen_test]
fn max_dictionary_bytes_reaches_the_decoder() {
    let options = js_sys::JSON::parse(r#"{"maxDictionaryBytes": 8}"#).unwrap();
    let mut reader = StreamReader::new(Some(options.unchecked_into())).unwrap();
    let error = message(reader.push(&Uint8Array::from(GOLD[1].1)).unwrap_err());
    assert!(
        error.starts_with("dictionaries held by the reader of ")
            && error.ends_with("bytes exceeds maxDictionaryBytes = 8 bytes"),
        "{error}"
    );
}
