//! The reader benchmark's decode cells, run by the same decoder compiled for this machine
//! instead of wasm: the same stream files, cut into the same segments as bench/reader.js,
//! each byte copied once into its place by `StreamDecoder::push`. `pkg-scripts/bench.sh`
//! runs it, so that the tables show how far wasm is from native code on the same work.
//!
//! Usage: cargo bench --bench decode_native [--features zstd-c] -- DATA_DIR
//! Prints one JSON array of { codec, rows, mode, name, usPerBatch }. With `zstd-c` it
//! runs only the ZSTD streams, as "nativeZstdC".

use std::hint::black_box;
use std::time::Instant;

use quiver::ipc::reader::StreamDecoder;

type Error = Box<dyn std::error::Error>;

const BATCHES: f64 = 200.0;

fn main() -> Result<(), Error> {
    // `cargo bench` passes `--bench` before the arguments given after `--`.
    let dir = std::env::args()
        .skip(1)
        .find(|arg| arg != "--bench")
        .ok_or("usage: decode_native DATA_DIR")?;
    let (name, codecs): (&str, &[&str]) = if cfg!(feature = "zstd-c") {
        ("nativeZstdC", &["zstd"])
    } else {
        ("native", &["none", "lz4", "zstd"])
    };
    let mut cells = Vec::new();
    for &codec in codecs {
        for rows in [100, 500, 2000, 8192] {
            let bytes = std::fs::read(format!("{dir}/reader-{rows}-{codec}.arrows"))?;
            // As in bench/reader.js: random segments for uncompressed streams only, and
            // more rounds for them, since they take microseconds.
            let modes: &[&str] = if codec == "none" {
                &["64k", "random"]
            } else {
                &["64k"]
            };
            let rounds = if codec == "none" { 45 } else { 15 };
            for &mode in modes {
                let segments = segment(&bytes, mode);
                let us = median_us(rounds, || decode(&segments))?;
                cells.push(cell(codec, rows, mode, name, us));
                if codec == "none" {
                    let mut all = vec![0u8; bytes.len()];
                    let us = median_us(rounds, || Ok(copy(&segments, &mut all)))?;
                    cells.push(cell(codec, rows, mode, "nativeMemcpy", us));
                }
            }
        }
    }
    println!("[{}]", cells.join(",\n"));
    Ok(())
}

fn cell(codec: &str, rows: u32, mode: &str, name: &str, us: f64) -> String {
    format!(
        r#"{{"codec":"{codec}","rows":{rows},"mode":"{mode}","name":"{name}","usPerBatch":{us:.3}}}"#
    )
}

/// The same cuts as bench/reader.js's `segment`: fixed 64 KiB, or 1–100 KiB from its
/// generator, whose arithmetic is JavaScript's (doubles), so it is done in f64 here too.
fn segment<'a>(bytes: &'a [u8], mode: &str) -> Vec<&'a [u8]> {
    let mut seed = 42.0_f64;
    let mut next = || {
        seed = (seed * 1103515245.0 + 12345.0) % 2147483648.0;
        1024 + (seed % (99.0 * 1024.0)) as usize
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let size = if mode == "64k" { 65536 } else { next() };
        out.push(&bytes[at..(at + size).min(bytes.len())]);
        at += size;
    }
    out
}

/// Decodes the whole stream, dropping each batch as it comes, as the JS benchmark frees it.
fn decode(segments: &[&[u8]]) -> Result<u64, Error> {
    let mut decoder = StreamDecoder::new(Default::default());
    let mut batches = 0;
    for segment in segments {
        decoder.push(segment)?;
        while let Some(batch) = decoder.next_batch() {
            batches += 1;
            black_box(batch);
        }
    }
    decoder.finish()?;
    if batches != BATCHES as u64 {
        return Err(format!("expected {BATCHES} batches, decoded {batches}").into());
    }
    Ok(batches)
}

/// The memcpy floor: the segments copied into one buffer of the stream's size.
fn copy(segments: &[&[u8]], all: &mut [u8]) -> u64 {
    let mut at = 0;
    for segment in segments {
        all[at..at + segment.len()].copy_from_slice(segment);
        at += segment.len();
    }
    black_box(all[at - 1]).into()
}

/// Median µs per batch over `rounds` runs, after three warm-up runs.
fn median_us(rounds: usize, mut run: impl FnMut() -> Result<u64, Error>) -> Result<f64, Error> {
    for _ in 0..3 {
        run()?;
    }
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        black_box(run()?);
        times.push(start.elapsed().as_secs_f64() * 1e6 / BATCHES);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[rounds / 2])
}
