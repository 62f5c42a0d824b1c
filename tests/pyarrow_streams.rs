//! Streams written by pyarrow (tests/data/generate.py: every common type, nulls, empty and
//! sliced batches, uncompressed, LZ4 and ZSTD bodies) decode in Quiver to the same data
//! as arrow-rs's own reader finds in the uncompressed stream; so do bodies whose buffers
//! span many LZ4 and ZSTD blocks.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use arrow_array::RecordBatch;
use quiver::ipc::{BatchMetadata, ReadLimits, StreamDecoder};

/// Runs generate.py once per test binary (tests run in parallel and share the folder).
fn generated_streams() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(generate).clone()
}

fn generate() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pyarrow-types");
    let status = Command::new(root.join(".venv/bin/python"))
        .arg(root.join("tests/data/generate.py"))
        .arg(&out)
        .status()
        .expect("pyarrow venv exists (run pkg-scripts/setup.sh)");
    assert!(status.success(), "generate.py failed");
    out
}

fn quiver_decode(bytes: &[u8]) -> Vec<RecordBatch> {
    let batches = quiver_decode_with_metadata(bytes);
    batches.into_iter().map(|(batch, _)| batch).collect()
}

fn quiver_decode_with_metadata(bytes: &[u8]) -> Vec<(RecordBatch, BatchMetadata)> {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    // Odd-sized segments, so that messages span pushes.
    for segment in bytes.chunks(97) {
        decoder.push(segment).unwrap();
    }
    decoder.finish().unwrap();
    assert_eq!(decoder.stats().bytes_pushed, bytes.len() as u64);
    std::iter::from_fn(|| decoder.next_batch_with_metadata()).collect()
}

fn arrow_rs_decode(bytes: &[u8]) -> Vec<RecordBatch> {
    arrow_ipc::reader::StreamReader::try_new(bytes, None)
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

#[test]
fn pyarrow_streams_decode_to_the_same_data() {
    let dir = generated_streams();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".none.arrows").map(str::to_owned))
        .filter(|name| {
            !["dictionary_evolution", "multi_block", "batch_metadata"].contains(&name.as_str())
        })
        .collect();
    names.sort();
    assert!(names.len() >= 30, "generate.py wrote only {names:?}");
    for name in names {
        let plain = std::fs::read(dir.join(format!("{name}.none.arrows"))).unwrap();
        let want = arrow_rs_decode(&plain);
        let rows: Vec<usize> = want.iter().map(|b| b.num_rows()).collect();
        assert_eq!(rows, [40, 0, 20], "{name}");
        for codec in ["none", "lz4", "zstd"] {
            let bytes = std::fs::read(dir.join(format!("{name}.{codec}.arrows"))).unwrap();
            let got = quiver_decode(&bytes);
            assert_eq!(got, want, "{name}.{codec}");
        }
    }
}

#[test]
fn bodies_of_many_compressed_blocks_decode() {
    let dir = generated_streams();
    let plain = std::fs::read(dir.join("multi_block.none.arrows")).unwrap();
    let want = arrow_rs_decode(&plain);
    let rows: Vec<usize> = want.iter().map(|b| b.num_rows()).collect();
    assert_eq!(rows, [60_000, 60_000, 30_000]);
    for codec in ["lz4", "zstd"] {
        let bytes = std::fs::read(dir.join(format!("multi_block.{codec}.arrows"))).unwrap();
        assert!(
            bytes.len() < plain.len() / 2,
            "{codec} compressed the bodies"
        );
        assert_eq!(quiver_decode(&bytes), want, "{codec}");
    }
}

#[test]
fn dictionary_deltas_and_replacements_decode() {
    let dir = generated_streams();
    let expected: Vec<Vec<Option<String>>> = serde_json::from_str(
        &std::fs::read_to_string(dir.join("dictionary_evolution.json")).unwrap(),
    )
    .unwrap();
    for codec in ["none", "lz4", "zstd"] {
        let bytes =
            std::fs::read(dir.join(format!("dictionary_evolution.{codec}.arrows"))).unwrap();
        let got: Vec<Vec<Option<String>>> = quiver_decode(&bytes)
            .iter()
            .map(|batch| {
                let strings =
                    arrow_cast::cast(batch.column(0), &arrow_schema::DataType::Utf8).unwrap();
                let strings = strings
                    .as_any()
                    .downcast_ref::<arrow_array::StringArray>()
                    .unwrap();
                strings.iter().map(|v| v.map(str::to_owned)).collect()
            })
            .collect();
        assert_eq!(got, expected, "dictionary_evolution.{codec}");
    }
}

#[test]
fn each_batch_comes_with_its_message_metadata() {
    let dir = generated_streams();
    let expected: Vec<BatchMetadata> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("batch_metadata.json")).unwrap())
            .unwrap();
    assert!(expected[0].contains_key("page") && expected[1].is_empty());
    for codec in ["none", "lz4", "zstd"] {
        let bytes = std::fs::read(dir.join(format!("batch_metadata.{codec}.arrows"))).unwrap();
        let got: Vec<BatchMetadata> = quiver_decode_with_metadata(&bytes)
            .into_iter()
            .map(|(_, metadata)| metadata)
            .collect();
        assert_eq!(got, expected, "batch_metadata.{codec}");
    }
}
