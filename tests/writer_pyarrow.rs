//! pyarrow reads what Quiver writes: every type of tests/data/generate.py, whole and
//! sliced, with each codec, equals its source; Quiver's messageSize equals pyarrow's
//! `get_record_batch_size`; nested batches with dictionary deltas equal what arrow-rs's
//! own writer wrote. The checks are in tests/data/check_written.py. Dictionaries that
//! grow or change are sent as pyarrow sends them: pyarrow and polars read the
//! replacements of the default, pyarrow the deltas asked for and those of a file
//! (tests/data/dictionaries.py).
#![cfg(all(feature = "writer", not(target_arch = "wasm32")))]

mod writer_data;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::RecordBatch;
use quiver::ipc::codec::Compression;
use quiver::ipc::writer::{
    message_size, write_file_with_metadata, write_stream, StreamEncoder, WriteOptions,
};
use quiver::ipc::{BatchMetadata, ReadLimits, StreamDecoder};

const CODECS: [(&str, Option<Compression>); 3] = [
    ("none", None),
    ("lz4", Some(Compression::Lz4Frame)),
    ("zstd", Some(Compression::Zstd)),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn python(script: &str, args: &[&OsStr]) -> String {
    let output = Command::new(root().join(".venv/bin/python"))
        .arg(root().join(script))
        .args(args)
        .output()
        .expect("pyarrow venv exists (run pkg-scripts/setup.sh)");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{script} failed:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn decode(bytes: &[u8]) -> Vec<RecordBatch> {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.push(bytes).unwrap();
    decoder.finish().unwrap();
    std::iter::from_fn(|| decoder.next_batch()).collect()
}

fn write(path: PathBuf, batches: &[RecordBatch], compression: Option<Compression>) {
    let options = WriteOptions {
        compression,
        ..WriteOptions::default()
    };
    let chunks = write_stream(batches[0].schema(), batches, &options).unwrap();
    std::fs::write(path, chunks.to_vec()).unwrap();
}

fn sliced(batch: &RecordBatch) -> RecordBatch {
    match batch.num_rows() {
        n if n >= 2 => batch.slice(1, n - 2),
        _ => batch.clone(),
    }
}

#[test]
fn pyarrow_reads_what_quiver_writes() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let sources = tmp.join("writer-sources");
    python("tests/data/generate.py", &[sources.as_os_str()]);
    let out = tmp.join("writer-out");
    std::fs::create_dir_all(&out).unwrap();

    let mut names = 0;
    for entry in std::fs::read_dir(&sources).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(name) = file.strip_suffix(".none.arrows") else {
            continue;
        };
        names += 1;
        let batches = decode(&std::fs::read(sources.join(&file)).unwrap());
        let slices: Vec<_> = batches.iter().map(sliced).collect();
        for (codec_name, codec) in CODECS {
            write(
                out.join(format!("{name}.{codec_name}.arrows")),
                &batches,
                codec,
            );
            write(
                out.join(format!("{name}.{codec_name}.sliced.arrows")),
                &slices,
                codec,
            );
        }
        let sizes: String = batches
            .iter()
            .map(|b| {
                let size = message_size(b, &BatchMetadata::new(), &WriteOptions::default());
                format!("{}\n", size.unwrap())
            })
            .collect();
        std::fs::write(out.join(format!("{name}.sizes")), sizes).unwrap();
    }
    assert!(names >= 30, "generate.py wrote only {names} types");

    let nested = writer_data::nested_batches();
    let nested = [nested[0].clone(), nested[1].slice(3, 14), nested[2].clone()];
    let mut reference = Vec::new();
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(&mut reference, &nested[0].schema()).unwrap();
    nested.iter().for_each(|b| writer.write(b).unwrap());
    writer.finish().unwrap();
    drop(writer);
    std::fs::write(out.join("nested.reference.arrows"), reference).unwrap();
    for (codec_name, codec) in CODECS {
        write(
            out.join(format!("nested.{codec_name}.arrows")),
            &nested,
            codec,
        );
    }

    // Each batch's message metadata, as pyarrow wrote it, written back with the batch.
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder
        .push(&std::fs::read(sources.join("batch_metadata.none.arrows")).unwrap())
        .unwrap();
    let tagged: Vec<_> = std::iter::from_fn(|| decoder.next_batch_with_metadata()).collect();
    for (codec_name, codec) in CODECS {
        let options = WriteOptions {
            compression: codec,
            ..WriteOptions::default()
        };
        let mut encoder = StreamEncoder::try_new(tagged[0].0.schema(), options).unwrap();
        let mut bytes = Vec::new();
        for (batch, metadata) in &tagged {
            bytes.extend(
                encoder
                    .write_with_metadata(batch, metadata)
                    .unwrap()
                    .to_vec(),
            );
        }
        bytes.extend(encoder.finish().unwrap().to_vec());
        std::fs::write(
            out.join(format!("with_metadata.{codec_name}.arrows")),
            bytes,
        )
        .unwrap();
    }

    let report = python("tests/data/check_written.py", &[out.as_os_str()]);
    println!("{report}");
}

#[test]
fn pyarrow_and_polars_read_changed_dictionaries() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("writer-dictionaries");
    let script = "tests/data/dictionaries.py";
    python(script, &["write".as_ref(), out.as_os_str()]);
    // A dictionary that grows, then one that is replaced.
    let batches = decode(&std::fs::read(out.join("pyarrow.arrows")).unwrap());
    assert_eq!(batches.len(), 3);
    let schema = batches[0].schema();
    let stream = |options: &WriteOptions| {
        write_stream(schema.clone(), &batches, options)
            .unwrap()
            .to_vec()
    };
    let replacements = stream(&WriteOptions::default());
    std::fs::write(out.join("quiver.replacements.arrows"), replacements).unwrap();
    let deltas = stream(&WriteOptions {
        dictionary_deltas: true,
        ..WriteOptions::default()
    });
    std::fs::write(out.join("quiver.deltas.arrows"), deltas).unwrap();
    // A file holds no replacement: only the batches whose dictionary grows.
    let none = BatchMetadata::new();
    let file = write_file_with_metadata(
        schema.clone(),
        batches[..2].iter().map(|b| (b, &none)),
        &WriteOptions::default(),
    )
    .unwrap();
    std::fs::write(out.join("quiver.file.arrow"), file.to_vec()).unwrap();
    let report = python(script, &["check".as_ref(), out.as_os_str()]);
    assert!(report.ends_with(", 0 failed\n"), "{report}");
}
