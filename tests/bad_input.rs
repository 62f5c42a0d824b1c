//! Untrusted bytes give errors that say what was expected and what was found, and never
//! a panic. The exact texts are asserted: they are what a JS user reads.

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, Int32Array, ListArray, RecordBatch, StringArray};
use arrow_ipc::writer::StreamWriter;
use flatbuffers::FlatBufferBuilder;
use quiver::ipc::{ReadLimits, StreamDecoder};

fn sample() -> RecordBatch {
    let strings: ArrayRef = Arc::new(StringArray::from(vec!["ab", "cd"]));
    let ints: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    RecordBatch::try_from_iter([("s", strings), ("i", ints)]).unwrap()
}

/// A valid stream: schema, one batch, end-of-stream marker.
fn stream() -> Vec<u8> {
    let batch = sample();
    let mut writer = StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(&batch).unwrap();
    writer.into_inner().unwrap()
}

/// Length of the first message (the schema) including its prefix.
fn schema_message_len(bytes: &[u8]) -> usize {
    8 + i32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize
}

type Header = (
    arrow_ipc::MessageHeader,
    flatbuffers::WIPOffset<flatbuffers::UnionWIPOffset>,
);

/// One encapsulated message with the given header and a zeroed body.
fn message(build: impl FnOnce(&mut FlatBufferBuilder) -> Header, body: usize) -> Vec<u8> {
    message_declaring(build, body as i64, body)
}

/// A message whose header declares `declared` body bytes, followed by `body` zero bytes.
fn message_declaring(
    build: impl FnOnce(&mut FlatBufferBuilder) -> Header,
    declared: i64,
    body: usize,
) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    let (header_type, header) = build(&mut fbb);
    let args = arrow_ipc::MessageArgs {
        version: arrow_ipc::MetadataVersion::V5,
        header_type,
        header: Some(header),
        bodyLength: declared,
        custom_metadata: None,
    };
    let root = arrow_ipc::Message::create(&mut fbb, &args);
    fbb.finish(root, None);
    let mut metadata = fbb.finished_data().to_vec();
    metadata.resize(metadata.len().div_ceil(8) * 8, 0);
    let mut out = vec![0xFF; 4];
    out.extend((metadata.len() as i32).to_le_bytes());
    out.extend(metadata);
    out.extend(vec![0; body]);
    out
}

/// A record batch message for `sample()`'s schema with the given buffers (offset, len).
fn record_batch(buffers: &[(i64, i64)], body: usize) -> Vec<u8> {
    record_batch_with_nodes(&[(2, 0), (2, 0)], buffers, body)
}

/// As `record_batch`, with the given field nodes (length, null count).
fn record_batch_with_nodes(nodes: &[(i64, i64)], buffers: &[(i64, i64)], body: usize) -> Vec<u8> {
    message(
        |fbb| {
            let nodes: Vec<_> = nodes
                .iter()
                .map(|&(len, nulls)| arrow_ipc::FieldNode::new(len, nulls))
                .collect();
            let nodes = fbb.create_vector(&nodes);
            let buffers: Vec<_> = buffers
                .iter()
                .map(|&(o, l)| arrow_ipc::Buffer::new(o, l))
                .collect();
            let buffers = fbb.create_vector(&buffers);
            let batch = arrow_ipc::RecordBatch::create(
                fbb,
                &arrow_ipc::RecordBatchArgs {
                    length: 2,
                    nodes: Some(nodes),
                    buffers: Some(buffers),
                    ..Default::default()
                },
            );
            (
                arrow_ipc::MessageHeader::RecordBatch,
                batch.as_union_value(),
            )
        },
        body,
    )
}

fn error_of(bytes: &[u8]) -> String {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    match decoder.push(bytes).and_then(|_| decoder.finish()) {
        Ok(()) => panic!("decoded without an error"),
        Err(e) => e.to_string(),
    }
}

fn with_schema(message: Vec<u8>) -> Vec<u8> {
    let valid = stream();
    let mut out = valid[..schema_message_len(&valid)].to_vec();
    out.extend(message);
    out
}

