//! IPC files: those pyarrow, pandas, polars and DuckDB write (tests/data/files.py) decode
//! to what pyarrow reads from them; Quiver's own files (none, LZ4, ZSTD) are read back by
//! pyarrow, by DuckDB (its own types) and by arrow-rs; random access reads only what one batch needs; and malformed files
//! get an error that says what is wrong.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use arrow_array::{ArrayRef, DictionaryArray, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use quiver::ipc::codec::Compression;
use quiver::ipc::writer::{write_file_with_metadata, FileEncoder};
use quiver::ipc::{BatchMetadata, FileDecoder, ReadLimits, WriteOptions};

/// Runs files.py once per test binary (tests run in parallel and share the folder).
fn generated_files() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ipc-files");
        python(&["write", out.to_str().unwrap()]);
        out
    })
    .clone()
}

fn python(args: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(root.join(".venv/bin/python"))
        .arg(root.join("tests/data/files.py"))
        .args(args)
        .output()
        .expect("the venv exists (run pkg-scripts/setup.sh)");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "files.py {args:?} failed:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn read_file(bytes: &[u8]) -> Vec<RecordBatch> {
    let mut decoder = FileDecoder::from_bytes(bytes, ReadLimits::default()).unwrap();
    (0..decoder.num_batches())
        .map(|i| decoder.read_batch_from(i, bytes).unwrap().0)
        .collect()
}

fn read_stream(path: &Path) -> Vec<RecordBatch> {
    let bytes = std::fs::read(path).unwrap();
    arrow_ipc::reader::StreamReader::try_new(bytes.as_slice(), None)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn producer_files() -> Vec<(String, Vec<u8>)> {
    let dir = generated_files();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".arrow").map(str::to_owned))
        .filter(|f| !f.contains(".quiver."))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let bytes = std::fs::read(dir.join(format!("{name}.arrow"))).unwrap();
            (name, bytes)
        })
        .collect()
}

#[test]
fn files_of_pyarrow_pandas_polars_and_duckdb_decode_to_what_pyarrow_reads() {
    let files = producer_files();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for producer in [
        "pyarrow_types",
        "feather_lz4",
        "feather_zstd",
        "pandas",
        "polars_zstd",
        "duckdb",
        "duckdb_arrow_1_5",
    ] {
        assert!(names.contains(&producer), "files.py wrote no {producer}");
    }
    for (name, bytes) in &files {
        let expected = read_stream(&generated_files().join(format!("{name}.expected.arrows")));
        let got = read_file(bytes);
        assert_eq!(got.len(), expected.len(), "{name}: batch count");
        for (i, (got, want)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(got, want, "{name}: batch {i}");
        }
    }
}

#[test]
fn a_delta_in_the_footer_extends_the_dictionary_of_every_batch() {
    let bytes = std::fs::read(generated_files().join("pyarrow_dictionary_deltas.arrow")).unwrap();
    let batches = read_file(&bytes);
    let first = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<DictionaryArray<arrow_array::types::Int32Type>>()
        .unwrap();
    let values = first
        .values()
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    // pyarrow wrote [a, b], then a delta [c]: a file reader applies both before any batch.
    assert_eq!(values.iter().flatten().collect::<Vec<_>>(), ["a", "b", "c"]);
}

#[test]
fn a_first_batch_that_a_delta_follows_reads_from_its_ranges() {
    let bytes = std::fs::read(generated_files().join("pyarrow_dictionary_deltas.arrow")).unwrap();
    let mut decoder = FileDecoder::from_bytes(&bytes, ReadLimits::default()).unwrap();
    let mut ranges = decoder.ranges(0).unwrap();
    // The delta's block lies after batch 0's: read_batch takes the ranges in file order,
    // as openFile hands them back.
    assert!(!ranges.is_sorted_by_key(|r| r.start), "{ranges:?}");
    ranges.sort_by_key(|r| r.start);
    // SAFETY: every destination is filled from the file's bytes.
    let (batch, _) = unsafe {
        decoder.read_batch(0, &ranges, |offset, destination| {
            for (to, from) in destination.iter_mut().zip(&bytes[offset as usize..]) {
                to.write(*from);
            }
        })
    }
    .unwrap();
    assert_eq!(batch, read_file(&bytes)[0]);
}

