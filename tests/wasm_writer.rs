//! The JS-facing writer in Node and in headless Chromium: batches decoded by
//! `StreamReader` are written back and decode to the same data, chunks come out at their
//! exact size or split at `maxChunkBytes`, and bad options or calls give a clear `Error`.
#![cfg(all(target_arch = "wasm32", feature = "writer"))]

use js_sys::{Object, Reflect, Uint8Array};
use quiver::wasm::{
    message_size, table_from_ipc, Chunks, RecordBatch, StreamReader, StreamWriter, WriterOptionsJs,
};
use wasm_bindgen::{JsCast, JsError, JsValue};
use wasm_bindgen_test::*;

const NESTED: &[u8] =
    include_bytes!("data/arrow-testing/integration/1.0.0-littleendian/generated_nested.stream");
const DICTIONARY: &[u8] =
    include_bytes!("data/arrow-testing/integration/1.0.0-littleendian/generated_dictionary.stream");

fn read(bytes: &Uint8Array) -> Vec<RecordBatch> {
    let mut reader = StreamReader::new(None).unwrap();
    reader.push(bytes).unwrap();
    reader.finish().unwrap();
    std::iter::from_fn(|| reader.next_batch()).collect()
}

fn options(pairs: &[(&str, JsValue)]) -> Option<WriterOptionsJs> {
    let object = Object::new();
    for (key, value) in pairs {
        Reflect::set(&object, &(*key).into(), value).unwrap();
    }
    Some(object.unchecked_into())
}

fn message(error: JsError) -> String {
    js_sys::Error::from(JsValue::from(error)).message().into()
}

/// Every chunk of every write, joined in JS.
fn joined(writes: &[Chunks]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunks in writes {
        for i in 0..chunks.count() {
            out.extend(chunks.chunk(i).unwrap().to_vec());
        }
    }
    out
}

fn write_all(batches: &[RecordBatch], options: Option<WriterOptionsJs>) -> Vec<Chunks> {
    let mut writer = StreamWriter::for_batch(&batches[0], options).unwrap();
    let mut writes: Vec<Chunks> = batches.iter().map(|b| writer.write(b).unwrap()).collect();
    writes.push(writer.finish().unwrap());
    writes
}

fn arrow(batches: &[RecordBatch]) -> Vec<arrow_array::RecordBatch> {
    batches.iter().map(|b| b.as_arrow().clone()).collect()
}

#[wasm_bindgen_test]
fn decoded_batches_written_back_decode_the_same() {
    for source in [NESTED, DICTIONARY] {
        let batches = read(&Uint8Array::from(source));
        for codec in [JsValue::NULL, "lz4".into(), "zstd".into()] {
            let writes = write_all(&batches, options(&[("compression", codec)]));
            let again = read(&Uint8Array::from(joined(&writes).as_slice()));
            assert_eq!(arrow(&again), arrow(&batches));
        }
    }
}

#[wasm_bindgen_test]
fn each_message_is_one_chunk_of_its_message_size() {
    let batches = read(&Uint8Array::from(NESTED));
    let mut writer = StreamWriter::for_batch(&batches[0], None).unwrap();
    writer.write(&batches[0]).unwrap();
    for batch in &batches[1..] {
        let chunks = writer.write(batch).unwrap();
        let size = message_size(batch, None).unwrap();
        assert_eq!(chunks.count(), 1);
        assert_eq!(chunks.byte_length(), size);
        assert_eq!(chunks.lengths(), vec![size as u32]);
        assert_eq!(chunks.offsets(), vec![0]);
    }
}

#[wasm_bindgen_test]
fn max_chunk_bytes_61_gives_the_same_bytes() {
    let batches = read(&Uint8Array::from(DICTIONARY));
    let whole = joined(&write_all(&batches, None));
    let split = write_all(&batches, options(&[("maxChunkBytes", 61.into())]));
    for chunks in &split {
        assert!(chunks.lengths().iter().all(|&n| n <= 61));
        let copy = chunks.to_uint8_array().to_vec();
        assert_eq!(copy.len(), chunks.byte_length());
    }
    assert_eq!(joined(&split), whole);
}

#[wasm_bindgen_test]
fn chunks_read_right_after_memory_grows() {
    let batches = read(&Uint8Array::from(NESTED));
    let mut writer = StreamWriter::for_batch(&batches[0], None).unwrap();
    let chunks = writer.write(&batches[0]).unwrap();
    let first = chunks.chunk(0).unwrap();
    let expected = first.to_vec();
    // Grow wasm memory by 64 MiB while `first` is held.
    let big = vec![1u8; 64 << 20];
    assert_eq!(first.length() as usize, expected.len());
    assert_eq!(first.to_vec(), expected);
    drop(big);
}

#[wasm_bindgen_test]
fn table_to_ipc_round_trips() {
    let table = table_from_ipc(Uint8Array::from(DICTIONARY).into(), None).unwrap();
    let bytes = table
        .to_ipc(options(&[("compression", "zstd".into())]))
        .unwrap();
    let again = table_from_ipc(bytes.into(), None).unwrap();
    assert_eq!(again.arrow_batches(), table.arrow_batches());
}