#[test]
fn truncated_streams_name_the_missing_part() {
    let bytes = stream();
    let schema = schema_message_len(&bytes);
    assert_eq!(
        error_of(&bytes[..3]),
        "stream ended inside a message: message length prefix needs 4 bytes, got 3"
    );
    assert_eq!(
        error_of(&bytes[..6]),
        "stream ended inside a message: message length prefix needs 8 bytes, got 6"
    );
    assert_eq!(
        error_of(&bytes[..20]),
        format!(
            "stream ended inside a message: message metadata needs {} bytes, got 12",
            schema - 8
        )
    );
    // The body of the record batch is shorter than declared.
    let cut = bytes.len() - 8 - 10;
    let message = error_of(&bytes[..cut]);
    assert!(
        message.starts_with("stream ended inside a message: message body needs"),
        "{message}"
    );
    assert!(
        message.ends_with(&format!("got {}", message_body_got(&bytes, cut))),
        "{message}"
    );
}

/// Bytes of the record batch body present when the stream is cut at `cut`.
fn message_body_got(bytes: &[u8], cut: usize) -> usize {
    let schema = schema_message_len(bytes);
    let meta = i32::from_le_bytes(bytes[schema + 4..schema + 8].try_into().unwrap()) as usize;
    cut - (schema + 8 + meta)
}

#[test]
fn empty_input_has_no_schema() {
    assert_eq!(
        error_of(&[]),
        "invalid Arrow IPC: stream ended before its schema message"
    );
}

#[test]
fn corrupt_flatbuffer_is_refused() {
    let mut bytes = stream();
    bytes[8..24].fill(0xAB);
    let error = error_of(&bytes);
    assert!(
        error.starts_with("invalid Arrow IPC: message metadata is not a valid flatbuffer: "),
        "{error}"
    );
}

#[test]
fn negative_lengths_are_refused() {
    assert_eq!(
        error_of(&[0xFF, 0xFF, 0xFF, 0xFF, 0xF0, 0xFF, 0xFF, 0xFF]),
        "invalid Arrow IPC: expected a non-negative metadata length, found -16"
    );
}

#[test]
fn batch_before_schema_is_refused() {
    let bytes = stream();
    let error = error_of(&bytes[schema_message_len(&bytes)..]);
    assert_eq!(
        error,
        "invalid Arrow IPC: expected the schema message first, found a record batch"
    );
}

#[test]
fn second_schema_is_refused() {
    let bytes = stream();
    let schema = &bytes[..schema_message_len(&bytes)];
    let error = error_of(&[schema, schema].concat());
    assert_eq!(
        error,
        "invalid Arrow IPC: expected one schema message, found a second"
    );
}

#[test]
fn unknown_message_type_is_refused() {
    let tensor = message(
        |fbb| {
            let empty = fbb.start_table();
            let table = fbb.end_table(empty);
            (arrow_ipc::MessageHeader(42), table.as_union_value())
        },
        0,
    );
    assert_eq!(
        error_of(&with_schema(tensor)),
        "invalid Arrow IPC: expected a schema, dictionary batch or record batch message, found unknown message type 42"
    );
}

#[test]
fn buffer_outside_the_body_is_refused() {
    let batch = record_batch(&[(0, 0), (0, 12), (16, 4), (0, 0), (24, 8)], 16);
    assert_eq!(
        error_of(&with_schema(batch)),
        "invalid Arrow IPC: buffer 2 spans bytes 16..20, but the message body has 16 bytes"
    );
}

#[test]
fn offsets_past_the_values_are_refused() {
    // Offsets [0, 2, 9] into 4 bytes of string data.
    let mut batch = record_batch(&[(0, 0), (0, 12), (16, 4), (0, 0), (24, 8)], 32);
    let body = batch.len() - 32;
    batch[body..body + 12].copy_from_slice(&[0, 0, 0, 0, 2, 0, 0, 0, 9, 0, 0, 0]);
    let error = error_of(&with_schema(batch));
    assert!(error.contains("offset") && error.contains('9'), "{error}");
}

