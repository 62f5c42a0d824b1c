//! Every input that once crashed a fuzz target (fuzz/regressions/<target>/) now ends in
//! the clear error listed here for it, whole and in small segments, without a panic.

use std::path::Path;

use quiver::ipc::codec::{Codecs, Compression};
use quiver::ipc::{FileDecoder, ReadLimits, StreamDecoder};

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

fn decode(bytes: &[u8], segment: usize) -> Result<usize, String> {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    let mut batches = 0;
    for part in bytes.chunks(segment) {
        decoder.push(part).map_err(|e| e.to_string())?;
        batches += std::iter::from_fn(|| decoder.next_batch()).count();
    }
    decoder.finish().map_err(|e| e.to_string())?;
    Ok(batches)
}

/// The error each reader input ends in, whole and in 1- and 13-byte segments alike.
const READER_ERRORS: &[(&str, &str)] = &[
    (
        "crash-772618ba8f131be07af15dd393cf183c8b573d71",
        "invalid Arrow IPC: field \"fixedsizebinary_19_nonnullable\" declares fixed size -1140850669, expected a non-negative size",
    ),
    (
        "crash-96f18d42d5f8bb89e6b40025cacfa5b4c81e104d",
        "invalid Arrow IPC: buffer 4 of field \"key\" has 53 bytes, expected a multiple of 4",
    ),
];

/// The error of each decompress input, per codec. None has been found yet; an input
/// added to fuzz/regressions/decompress/ needs its line here.
const DECOMPRESS_ERRORS: &[(&str, Compression, &str)] = &[];

/// The first error of each file input, read as fuzz/fuzz_targets/file.rs reads it. None
/// has been found yet; an input added to fuzz/regressions/file/ needs its line here.
const FILE_ERRORS: &[(&str, &str)] = &[];

/// The file name at the end of an input's path.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Asserts that the checked-in inputs are those `expected` names, so that none goes
/// unchecked.
fn assert_inputs(cases: &[(String, Vec<u8>)], expected: impl Iterator<Item = &'static str>) {
    let mut found: Vec<&str> = cases.iter().map(|(path, _)| file_name(path)).collect();
    let mut expected: Vec<&str> = expected.collect();
    found.sort_unstable();
    expected.sort_unstable();
    expected.dedup();
    assert_eq!(
        found, expected,
        "every regression input needs its expected error"
    );
}

#[test]
fn reader_regressions_fail_with_their_errors() {
    let mut cases = inputs("reader");
    cases.extend(
        inputs("reader_split")
            .into_iter()
            .map(|(n, b)| (n, b[1..].to_vec())),
    );
    assert_inputs(&cases, READER_ERRORS.iter().map(|(name, _)| *name));
    for (path, bytes) in &cases {
        let (_, expected) = READER_ERRORS
            .iter()
            .find(|(name, _)| *name == file_name(path))
            .expect("assert_inputs found every input");
        for segment in [usize::MAX, 1, 13] {
            let result = decode(bytes, segment.min(bytes.len().max(1)));
            assert_eq!(
                result,
                Err(expected.to_string()),
                "{path} in segments of {segment}"
            );
        }
    }
}

#[test]
fn decompress_regressions_fail_with_their_errors() {
    let cases = inputs("decompress");
    assert_inputs(&cases, DECOMPRESS_ERRORS.iter().map(|(name, ..)| *name));
    for (path, bytes) in &cases {
        // The declared size as fuzz/fuzz_targets/decompress.rs reads it.
        let [a, b, c, frame @ ..] = bytes.as_slice() else {
            panic!("{path}: a decompress input starts with 3 bytes of declared size");
        };
        let declared = u32::from_le_bytes([*a, *b, *c, 0]) % (256 * 1024 + 1);
        let mut out = vec![0; declared as usize];
        for (_, codec, expected) in DECOMPRESS_ERRORS
            .iter()
            .filter(|(name, ..)| *name == file_name(path))
        {
            let result = Codecs::default().decompress(*codec, frame, &mut out);
            assert_eq!(
                result.map_err(|e| e.to_string()),
                Err(expected.to_string()),
                "{path} {codec:?}"
            );
        }
    }
}

#[test]
fn file_regressions_fail_with_their_errors() {
    let cases = inputs("file");
    assert_inputs(&cases, FILE_ERRORS.iter().map(|(name, _)| *name));
    for (path, bytes) in &cases {
        let read = FileDecoder::from_bytes(bytes, ReadLimits::default()).and_then(|mut file| {
            (0..file.num_batches()).try_for_each(|i| file.read_batch_from(i, bytes).map(drop))
        });
        let (_, expected) = FILE_ERRORS
            .iter()
            .find(|(name, _)| *name == file_name(path))
            .expect("assert_inputs found every input");
        assert_eq!(
            read.map_err(|e| e.to_string()),
            Err(expected.to_string()),
            "{path}"
        );
    }
}

#[test]
fn first_reader_crash_is_now_a_clear_error() {
    // Found by the reader target: an offsets buffer of 53 bytes, which arrow-data
    // would slice as i32s and panic on.
    let (_, bytes) = inputs("reader")
        .into_iter()
        .find(|(name, _)| name.ends_with("crash-96f18d42d5f8bb89e6b40025cacfa5b4c81e104d"))
        .expect("regression input is checked in");
    let error = decode(&bytes, usize::MAX).unwrap_err();
    assert_eq!(
        error,
        "invalid Arrow IPC: buffer 4 of field \"key\" has 53 bytes, expected a multiple of 4"
    );
}