#[test]
fn quiver_files_are_read_back_by_pyarrow_and_arrow_rs() {
    let dir = generated_files();
    for (name, bytes) in producer_files() {
        let batches = read_file(&bytes);
        let schema = batches[0].schema();
        for (codec, compression) in [
            ("none", None),
            ("lz4", Some(Compression::Lz4Frame)),
            ("zstd", Some(Compression::Zstd)),
        ] {
            let options = WriteOptions {
                compression,
                // Small chunks, so that messages and the footer span several.
                max_chunk_bytes: 1000,
                ..WriteOptions::default()
            };
            let none = BatchMetadata::new();
            let chunks = write_file_with_metadata(
                schema.clone(),
                batches.iter().map(|b| (b, &none)),
                &options,
            )
            .unwrap();
            assert!(chunks.iter().all(|c| c.len() <= 1000));
            let file = chunks.to_vec();
            std::fs::write(dir.join(format!("{name}.quiver.{codec}.arrow")), &file).unwrap();
            // arrow-rs is built here without its codecs.
            if compression.is_none() {
                let arrow_rs: Vec<RecordBatch> = arrow_ipc::reader::FileReader::try_new(
                    std::io::Cursor::new(file.clone()),
                    None,
                )
                .unwrap()
                .map(Result::unwrap)
                .collect();
                assert_eq!(arrow_rs, batches, "{name}.{codec}: arrow-rs");
            }
            assert_eq!(read_file(&file), batches, "{name}.{codec}: Quiver");
        }
    }
    let report = python(&["check", dir.to_str().unwrap()]);
    assert!(
        report.ends_with("failed\n") && report.contains(", 0 failed"),
        "{report}"
    );
}

fn dictionary_batch(values: &[&str], keys: &[i32]) -> RecordBatch {
    let array = DictionaryArray::new(
        Int32Array::from(keys.to_vec()),
        Arc::new(StringArray::from(values.to_vec())),
    );
    let schema = Schema::new(vec![Field::new(
        "d",
        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        false,
    )]);
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(array) as ArrayRef]).unwrap()
}

#[test]
fn a_file_writer_writes_deltas_and_refuses_replacements() {
    let first = dictionary_batch(&["a", "b"], &[0, 1]);
    let mut encoder = FileEncoder::try_new(first.schema(), WriteOptions::default()).unwrap();
    let none = BatchMetadata::new();
    let mut file = encoder.write_with_metadata(&first, &none).unwrap().to_vec();
    let delta = dictionary_batch(&["a", "b", "c"], &[2, 0]);
    file.extend(encoder.write_with_metadata(&delta, &none).unwrap().to_vec());
    let replacement = dictionary_batch(&["x"], &[0]);
    let error = encoder
        .write_with_metadata(&replacement, &none)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "a dictionary in column \"d\" does not extend the one written before: an IPC file \
         cannot replace a dictionary (write a stream instead)"
    );
    // The refused batch wrote nothing: the file goes on.
    file.extend(encoder.finish().unwrap().to_vec());
    assert_eq!(encoder.stats().bytes_written, file.len() as u64);
    let read = read_file(&file);
    assert_eq!(read.len(), 2);
    let keys = |b: &RecordBatch| {
        let d = b
            .column(0)
            .as_any()
            .downcast_ref::<DictionaryArray<arrow_array::types::Int32Type>>()
            .unwrap();
        let values = d.values().as_any().downcast_ref::<StringArray>().unwrap();
        d.keys()
            .iter()
            .map(|k| values.value(k.unwrap() as usize).to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&read[0]), ["a", "b"]);
    assert_eq!(keys(&read[1]), ["c", "a"]);
}

#[test]
fn an_empty_file_has_a_schema_and_no_batches() {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
    let file = write_file_with_metadata(schema.clone(), [], &WriteOptions::default())
        .unwrap()
        .to_vec();
    let decoder = FileDecoder::from_bytes(&file, ReadLimits::default()).unwrap();
    assert_eq!(decoder.schema(), &schema);
    assert_eq!(decoder.num_batches(), 0);
    let reader = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(file), None).unwrap();
    assert_eq!(reader.num_batches(), 0);
}

/// A file of `batches` batches of 10 000 int64 rows each.
fn many_batches(batches: usize) -> (Vec<u8>, Vec<RecordBatch>) {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let all: Vec<RecordBatch> = (0..batches)
        .map(|b| {
            let column =
                arrow_array::Int64Array::from_iter_values((0..10_000).map(|i| i * b as i64));
            RecordBatch::try_new(schema.clone(), vec![Arc::new(column)]).unwrap()
        })
        .collect();
    let none = BatchMetadata::new();
    let file = write_file_with_metadata(
        schema,
        all.iter().map(|b| (b, &none)),
        &WriteOptions::default(),
    )
    .unwrap()
    .to_vec();
    (file, all)
}