#[test]
fn a_null_count_that_the_bitmap_contradicts_is_refused() {
    // "i" declares one null, but its bitmap (0b11) has none.
    let mut batch = record_batch_with_nodes(
        &[(2, 0), (2, 1)],
        &[(0, 0), (0, 12), (16, 4), (24, 1), (32, 8)],
        40,
    );
    let body = batch.len() - 40;
    batch[body..body + 12].copy_from_slice(&[0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0]);
    batch[body + 24] = 0b11;
    assert_eq!(
        error_of(&with_schema(batch)),
        "invalid Arrow IPC: field \"i\" declares a null count of 1, but its validity bitmap has 0 nulls"
    );
}

#[test]
fn missing_field_nodes_and_buffers_are_refused() {
    let one_node = record_batch_with_nodes(&[(2, 0)], &[(0, 0), (0, 12), (16, 4)], 24);
    assert_eq!(
        error_of(&with_schema(one_node)),
        "invalid Arrow IPC: expected field node 1 for field \"i\", but the record batch has only 1"
    );
    let four_buffers = record_batch(&[(0, 0), (0, 12), (16, 4), (0, 0)], 24);
    assert_eq!(
        error_of(&with_schema(four_buffers)),
        "invalid Arrow IPC: expected buffer 4 for field \"i\", but the record batch has only 4"
    );
}

#[test]
fn short_misaligned_and_inconsistent_buffers_and_nodes_are_refused() {
    // The layout of `sample()`: "s" validity, offsets, data; "i" validity, values.
    // (length, null count) of each node, and (offset, length) of each buffer.
    type Pairs = &'static [(i64, i64)];
    let valid_nodes: Pairs = &[(2, 0), (2, 0)];
    let cases: [(Pairs, Pairs, &str); 6] = [
        (
            valid_nodes,
            &[(0, 0), (0, 12), (16, 4), (0, 0), (28, 8)],
            "buffer 4 starts at body offset 28, expected a multiple of 8",
        ),
        (
            valid_nodes,
            &[(0, 0), (0, 12), (16, 4), (0, 0), (24, 4)],
            "buffer 4 of field \"i\" has 4 bytes, expected a multiple of 4 of at least 8",
        ),
        (
            valid_nodes,
            &[(0, 0), (0, 12), (16, 4), (0, 0), (24, 10)],
            "buffer 4 of field \"i\" has 10 bytes, expected a multiple of 4 of at least 8",
        ),
        (
            valid_nodes,
            &[(0, 0), (0, 8), (16, 4), (0, 0), (24, 8)],
            "buffer 1 of field \"s\" has 8 bytes, expected a multiple of 4 of at least 12",
        ),
        // "i" declares a null but has no bitmap.
        (
            &[(2, 0), (2, 1)],
            &[(0, 0), (0, 12), (16, 4), (0, 0), (24, 8)],
            "buffer 3 of field \"i\" has 0 bytes, expected a multiple of 1 of at least 1",
        ),
        (
            &[(2, 3), (2, 0)],
            &[(0, 0), (0, 12), (16, 4), (0, 0), (24, 8)],
            "field \"s\" has length 2 and null count 3, expected 0 <= null count <= length <= 2147483647",
        ),
    ];
    for (nodes, buffers, expected) in cases {
        assert_eq!(
            error_of(&with_schema(record_batch_with_nodes(nodes, buffers, 40))),
            format!("invalid Arrow IPC: {expected}")
        );
    }
}

#[test]
fn short_buffers_beside_columns_arrow_ipc_decodes_are_refused() {
    // With a list column the batch goes to arrow-ipc, not to Quiver's flat reader: its
    // validation refuses the 4-byte values buffer of two int32s.
    let list =
        ListArray::from_iter_primitive::<Int32Type, _, _>([Some(vec![Some(1)]), Some(vec![])]);
    let ints: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    let batch =
        RecordBatch::try_from_iter([("i", ints), ("l", Arc::new(list) as ArrayRef)]).unwrap();
    let mut writer = StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(&batch).unwrap();
    let valid = writer.into_inner().unwrap();
    let mut bytes = valid[..schema_message_len(&valid)].to_vec();
    bytes.extend(record_batch_with_nodes(
        &[(2, 0), (2, 0), (1, 0)],
        &[(0, 0), (0, 4), (0, 0), (8, 12), (0, 0), (24, 4)],
        32,
    ));
    let error = error_of(&bytes);
    assert!(error.contains("Need at least 8 bytes"), "{error}");
}

