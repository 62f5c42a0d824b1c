//! The right-sized writer, natively: exact sizes, chunk splitting, round trips through
//! Quiver's own decoder, and bad input.
#![cfg(all(feature = "writer", not(target_arch = "wasm32")))]

mod writer_data;

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, RecordBatchOptions, StringArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use quiver::ipc::codec::Compression;
use quiver::ipc::writer::{
    message_size, stream_message_sizes, write_stream, ChunkSizing, Chunks, StreamEncoder,
    WriteOptions,
};
use quiver::ipc::{BatchMetadata, ReadLimits, StreamDecoder};

const CODECS: [Option<Compression>; 3] =
    [None, Some(Compression::Lz4Frame), Some(Compression::Zstd)];

fn options(compression: Option<Compression>) -> WriteOptions {
    WriteOptions {
        compression,
        ..WriteOptions::default()
    }
}

/// `columns` columns cycling int64, utf8 and bool, every third row null.
fn mixed_batch(columns: usize, rows: usize) -> RecordBatch {
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for c in 0..columns {
        let valid = |i: usize| !(i + c).is_multiple_of(3);
        let (data_type, array): (DataType, ArrayRef) = match c % 3 {
            0 => (
                DataType::Int64,
                Arc::new(Int64Array::from_iter(
                    (0..rows).map(|i| valid(i).then_some(i as i64 * 7 - 3)),
                )),
            ),
            1 => (
                DataType::Utf8,
                Arc::new(StringArray::from_iter(
                    (0..rows).map(|i| valid(i).then(|| "x".repeat(i % 13))),
                )),
            ),
            _ => (
                DataType::Boolean,
                Arc::new(BooleanArray::from_iter(
                    (0..rows).map(|i| valid(i).then_some(i % 5 == 0)),
                )),
            ),
        };
        fields.push(Field::new(format!("c{c}"), data_type, true));
        arrays.push(array);
    }
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options).unwrap()
}

fn decode(bytes: &[u8]) -> Vec<RecordBatch> {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.push(bytes).unwrap();
    decoder.finish().unwrap();
    assert!(decoder.is_ended());
    std::iter::from_fn(|| decoder.next_batch()).collect()
}

fn write_all(batches: &[RecordBatch], options: &WriteOptions) -> Vec<u8> {
    write_stream(batches[0].schema(), batches, options)
        .unwrap()
        .to_vec()
}