#[test]
fn random_access_reads_the_footer_and_one_batch_only() {
    let (file, batches) = many_batches(50);
    let tail = &file[file.len() - 10..];
    let footer =
        FileDecoder::footer_range(tail, file.len() as u64, &ReadLimits::default()).unwrap();
    let mut decoder = FileDecoder::try_new(
        &file[footer.start as usize..footer.end as usize],
        file.len() as u64,
        ReadLimits::default(),
    )
    .unwrap();
    let ranges = decoder.ranges(37).unwrap();
    let (batch, _) = decoder.read_batch_from(37, &file).unwrap();
    assert_eq!(batch, batches[37]);
    // read_batch_from hands over the whole file; a caller that reads only the ranges
    // reads this much:
    let needed: u64 =
        ranges.iter().map(|r| r.end - r.start).sum::<u64>() + 10 + (footer.end - footer.start);
    let batch_bytes = 10_000 * 8;
    assert!(
        needed < 2 * batch_bytes,
        "reading batch 37 needs {needed} bytes"
    );
    // The second batch needs its block only.
    let again = decoder.ranges(3).unwrap();
    assert_eq!(again.len(), 1);
    assert!(again[0].end - again[0].start < batch_bytes + 1000);
}

fn error_of(file: &[u8]) -> String {
    match FileDecoder::from_bytes(file, ReadLimits::default()) {
        Err(e) => e.to_string(),
        Ok(mut decoder) => (0..decoder.num_batches())
            .find_map(|i| decoder.read_batch_from(i, file).err())
            .map(|e| e.to_string())
            .unwrap_or_else(|| "no error".into()),
    }
}

fn sample_file() -> Vec<u8> {
    many_batches(2).0
}

/// Where the footer starts, from the file's tail.
fn footer_start(file: &[u8]) -> usize {
    let len = i32::from_le_bytes(file[file.len() - 10..file.len() - 6].try_into().unwrap());
    file.len() - 10 - len as usize
}

#[test]
fn a_truncated_footer_is_an_error() {
    let file = sample_file();
    assert_eq!(
        error_of(&file[..file.len() - 3]),
        "invalid Arrow IPC: expected an IPC file to end with the magic ARROW1, found bytes \
         [0, 0, 0, 65, 82, 82]: the file is truncated or not an IPC file"
    );
    // Magic at both ends, but too short for a footer's length between them.
    let mut short = b"ARROW1\0\0".to_vec();
    short.extend_from_slice(&[0, 0, 0]);
    short.extend_from_slice(b"ARROW1");
    assert_eq!(
        error_of(&short),
        "invalid Arrow IPC: expected an IPC file of at least 18 bytes (its magic, and the \
         footer's length and magic), found 17: the file is truncated"
    );
    // The tail is whole, but the footer it announces does not fit.
    let mut short = file[..8].to_vec();
    short.extend_from_slice(&file[file.len() - 10..]);
    let len = i32::from_le_bytes(file[file.len() - 10..file.len() - 6].try_into().unwrap());
    assert_eq!(
        error_of(&short),
        format!(
            "invalid Arrow IPC: footer length is {len} bytes, but the file has 0 bytes \
             between its magic numbers: the footer is truncated"
        )
    );
}

#[test]
fn footer_blocks_outside_the_file_are_an_error() {
    let file = sample_file();
    let start = footer_start(&file);
    // Keep the first 4000 bytes and the footer: the blocks now end past the messages.
    let mut cut = file[..4000].to_vec();
    cut.extend_from_slice(&file[start..]);
    let error = error_of(&cut);
    assert!(
        error.starts_with("invalid Arrow IPC: record batch block 0 spans bytes ")
            && error.ends_with(&format!("outside the file's messages (bytes 8..{})", 4000)),
        "{error}"
    );
}

/// `file` with its footer rewritten: batch 1's block as `change` makes it. Returns the
/// file and batch 1's true block.
fn with_batch_1_block(
    file: &[u8],
    change: impl Fn(&arrow_ipc::Block) -> arrow_ipc::Block,
) -> (Vec<u8>, arrow_ipc::Block) {
    let mut original = None;
    let bad = with_batch_blocks(file, |blocks| {
        original = Some(blocks[1]);
        blocks[1] = change(&blocks[1]);
    });
    (bad, original.unwrap())
}