#[test]
fn invalid_utf8_is_refused() {
    let mut bytes = stream();
    let at = bytes.windows(4).position(|w| w == b"abcd").unwrap();
    bytes[at..at + 2].copy_from_slice(&[0xFF, 0xFE]);
    let error = error_of(&bytes);
    assert!(error.contains("string 0 is not valid UTF-8"), "{error}");
}

#[test]
fn bytes_after_the_end_marker_are_refused() {
    let mut bytes = stream();
    bytes.extend([1, 2, 3]);
    assert_eq!(
        error_of(&bytes),
        "invalid Arrow IPC: expected no bytes after the end-of-stream marker, found 3"
    );
    // The marker was read all the same.
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    assert!(decoder.push(&bytes).is_err());
    assert!(decoder.is_ended());
}

#[test]
fn a_failed_reader_stays_failed_with_the_first_error() {
    let bytes = stream();
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    assert!(decoder.push(&bytes[schema_message_len(&bytes)..]).is_err());
    let later = decoder.push(&bytes).unwrap_err().to_string();
    assert_eq!(
        later,
        "the reader failed earlier and cannot continue: invalid Arrow IPC: expected the schema message first, found a record batch"
    );
}

#[test]
fn a_body_still_arriving_is_reported_and_freed_when_the_stream_is_abandoned() {
    let bytes = stream();
    let batch = schema_message_len(&bytes);
    let metadata_len = i32::from_le_bytes(bytes[batch + 4..batch + 8].try_into().unwrap());
    let body_start = batch + 8 + metadata_len as usize;
    let body_len = bytes.len() - 8 - body_start;

    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.push(&bytes[..body_start]).unwrap();
    // The body, and the metadata buffer (at least this message's metadata).
    let reserved = decoder.reserved_bytes();
    assert!(reserved >= body_len + metadata_len as usize, "{reserved}");
    assert!(decoder.is_inside_message());
    decoder.push(&bytes[body_start..body_start + 1]).unwrap();
    assert_eq!(decoder.reserved_bytes(), reserved);
    decoder.abandon("gone");
    assert_eq!(decoder.reserved_bytes(), 0);
    assert_eq!(
        decoder
            .push(&bytes[body_start + 1..])
            .unwrap_err()
            .to_string(),
        "the reader failed earlier and cannot continue: gone"
    );
}

#[test]
fn metadata_declared_and_not_yet_sent_is_reported_then_not_kept() {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    let declared: i32 = 100 << 20;
    let mut prefix = vec![0xFF; 4];
    prefix.extend(declared.to_le_bytes());
    decoder.push(&prefix).unwrap();
    assert!(decoder.reserved_bytes() >= declared as usize);

    // Once a message with smaller metadata follows, the outsized buffer goes.
    let bytes = stream();
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    let schema = schema_message_len(&bytes);
    let mut huge_metadata = bytes[..schema].to_vec();
    let metadata_len = i32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    let padding = (1 << 20) - metadata_len;
    huge_metadata[4..8].copy_from_slice(&(1i32 << 20).to_le_bytes());
    huge_metadata.splice(8 + metadata_len..8 + metadata_len, vec![0; padding]);
    decoder.push(&huge_metadata).unwrap();
    assert!(decoder.reserved_bytes() >= 1 << 20);
    decoder.push(&bytes[schema..]).unwrap();
    assert!(
        decoder.reserved_bytes() < 64 << 10,
        "{}",
        decoder.reserved_bytes()
    );
    assert!(decoder.next_batch().is_some());
}

#[test]
fn body_larger_than_the_limit_is_refused_before_allocating() {
    // A record batch that declares a 1 TiB body: refused when its metadata arrives.
    let huge = message_declaring(
        |fbb| {
            let batch = arrow_ipc::RecordBatch::create(fbb, &arrow_ipc::RecordBatchArgs::default());
            (
                arrow_ipc::MessageHeader::RecordBatch,
                batch.as_union_value(),
            )
        },
        1 << 40,
        0,
    );
    let error = error_of(&with_schema(huge));
    assert!(
        error.starts_with("message of 1099511627")
            && error.ends_with("bytes exceeds maxMessageBytes = 268435456 bytes"),
        "{error}"
    );
}