#[test]
fn message_size_equals_the_bytes_written() {
    for compression in CODECS {
        for columns in 0..=6 {
            for rows in [0, 1, 7, 1000] {
                let batch = mixed_batch(columns, rows);
                let options = options(compression);
                let mut encoder = StreamEncoder::try_new(batch.schema(), options).unwrap();
                let predicted = encoder.message_sizes(&batch).unwrap();
                let chunks = encoder.write(&batch).unwrap();
                let what = format!("{compression:?}, {columns} columns, {rows} rows");
                // One chunk per message, each exactly as long as predicted.
                assert_eq!(
                    chunks.lengths(),
                    vec![
                        predicted.schema.unwrap() as u32,
                        predicted.record_batch as u32
                    ],
                    "{what}"
                );
                assert_eq!(
                    message_size(&batch, &BatchMetadata::new(), &options).unwrap(),
                    predicted.record_batch
                );
                // The second write has no schema message, and the same batch message size.
                let again = encoder.message_sizes(&batch).unwrap();
                assert_eq!(again.schema, None);
                assert_eq!(again.record_batch, predicted.record_batch, "{what}");
                assert_eq!(
                    encoder.write(&batch).unwrap().lengths(),
                    vec![again.record_batch as u32]
                );
                let end = encoder.finish().unwrap();
                assert_eq!(end.to_vec(), [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
            }
        }
    }
}

#[test]
fn sizes_are_multiples_of_eight_and_match_the_prefix() {
    let batch = mixed_batch(4, 33);
    let chunks = StreamEncoder::try_new(batch.schema(), WriteOptions::default())
        .unwrap()
        .write(&batch)
        .unwrap();
    for chunk in chunks.iter() {
        assert_eq!(chunk.len() % 8, 0);
        assert_eq!(&chunk[..4], &[0xff; 4]);
        let metadata = i32::from_le_bytes(chunk[4..8].try_into().unwrap()) as usize;
        assert_eq!((8 + metadata) % 8, 0, "the body starts on a multiple of 8");
    }
}

#[test]
fn round_trip_through_quivers_decoder() {
    let batches: Vec<_> = (0..=6).map(|c| mixed_batch(c, 50)).collect();
    for compression in CODECS {
        for batch in &batches {
            let bytes = write_all(&[batch.clone(), batch.slice(3, 40)], &options(compression));
            let decoded = decode(&bytes);
            assert_eq!(decoded.len(), 2);
            assert_eq!(decoded[0], *batch);
            assert_eq!(decoded[1], batch.slice(3, 40));
        }
    }
}

#[test]
fn batch_metadata_is_written_in_the_sized_message_and_read_back() {
    let batch = mixed_batch(3, 50);
    let metadata = BatchMetadata::from([
        ("page".to_owned(), "7".to_owned()),
        ("note".to_owned(), "ünïcode ✓".to_owned()),
    ]);
    for compression in CODECS {
        let mut encoder = StreamEncoder::try_new(batch.schema(), options(compression)).unwrap();
        let plain = encoder.message_sizes(&batch).unwrap().record_batch;
        let sizes = encoder
            .message_sizes_with_metadata(&batch, &metadata)
            .unwrap();
        assert!(sizes.record_batch > plain, "{compression:?}");
        assert_eq!(
            message_size(&batch, &metadata, &options(compression)).unwrap(),
            sizes.record_batch
        );
        let first = encoder.write_with_metadata(&batch, &metadata).unwrap();
        assert_eq!(first.byte_length(), sizes.total(), "{compression:?}");
        let mut bytes = first.to_vec();
        bytes.extend(encoder.write(&batch).unwrap().to_vec());
        bytes.extend(encoder.finish().unwrap().to_vec());

        let mut decoder = StreamDecoder::new(ReadLimits::default());
        decoder.push(&bytes).unwrap();
        decoder.finish().unwrap();
        let read: Vec<_> = std::iter::from_fn(|| decoder.next_batch_with_metadata()).collect();
        assert_eq!(read.len(), 2);
        assert_eq!(
            read[0],
            (batch.clone(), metadata.clone()),
            "{compression:?}"
        );
        assert_eq!(
            read[1],
            (batch.clone(), BatchMetadata::new()),
            "{compression:?}"
        );
    }
}

#[test]
fn nested_types_round_trip_whole_and_sliced() {
    let batches = writer_data::nested_batches();
    for compression in CODECS {
        let bytes = write_all(&batches, &options(compression));
        assert_eq!(decode(&bytes), batches, "{compression:?}");
        for (offset, len) in [(1, 17), (3, 0), (5, 9), (0, 20)] {
            let sliced: Vec<_> = batches.iter().map(|b| b.slice(offset, len)).collect();
            let bytes = write_all(&sliced, &options(compression));
            assert_eq!(decode(&bytes), sliced, "{compression:?} {offset}+{len}");
        }
    }
}

/// The dictionary message of a write of `batches[1]` after `batches[0]` of the nested
/// batches (whose dictionary grows): its `isDelta` and how many values it carries, and
/// how many values the old and the new dictionary hold.
fn grown_dictionary(options: WriteOptions) -> (bool, i64, i64, i64) {
    let batches = writer_data::nested_batches();
    let mut encoder = StreamEncoder::try_new(batches[0].schema(), options).unwrap();
    let first = encoder.message_sizes(&batches[0]).unwrap();
    assert_eq!(first.dictionaries.len(), 1);
    let chunks = encoder.write(&batches[0]).unwrap();
    assert_eq!(chunks.count(), 3, "schema, dictionary, batch");
    // The same batch again needs no dictionary message.
    assert!(encoder
        .message_sizes(&batches[0])
        .unwrap()
        .dictionaries
        .is_empty());
    let second = encoder.message_sizes(&batches[1]).unwrap();
    assert_eq!(second.dictionaries.len(), 1);
    let chunks = encoder.write(&batches[1]).unwrap();
    assert_eq!(chunks.lengths()[0] as usize, second.dictionaries[0]);
    let message = arrow_ipc::root_as_message(&chunks.chunk(0).unwrap()[8..]).unwrap();
    let dictionary = message.header_as_dictionary_batch().unwrap();
    let old_len = batches[0].column(7).to_data().child_data()[0].len() as i64;
    let new_len = batches[1].column(7).to_data().child_data()[0].len() as i64;
    assert!(new_len > old_len);
    let sent = dictionary.data().unwrap().length();
    (dictionary.isDelta(), sent, old_len, new_len)
}

#[test]
fn a_grown_dictionary_is_sent_whole_by_default() {
    // A replacement, as pyarrow's default writes it: polars refuses deltas.
    let (is_delta, sent, _, new_len) = grown_dictionary(WriteOptions::default());
    assert!(!is_delta);
    assert_eq!(sent, new_len);
}

#[test]
fn dictionary_deltas_send_only_the_new_values() {
    let deltas = WriteOptions {
        dictionary_deltas: true,
        ..WriteOptions::default()
    };
    let (is_delta, sent, old_len, new_len) = grown_dictionary(deltas);
    assert!(is_delta);
    assert_eq!(sent, new_len - old_len);
}

#[test]
fn max_chunk_bytes_61_splits_every_message() {
    let batches = writer_data::nested_batches();
    for compression in CODECS {
        let whole = write_all(&batches, &options(compression));
        let split_options = WriteOptions {
            max_chunk_bytes: 61,
            ..options(compression)
        };
        let mut encoder = StreamEncoder::try_new(batches[0].schema(), split_options).unwrap();
        let mut joined = Vec::new();
        let mut writes: Vec<Chunks> = Vec::new();
        for batch in &batches {
            let sizes = encoder.message_sizes(batch).unwrap();
            let chunks = encoder.write(batch).unwrap();
            // Each message becomes full 61-byte chunks and a shorter last one.
            let mut expected = Vec::new();
            let messages = sizes
                .schema
                .into_iter()
                .chain(sizes.dictionaries)
                .chain([sizes.record_batch]);
            for size in messages {
                expected.extend(std::iter::repeat_n(61, size / 61));
                if size % 61 != 0 {
                    expected.push((size % 61) as u32);
                }
            }
            assert_eq!(chunks.lengths(), expected, "{compression:?}");
            writes.push(chunks);
        }
        writes.push(encoder.finish().unwrap());
        for chunks in &writes {
            let offsets = chunks.offsets();
            for (i, chunk) in chunks.iter().enumerate() {
                assert_eq!(
                    offsets[i] as usize,
                    chunks.iter().take(i).map(<[u8]>::len).sum::<usize>()
                );
                joined.extend_from_slice(chunk);
            }
        }
        assert_eq!(joined, whole, "{compression:?}");
    }
}

#[test]
fn fixed_chunk_mode_writes_the_same_bytes() {
    let batches = writer_data::nested_batches();
    let fixed = WriteOptions {
        chunk_sizing: ChunkSizing::Fixed,
        ..WriteOptions::default()
    };
    assert_eq!(
        write_all(&batches, &fixed),
        write_all(&batches, &WriteOptions::default())
    );
}

#[test]
fn uncompressed_writes_copy_each_byte_once() {
    let batches = writer_data::nested_batches();
    let mut encoder = StreamEncoder::try_new(batches[0].schema(), WriteOptions::default()).unwrap();
    let mut written = 0;
    for batch in &batches {
        written += encoder.write(&batch.slice(1, 15)).unwrap().byte_length() as u64;
    }
    written += encoder.finish().unwrap().byte_length() as u64;
    let stats = encoder.stats();
    assert_eq!(stats.extra_bytes_copied, 0);
    assert_eq!(stats.bytes_written, written);
    assert_eq!(stats.batches, 3);
    // Schema, three batches, three dictionary messages (one new, two replacements), end.
    assert_eq!(stats.messages, 8);
}

#[test]
fn the_reader_counts_the_copies_its_codecs_make() {
    // One non-null int64 column: one 80,000-byte buffer, compressed (it is a sequence).
    let values: ArrayRef = Arc::new(Int64Array::from_iter_values(0..10_000));
    let batch = RecordBatch::try_from_iter([("x", values)]).unwrap();
    for codec in [Compression::Lz4Frame, Compression::Zstd] {
        let bytes = write_all(std::slice::from_ref(&batch), &options(Some(codec)));
        let mut decoder = StreamDecoder::new(ReadLimits::default());
        decoder.push(&bytes).unwrap();
        decoder.finish().unwrap();
        let stats = decoder.stats();
        // ruzstd decodes into its window and copies out of it; LZ4 and C zstd decode in place.
        let ruzstd = codec == Compression::Zstd && !cfg!(feature = "zstd-c");
        let extra = if ruzstd { 80_000 } else { 0 };
        assert_eq!(stats.bytes_copied, stats.bytes_pushed + extra, "{codec:?}");
    }
}

#[test]
fn the_writer_counts_the_copies_its_codecs_make() {
    // One 80,000-byte buffer of zeros: its frame is tiny, so what is staged is mostly
    // the input, when the codec copies it into a buffer of its own before compressing.
    let zeros: ArrayRef = Arc::new(Int64Array::from(vec![0; 10_000]));
    let batch = RecordBatch::try_from_iter([("x", zeros)]).unwrap();
    for codec in [Compression::Lz4Frame, Compression::Zstd] {
        let mut encoder = StreamEncoder::try_new(batch.schema(), options(Some(codec))).unwrap();
        encoder.write(&batch).unwrap();
        let extra = encoder.stats().extra_bytes_copied;
        let stages_input = codec == Compression::Lz4Frame || !cfg!(feature = "zstd-c");
        let input = if stages_input { 80_000 } else { 0 };
        assert!(
            (input..input + 1_000).contains(&extra),
            "{codec:?}: {extra} extra bytes copied, expected {input} and a small frame"
        );
    }
}

#[test]
fn empty_stream_has_schema_and_end() {
    let schema = mixed_batch(3, 0).schema();
    let mut encoder = StreamEncoder::try_new(schema.clone(), WriteOptions::default()).unwrap();
    let bytes = encoder.finish().unwrap().to_vec();
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.push(&bytes).unwrap();
    decoder.finish().unwrap();
    assert_eq!(decoder.schema().unwrap(), &schema);
    assert!(decoder.next_batch().is_none());
}

#[test]
fn stream_sizes_add_up_to_the_first_write() {
    let batches = writer_data::nested_batches();
    let sizes = stream_message_sizes(&batches[0], &WriteOptions::default()).unwrap();
    let mut encoder = StreamEncoder::try_new(batches[0].schema(), WriteOptions::default()).unwrap();
    assert_eq!(
        encoder.write(&batches[0]).unwrap().byte_length(),
        sizes.total()
    );
}

#[test]
fn a_batch_of_another_schema_names_the_column() {
    let batch = mixed_batch(3, 5);
    let mut encoder = StreamEncoder::try_new(batch.schema(), WriteOptions::default()).unwrap();
    let other = mixed_batch(2, 5);
    assert_eq!(
        encoder.write(&other).unwrap_err().to_string(),
        "the writer's schema has 3 columns, the batch has 2"
    );
    let renamed = RecordBatch::try_from_iter(vec![
        ("c0", batch.column(0).clone()),
        ("c1", batch.column(1).clone()),
        ("other", batch.column(2).clone()),
    ])
    .unwrap();
    assert_eq!(
        encoder.write(&renamed).unwrap_err().to_string(),
        "column 2 of the batch is \"other\": Boolean, but the writer's schema has \"c2\": Boolean"
    );
    // The failed writes left the stream untouched.
    let bytes = [encoder.write(&batch).unwrap(), encoder.finish().unwrap()]
        .iter()
        .flat_map(Chunks::to_vec)
        .collect::<Vec<_>>();
    assert_eq!(decode(&bytes), vec![batch]);
}

#[test]
fn an_unsupported_type_names_the_field() {
    let inner = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
    let schema = Schema::new(vec![Field::new(
        "outer",
        DataType::Struct(Fields::from(vec![Field::new(
            "codes",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(inner)),
            false,
        )])),
        true,
    )]);
    let err = StreamEncoder::try_new(Arc::new(schema), WriteOptions::default())
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "unsupported: field \"codes\" is a dictionary of dictionaries, which IPC cannot describe"
    );
}

