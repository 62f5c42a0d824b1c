//! Every input that once crashed a fuzz target (fuzz/regressions/<target>/) now decodes
//! to batches or an error, whole and in small segments, without a panic.

use std::path::Path;

use quiver::ipc::codec::{Codecs, Compression};
use quiver::ipc::{ReadLimits, StreamDecoder};

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

#[test]
fn reader_regressions_give_results_or_errors() {
    let mut cases = inputs("reader");
    cases.extend(
        inputs("reader_split")
            .into_iter()
            .map(|(n, b)| (n, b[1..].to_vec())),
    );
    for (name, bytes) in cases {
        for segment in [usize::MAX, 1, 13] {
            // Reaching this line without a panic is the property; print what happened.
            match decode(&bytes, segment.min(bytes.len().max(1))) {
                Ok(n) => println!("{name}: {n} batches"),
                Err(e) => println!("{name}: {e}"),
            }
        }
    }
}

#[test]
fn decompress_regressions_give_results_or_errors() {
    for (name, bytes) in inputs("decompress") {
        // The declared size as fuzz/fuzz_targets/decompress.rs reads it.
        let [a, b, c, frame @ ..] = bytes.as_slice() else {
            continue;
        };
        let declared = u32::from_le_bytes([*a, *b, *c, 0]) % (256 * 1024 + 1);
        let mut out = vec![0; declared as usize];
        for codec in [Compression::Lz4Frame, Compression::Zstd] {
            let result = Codecs::default().decompress(codec, frame, &mut out);
            println!("{name} {codec:?}: {result:?}");
        }
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
        "invalid IPC stream: buffer 4 of field \"key\" has 53 bytes, expected a multiple of 4"
    );
}