/// A dictionary batch message: `id`, `is_delta`, and empty utf8 values (8 body bytes: one
/// zero offset).
fn empty_dictionary_batch(id: i64, is_delta: bool) -> Vec<u8> {
    message(
        |fbb| {
            let nodes = fbb.create_vector(&[arrow_ipc::FieldNode::new(0, 0)]);
            let buffers = fbb.create_vector(&[
                arrow_ipc::Buffer::new(0, 0),
                arrow_ipc::Buffer::new(0, 8),
                arrow_ipc::Buffer::new(8, 0),
            ]);
            let data = arrow_ipc::RecordBatch::create(
                fbb,
                &arrow_ipc::RecordBatchArgs {
                    length: 0,
                    nodes: Some(nodes),
                    buffers: Some(buffers),
                    ..Default::default()
                },
            );
            let dict = arrow_ipc::DictionaryBatch::create(
                fbb,
                &arrow_ipc::DictionaryBatchArgs {
                    id,
                    data: Some(data),
                    isDelta: is_delta,
                },
            );
            (
                arrow_ipc::MessageHeader::DictionaryBatch,
                dict.as_union_value(),
            )
        },
        8,
    )
}

#[test]
fn dictionary_batches_for_unknown_ids_and_early_deltas_are_refused() {
    assert_eq!(
        error_of(&with_schema(empty_dictionary_batch(7, false))),
        "invalid Arrow IPC: dictionary id 7 not found in schema"
    );

    // The schema of a stream with one dictionary column (id 0), then a delta for it.
    let keys = arrow_array::Int32Array::from(vec![0]);
    let values: ArrayRef = Arc::new(StringArray::from(vec!["a"]));
    let dictionary: ArrayRef =
        Arc::new(arrow_array::DictionaryArray::try_new(keys, values).unwrap());
    let batch = RecordBatch::try_from_iter([("d", dictionary)]).unwrap();
    let mut writer = StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(&batch).unwrap();
    let valid = writer.into_inner().unwrap();
    let mut bytes = valid[..schema_message_len(&valid)].to_vec();
    bytes.extend(empty_dictionary_batch(0, true));
    assert_eq!(
        error_of(&bytes),
        "invalid Arrow IPC: delta dictionary batch for id 0, which has no dictionary yet"
    );
}

/// `stream`'s messages without its dictionary batches.
fn without_dictionaries(stream: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        let len = i32::from_le_bytes(stream[at + 4..at + 8].try_into().unwrap()) as usize;
        if len == 0 {
            out.extend_from_slice(&stream[at..at + 8]);
            return out;
        }
        let message = arrow_ipc::root_as_message(&stream[at + 8..at + 8 + len]).unwrap();
        let end = at + 8 + len + message.bodyLength() as usize;
        if message.header_type() != arrow_ipc::MessageHeader::DictionaryBatch {
            out.extend_from_slice(&stream[at..end]);
        }
        at = end;
    }
}

#[test]
fn a_batch_whose_dictionary_was_never_sent_names_its_field() {
    let stream_of = |keys: Int32Array| {
        let values: ArrayRef = Arc::new(StringArray::from(vec!["a"]));
        let dictionary: ArrayRef =
            Arc::new(arrow_array::DictionaryArray::try_new(keys, values).unwrap());
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![1]));
        let batch = RecordBatch::try_from_iter([("i", ints), ("d", dictionary)]).unwrap();
        let mut writer = StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
        writer.write(&batch).unwrap();
        without_dictionaries(&writer.into_inner().unwrap())
    };
    let error = error_of(&stream_of(Int32Array::from(vec![0])));
    assert!(
        error.starts_with(
            "invalid Arrow IPC: record batch: field \"d\" uses dictionary id 0, which the \
             stream has not sent ("
        ),
        "{error}"
    );
    // The IPC format lets a stream leave out the dictionary of a column of nulls.
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder
        .push(&stream_of(Int32Array::from(vec![None])))
        .unwrap();
    decoder.finish().unwrap();
    assert_eq!(decoder.next_batch().unwrap().column(1).null_count(), 1);
}