#[test]
fn bad_options_and_late_writes_are_refused() {
    let batch = mixed_batch(1, 3);
    let tiny = WriteOptions {
        max_chunk_bytes: 7,
        ..WriteOptions::default()
    };
    assert_eq!(
        StreamEncoder::try_new(batch.schema(), tiny)
            .err()
            .unwrap()
            .to_string(),
        "maxChunkBytes must be between 8 and 4294967295 bytes, found 7"
    );
    let level = WriteOptions {
        zstd_level: 0,
        ..WriteOptions::default()
    };
    assert_eq!(
        message_size(&batch, &BatchMetadata::new(), &level)
            .unwrap_err()
            .to_string(),
        "zstdLevel must be a whole number from 1 to 22, found 0"
    );
    let mut encoder = StreamEncoder::try_new(batch.schema(), WriteOptions::default()).unwrap();
    encoder.finish().unwrap();
    let expected = "the stream is finished: finish() already wrote its end-of-stream marker";
    assert_eq!(encoder.write(&batch).unwrap_err().to_string(), expected);
    assert_eq!(encoder.finish().unwrap_err().to_string(), expected);
}

#[test]
fn a_struct_with_its_children_in_another_order_is_refused() {
    let struct_of = |names: [&str; 2]| -> ArrayRef {
        let fields: Fields = names
            .iter()
            .map(|n| Field::new(*n, DataType::Float64, false))
            .collect();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(arrow_array::Float64Array::from(vec![1.0])),
            Arc::new(arrow_array::Float64Array::from(vec![2.0])),
        ];
        Arc::new(arrow_array::StructArray::new(fields, columns, None))
    };
    let xy = RecordBatch::try_from_iter([("s", struct_of(["x", "y"]))]).unwrap();
    let yx = RecordBatch::try_from_iter([("s", struct_of(["y", "x"]))]).unwrap();
    let mut encoder = StreamEncoder::try_new(xy.schema(), WriteOptions::default()).unwrap();
    assert_eq!(
        encoder.write(&yx).unwrap_err().to_string(),
        "column 0 of the batch is \"s\": Struct(\"y\": non-null Float64, \"x\": non-null Float64) \
         not null, but the writer's schema has \"s\": Struct(\"x\": non-null Float64, \"y\": \
         non-null Float64) not null"
    );
    encoder.write(&xy).unwrap();
}

#[test]
fn lz4_message_sizes_do_not_depend_on_what_the_writer_compressed_before() {
    let opts = options(Some(Compression::Lz4Frame));
    let column = |n: i64| -> ArrayRef { Arc::new(Int64Array::from_iter_values(0..n)) };
    let small = RecordBatch::try_from_iter([("x", column(50))]).unwrap();
    let big = RecordBatch::try_from_iter([("x", column(1 << 20))]).unwrap();
    // What a fresh stream (messageSize) says the big batch takes...
    let fresh = stream_message_sizes(&big, &opts).unwrap().record_batch;
    // ...is what it takes after a small batch set up the writer's LZ4 encoder.
    let mut encoder = StreamEncoder::try_new(small.schema(), opts).unwrap();
    encoder.write(&small).unwrap();
    assert_eq!(encoder.write(&big).unwrap().byte_length(), fresh);
}