#[wasm_bindgen_test]
fn bad_options_and_calls_are_clear_errors() {
    let nested = read(&Uint8Array::from(NESTED));
    let dictionary = read(&Uint8Array::from(DICTIONARY));
    let error = |pairs: &[(&str, JsValue)]| {
        message(
            StreamWriter::for_batch(&nested[0], options(pairs))
                .err()
                .unwrap_or_else(|| panic!("{pairs:?} was accepted")),
        )
    };
    assert_eq!(
        error(&[("maxChunkBytes", 7.into())]),
        "maxChunkBytes must be between 8 and 4294967295 bytes, found 7"
    );
    assert_eq!(
        error(&[("maxChunkBytes", "big".into())]),
        "maxChunkBytes must be a number, found \"big\""
    );
    assert_eq!(
        error(&[("compression", "gzip".into())]),
        "compression must be null, 'lz4' or 'zstd', found 'gzip'"
    );
    assert_eq!(
        error(&[("zstdLevel", 1.5.into())]),
        "zstdLevel must be a whole number from 1 to 22, found 1.5"
    );
    assert_eq!(
        error(&[("maxChunkSize", 8.into())]),
        "unknown WriterOptions field 'maxChunkSize'; the fields are compression, zstdLevel, maxChunkBytes, chunkSizing, format, dictionaryDeltas"
    );
    assert_eq!(
        error(&[("dictionaryDeltas", "yes".into())]),
        "dictionaryDeltas must be a boolean, found \"yes\""
    );
    assert_eq!(
        error(&[("format", "feather".into())]),
        "format must be 'stream' or 'file', found 'feather'"
    );

    let mut writer = StreamWriter::for_batch(&nested[0], None).unwrap();
    let err = message(writer.write(&dictionary[0]).err().unwrap());
    assert_eq!(
        err,
        "column 0 of the batch is \"dict0\": Dictionary(Int8, Utf8), but the writer's schema has \"list_nullable\": List(Int32)"
    );
    let chunks = writer.finish().unwrap();
    assert_eq!(
        message(chunks.chunk(2).err().unwrap()),
        "chunk 2 does not exist: these Chunks hold 2"
    );
    assert_eq!(
        message(writer.write(&nested[0]).err().unwrap()),
        "the stream is finished: finish() already wrote its end-of-stream marker"
    );
}

fn metadata_object(pairs: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (key, value) in pairs {
        Reflect::set(&object, &(*key).into(), value).unwrap();
    }
    object.into()
}

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &key.into()).unwrap()
}

fn keys(object: &JsValue) -> usize {
    Object::keys(object.unchecked_ref::<Object>()).length() as usize
}

#[wasm_bindgen_test]
fn batch_metadata_set_in_js_is_written_at_its_size_and_read_back() {
    let mut batches = read(&Uint8Array::from(NESTED));
    assert_eq!(keys(&batches[0].metadata()), 0);
    batches[0]
        .set_metadata(metadata_object(&[
            ("page", "1".into()),
            ("note", "✓".into()),
        ]))
        .unwrap();
    let mut writer = StreamWriter::for_batch(&batches[0], None).unwrap();
    let sizes = writer.message_sizes(&batches[0]).unwrap();
    let size = get(&sizes, "recordBatch").as_f64().unwrap() as usize;
    assert_eq!(message_size(&batches[0], None).unwrap(), size);
    let first = writer.write(&batches[0]).unwrap();
    let schema_size = get(&sizes, "schema").as_f64().unwrap() as usize;
    assert_eq!(first.byte_length(), schema_size + size);
    let rest: Vec<Chunks> = batches[1..]
        .iter()
        .map(|b| writer.write(b).unwrap())
        .collect();
    let mut writes = vec![first];
    writes.extend(rest);
    writes.push(writer.finish().unwrap());

    let bytes = Uint8Array::from(joined(&writes).as_slice());
    let table = table_from_ipc(bytes.into(), None).unwrap();
    let read_back = table.batches();
    assert_eq!(get(&read_back[0].metadata(), "page"), "1");
    assert_eq!(get(&read_back[0].metadata(), "note"), "✓");
    assert_eq!(keys(&read_back[0].metadata()), 2);
    assert_eq!(keys(&read_back[1].metadata()), 0);
    // tableToIPC writes each batch with its own metadata.
    let again = table_from_ipc(table.to_ipc(None).unwrap().into(), None).unwrap();
    assert_eq!(get(&again.batches()[0].metadata(), "page"), "1");
    assert_eq!(keys(&again.batches()[1].metadata()), 0);
}

#[wasm_bindgen_test]
fn batch_metadata_must_be_strings() {
    let mut batches = read(&Uint8Array::from(NESTED));
    batches[0]
        .set_metadata(metadata_object(&[("page", "1".into())]))
        .unwrap();
    let error = batches[0]
        .set_metadata(metadata_object(&[("page", 2.into())]))
        .unwrap_err();
    assert!(
        message(error)
            .starts_with("batch metadata must be an object of string keys and string values"),
        "a number"
    );
    let error = batches[0].set_metadata(JsValue::from(7)).unwrap_err();
    assert_eq!(
        message(error),
        "batch metadata must be an object of string keys and string values, found 7"
    );
    // A refused value leaves the metadata as it was.
    assert_eq!(get(&batches[0].metadata(), "page"), "1");
}

#[wasm_bindgen_test]
fn a_body_past_what_wasm32_can_address_is_an_error() {
    use std::sync::Arc;

    // 70 columns over one 64 MiB array: 4.4 GiB of body from 64 MiB of memory.
    let values: arrow_array::ArrayRef = Arc::new(arrow_array::Int8Array::from(vec![1i8; 64 << 20]));
    let columns = (0..70).map(|i| (format!("c{i}"), values.clone()));
    let batch = arrow_array::RecordBatch::try_from_iter(columns).unwrap();
    let options = quiver::ipc::writer::WriteOptions::default();
    let error = quiver::ipc::writer::stream_message_sizes(&batch, &options).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the message body would pass 2147483647 bytes, more than one allocation can hold"
    );
}