#[test]
fn a_delta_that_overflows_nested_dictionary_keys_is_an_error() {
    use arrow_array::builder::{ListBuilder, StringDictionaryBuilder};
    use arrow_array::types::Int8Type;
    use arrow_array::{Array, DictionaryArray};
    use arrow_ipc::writer::{DictionaryHandling, IpcWriteOptions};

    // Column d: Dictionary<Int32, List<Dictionary<Int8, Utf8>>>. The second batch's inner
    // dictionary grows by 101 values and its outer one by one list, both sent as deltas.
    // Appending the outer delta then merges the two inner dictionaries, 100 + 201 values,
    // which Int8 keys cannot index.
    let batch = |inner_values: usize, lists: usize| {
        let mut lists_builder = ListBuilder::new(StringDictionaryBuilder::<Int8Type>::new());
        let values: Vec<String> = (0..inner_values).map(|i| format!("v{i}")).collect();
        for list in 0..lists {
            // Every list refers to the first values only, so every key fits in an Int8; the
            // inner dictionary holds all the values all the same.
            lists_builder.values().append_value(&values[list % 100]);
            lists_builder.append(true);
        }
        let mut lists = lists_builder.finish();
        let inner = lists
            .values()
            .as_any()
            .downcast_ref::<DictionaryArray<Int8Type>>()
            .unwrap();
        let keys = inner.keys().clone();
        let inner: ArrayRef = Arc::new(
            DictionaryArray::<Int8Type>::try_new(keys, Arc::new(StringArray::from(values)))
                .unwrap(),
        );
        let field = Arc::new(arrow_schema::Field::new_list_field(
            inner.data_type().clone(),
            true,
        ));
        lists = ListArray::new(field, lists.offsets().clone(), inner, None);
        let keys = Int32Array::from_iter_values(0..lists.len() as i32);
        let outer: ArrayRef = Arc::new(DictionaryArray::try_new(keys, Arc::new(lists)).unwrap());
        RecordBatch::try_from_iter([("d", outer)]).unwrap()
    };
    let (first, second) = (batch(100, 1), batch(201, 2));
    let options = IpcWriteOptions::default().with_dictionary_handling(DictionaryHandling::Delta);
    let mut writer =
        StreamWriter::try_new_with_options(Vec::new(), &first.schema(), options).unwrap();
    writer.write(&first).unwrap();
    writer.write(&second).unwrap();
    let bytes = writer.into_inner().unwrap();

    let mut decoder = StreamDecoder::new(ReadLimits::default());
    let error = decoder.push(&bytes).unwrap_err().to_string();
    assert_eq!(
        error,
        "invalid Arrow IPC: delta dictionary batch for id 1 cannot be appended: \
         Dictionary key bigger than the key type"
    );
    // The decoder refuses more, and a new one still decodes a valid stream.
    assert!(decoder.push(&stream()).is_err());
    let mut fresh = StreamDecoder::new(ReadLimits::default());
    fresh.push(&stream()).unwrap();
    assert!(fresh.next_batch().is_some());
}

#[test]
fn a_push_budget_caps_what_the_messages_of_one_push_decompress_to() {
    use quiver::ipc::codec::Compression;
    use quiver::ipc::writer::{write_stream, WriteOptions};

    // Four ZSTD batches of 8 MB of zeros, a few KB each on the wire.
    let zeros: ArrayRef = Arc::new(arrow_array::Int64Array::from(vec![0i64; 1 << 20]));
    let batch = RecordBatch::try_from_iter([("z", zeros)]).unwrap();
    let options = WriteOptions {
        compression: Some(Compression::Zstd),
        ..WriteOptions::default()
    };
    let bytes = write_stream(
        batch.schema(),
        &[batch.clone(), batch.clone(), batch.clone(), batch],
        &options,
    )
    .unwrap()
    .to_vec();
    assert!(bytes.len() < 1 << 20, "{} bytes", bytes.len());

    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.set_push_budget(Some(20 << 20));
    let error = decoder.push(&bytes).unwrap_err().to_string();
    assert_eq!(
        error,
        "decompressed message bodies of one push of 8388608 bytes exceeds the memory the \
         reader may still use = 4194304 bytes"
    );
    // The budget is per push: the same batches pushed one message at a time all decode.
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.set_push_budget(Some(20 << 20));
    let mut at = 0;
    while at < bytes.len() {
        let len = i32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        let end = if len == 0 {
            bytes.len()
        } else {
            let message = arrow_ipc::root_as_message(&bytes[at + 8..at + 8 + len]).unwrap();
            at + 8 + len + message.bodyLength() as usize
        };
        decoder.push(&bytes[at..end]).unwrap();
        at = end;
    }
    decoder.finish().unwrap();
    assert_eq!(std::iter::from_fn(|| decoder.next_batch()).count(), 4);
}