/// `file` with its footer's record batch blocks as `change` leaves them.
fn with_batch_blocks(file: &[u8], change: impl FnOnce(&mut Vec<arrow_ipc::Block>)) -> Vec<u8> {
    let start = footer_start(file);
    let footer = arrow_ipc::root_as_footer(&file[start..file.len() - 10]).unwrap();
    let mut blocks: Vec<arrow_ipc::Block> =
        footer.recordBatches().unwrap().iter().copied().collect();
    change(&mut blocks);
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let batches = fbb.create_vector(&blocks);
    let schema = arrow_ipc::convert::IpcSchemaEncoder::new().schema_to_fb_offset(
        &mut fbb,
        &arrow_ipc::convert::try_fb_to_schema(footer.schema().unwrap()).unwrap(),
    );
    let mut builder = arrow_ipc::FooterBuilder::new(&mut fbb);
    builder.add_version(arrow_ipc::MetadataVersion::V5);
    builder.add_schema(schema);
    builder.add_recordBatches(batches);
    let root = builder.finish();
    fbb.finish(root, None);
    let new_footer = fbb.finished_data();
    let mut bad = file[..start].to_vec();
    bad.extend_from_slice(new_footer);
    bad.extend_from_slice(&(new_footer.len() as i32).to_le_bytes());
    bad.extend_from_slice(b"ARROW1");
    bad
}

#[test]
fn a_block_whose_size_disagrees_with_its_message_is_an_error() {
    let file = sample_file();
    // A body one word shorter than the message's.
    let (bad, block) = with_batch_1_block(&file, |b| {
        arrow_ipc::Block::new(b.offset(), b.metaDataLength(), b.bodyLength() - 8)
    });
    let (meta, body) = (block.metaDataLength(), block.bodyLength());
    assert_eq!(
        error_of(&bad),
        format!(
            "invalid Arrow IPC: record batch block 1 declares {meta} bytes of metadata and a \
             {}-byte body, but its message needs more: message body needs {body} bytes, got {}",
            body - 8,
            body - 8
        )
    );
    // Batch 0 still reads: the error is batch 1's.
    let mut decoder = FileDecoder::from_bytes(&bad, ReadLimits::default()).unwrap();
    assert!(decoder.read_batch_from(0, &bad).is_ok());

    // Metadata declared one word longer: the block runs past its message (into the
    // end-of-stream marker), whose body has the declared length.
    let (bad, _) = with_batch_1_block(&file, |b| {
        arrow_ipc::Block::new(b.offset(), b.metaDataLength() + 8, b.bodyLength())
    });
    assert_eq!(
        error_of(&bad),
        format!(
            "invalid Arrow IPC: record batch block 1 declares {} bytes of metadata and a \
             {body}-byte body, but its message has {meta} and {body}",
            meta + 8
        )
    );
}

#[test]
fn a_message_larger_than_its_block_is_refused_before_it_is_allocated() {
    let file = sample_file();
    // The footer gives batch 1 a 32-byte body; its message declares its true body. The
    // framer is bounded by the block, so it refuses the message at its metadata, before
    // allocating the body it declares (a hostile message may declare up to
    // maxMessageBytes in a file of a few hundred bytes).
    let (bad, block) = with_batch_1_block(&file, |b| {
        arrow_ipc::Block::new(b.offset(), b.metaDataLength(), 32)
    });
    let (meta, body) = (i64::from(block.metaDataLength()), block.bodyLength());
    assert_eq!(
        error_of(&bad),
        format!(
            "invalid Arrow IPC: record batch block 1 declares {meta} bytes of metadata and a \
             32-byte body, but its message needs more: message needs {} bytes, got {}",
            meta - 8 + body,
            meta + 32
        )
    );
}

#[test]
fn footer_blocks_listing_more_bytes_than_the_file_are_an_error() {
    let file = sample_file();
    // Batch 0's block listed ten times: each copy would be read and decoded again, as a
    // hostile footer listing one large message thousands of times would have it.
    let mut listed = 0;
    let bad = with_batch_blocks(&file, |blocks| {
        *blocks = vec![blocks[0]; 10];
        listed = 10 * (i64::from(blocks[0].metaDataLength()) + blocks[0].bodyLength());
    });
    let held = footer_start(&file) - 8;
    assert_eq!(
        error_of(&bad),
        format!(
            "invalid Arrow IPC: the footer's blocks list {listed} bytes of messages, but the \
             file holds {held}: blocks share bytes"
        )
    );
}

#[test]
fn a_schema_message_that_differs_from_the_footer_is_an_error() {
    let file = sample_file();
    // Rename the field in the schema message only: its name is the flatbuffer string
    // "x" (length 1, the byte, a NUL), and the schema message comes first.
    let at = file
        .windows(6)
        .position(|w| w == [1, 0, 0, 0, b'x', 0])
        .unwrap();
    assert!(at < footer_start(&file) && at < 200);
    let mut bad = file.clone();
    bad[at + 4] = b'y';
    assert_eq!(
        error_of(&bad),
        "invalid Arrow IPC: the file's schema message differs from its footer: the footer \
         has (x: Int64 not null), the schema message has (y: Int64 not null)"
    );
}

#[test]
fn a_schema_message_whose_field_metadata_differs_names_the_field() {
    let field = Field::new("x", DataType::Int64, false)
        .with_metadata([("unit".to_string(), "metre".to_string())]);
    let schema = Arc::new(Schema::new(vec![field]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(arrow_array::Int64Array::from(vec![1, 2]))],
    )
    .unwrap();
    let none = BatchMetadata::new();
    let file = write_file_with_metadata(schema, [(&batch, &none)], &WriteOptions::default())
        .unwrap()
        .to_vec();
    // The schema message comes first: change its "metre" only.
    let at = file.windows(5).position(|w| w == b"metre").unwrap();
    assert!(at < footer_start(&file));
    let mut bad = file.clone();
    bad[at..at + 5].copy_from_slice(b"meter");
    let error = error_of(&bad);
    assert!(
        error.starts_with("invalid Arrow IPC: the file's schema message differs from its footer")
            && error.contains("\"metre\"")
            && error.contains("\"meter\""),
        "{error}"
    );
}

/// The footer of an empty file whose schema has nested fields, a dictionary and metadata,
/// so that its verification walks every kind of table a footer holds.
fn nested_footer() -> Vec<u8> {
    let fields = vec![
        Field::new(
            "d",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            true,
        ),
        Field::new_list("l", Field::new_list_field(DataType::Int32, true), true),
        Field::new_struct("s", vec![Field::new("a", DataType::Int64, false)], false),
    ];
    let metadata = std::collections::HashMap::from([("origin".to_owned(), "test".to_owned())]);
    let schema = Arc::new(Schema::new_with_metadata(fields, metadata));
    let file = write_file_with_metadata(schema, [], &WriteOptions::default())
        .unwrap()
        .to_vec();
    file[footer_start(&file)..file.len() - 10].to_vec()
}

#[test]
fn the_footer_is_verified_as_arrow_ipc_verifies_it() {
    // Quiver verifies the footer's fields itself (to link one schema verifier, not two):
    // each corrupted footer must be refused exactly when arrow-ipc's verifier refuses it.
    let footer = nested_footer();
    let mut refused = 0;
    for at in 0..footer.len() {
        for byte in [0x00, 0xFF, footer[at] ^ 0x01, footer[at] ^ 0x40] {
            let mut bad = footer.clone();
            bad[at] = byte;
            let expected = arrow_ipc::root_as_footer(&bad).is_err();
            let file_len = bad.len() as u64 + 18;
            let found = match FileDecoder::try_new(&bad, file_len, ReadLimits::default()) {
                Err(e) => e
                    .to_string()
                    .starts_with("invalid Arrow IPC: file footer is not a valid flatbuffer: "),
                Ok(_) => false,
            };
            assert_eq!(found, expected, "byte {at} set to {byte:#04x}");
            refused += usize::from(found);
        }
    }
    assert!(
        refused > footer.len(),
        "only {refused} corrupted footers were refused"
    );
}

#[test]
fn a_footer_schema_that_is_not_a_valid_flatbuffer_names_where() {
    let footer = nested_footer();
    // The struct's child's name "a" (length 1, the byte, a NUL): a length past the end.
    let at = footer
        .windows(6)
        .position(|w| w == [1, 0, 0, 0, b'a', 0])
        .unwrap();
    let mut bad = footer.clone();
    bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let error = FileDecoder::try_new(&bad, bad.len() as u64 + 18, ReadLimits::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.starts_with("invalid Arrow IPC: file footer is not a valid flatbuffer: ")
            && error.contains("while verifying table field `name`")
            && error.contains("while verifying union variant `Schema`")
            && error.contains("while verifying table field `schema`"),
        "{error}"
    );
}