/// A stream of `batches` batches of one Dictionary<Int32, Utf8> column, each adding 1,000
/// new values of 8 bytes, written with `handling` (deltas, or the whole dictionary again).
fn growing_dictionary(batches: usize, handling: arrow_ipc::writer::DictionaryHandling) -> Vec<u8> {
    use arrow_array::DictionaryArray;
    use arrow_ipc::writer::IpcWriteOptions;

    let batch = |n: usize| {
        let values: Vec<String> = (0..1000 * (n + 1)).map(|i| format!("v{i:07}")).collect();
        let keys = Int32Array::from_iter_values((0..values.len() as i32).step_by(100));
        let dictionary = DictionaryArray::try_new(keys, Arc::new(StringArray::from(values)));
        let column: ArrayRef = Arc::new(dictionary.unwrap());
        RecordBatch::try_from_iter([("d", column)]).unwrap()
    };
    let options = IpcWriteOptions::default().with_dictionary_handling(handling);
    let schema = batch(0).schema();
    let mut writer = StreamWriter::try_new_with_options(Vec::new(), &schema, options).unwrap();
    for n in 0..batches {
        writer.write(&batch(n)).unwrap();
    }
    writer.into_inner().unwrap()
}

/// The bytes of the buffers of a batch's first column's dictionary values.
fn dictionary_values_bytes(batch: &RecordBatch) -> u64 {
    let data = batch.column(0).to_data();
    let values = &data.child_data()[0];
    let nulls = values.nulls().map_or(0, |n| n.buffer().len());
    (nulls + values.buffers().iter().map(|b| b.len()).sum::<usize>()) as u64
}

#[test]
fn dictionaries_that_grow_past_max_dictionary_bytes_are_refused() {
    use arrow_ipc::writer::DictionaryHandling;

    // Each delta adds 12,000 bytes (1,000 offsets and 8,000 bytes of values).
    let deltas = growing_dictionary(10, DictionaryHandling::Delta);
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.push(&deltas).unwrap();
    let mut last = None;
    while let Some(batch) = decoder.next_batch() {
        last = Some(batch);
    }
    let whole = dictionary_values_bytes(&last.unwrap());
    assert_eq!(decoder.dictionary_bytes(), whole);
    assert_eq!(whole, 10_000 * 4 + 4 + 10_000 * 8);

    let limits = ReadLimits {
        max_dictionary_bytes: 50_000,
        ..ReadLimits::default()
    };
    let mut decoder = StreamDecoder::new(limits);
    let error = decoder.push(&deltas).unwrap_err().to_string();
    // The fifth delta is refused before it is appended: the dictionary so far (48,004
    // bytes) and the delta (12,004, with its own first offset) are more than the limit.
    assert_eq!(
        error,
        "dictionaries held by the reader of 60008 bytes exceeds maxDictionaryBytes = 50000 bytes"
    );
    let mut decoded = 0;
    while decoder.next_batch().is_some() {
        decoded += 1;
    }
    assert_eq!(decoded, 4);
    assert!(decoder.dictionary_bytes() <= 50_000);

    // Replacements do not add up: each dictionary sent again takes the old one's place.
    let resent = growing_dictionary(4, DictionaryHandling::Resend);
    let mut decoder = StreamDecoder::new(limits);
    decoder.push(&resent).unwrap();
    assert_eq!(decoder.dictionary_bytes(), 4_000 * 4 + 4 + 4_000 * 8);
}
