//! What one write allocates, counted by a global allocator (one test, so that nothing
//! else allocates while it measures). Mirrors the test of DataFusion Comet #6985.
#![cfg(all(feature = "writer", not(target_arch = "wasm32")))]

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use quiver::ipc::writer::{ChunkSizing, StreamEncoder, WriteOptions};
use quiver::ipc::BatchMetadata;
use quiver::memory::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// The benchmark's columns: int64, int32 with 10% nulls, float64 and 16-byte utf8.
fn batch(rows: usize) -> RecordBatch {
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("id", Arc::new(Int64Array::from_iter_values(0..rows as i64))),
        (
            "n",
            Arc::new(Int32Array::from_iter(
                (0..rows as i32).map(|i| (i % 10 != 0).then_some(i)),
            )),
        ),
        (
            "x",
            Arc::new(Float64Array::from_iter_values(
                (0..rows).map(|i| i as f64 / 3.0),
            )),
        ),
        (
            "s",
            Arc::new(StringArray::from_iter_values(
                (0..rows).map(|i| format!("{i:016}")),
            )),
        ),
    ];
    RecordBatch::try_from_iter(columns).unwrap()
}

/// Bytes allocated by one write of `batch`, after a first write has sent the schema.
fn allocated_by_write(batch: &RecordBatch, sizing: ChunkSizing) -> (u64, Vec<u32>) {
    let options = WriteOptions {
        chunk_sizing: sizing,
        ..WriteOptions::default()
    };
    let mut encoder = StreamEncoder::try_new(batch.schema(), options).unwrap();
    drop(encoder.write(batch).unwrap());
    let before = ALLOCATOR.stats();
    let chunks = encoder.write(batch).unwrap();
    let after = ALLOCATOR.stats();
    (
        after.allocated_bytes - before.allocated_bytes,
        chunks.lengths(),
    )
}

#[test]
fn one_batch_is_one_chunk_of_exactly_its_size() {
    let batch = batch(12_100);
    let size =
        quiver::ipc::writer::message_size(&batch, &BatchMetadata::new(), &WriteOptions::default())
            .unwrap();
    assert!((480_000..490_000).contains(&size), "payload {size}");

    let (exact, lengths) = allocated_by_write(&batch, ChunkSizing::Exact);
    assert_eq!(lengths, vec![size as u32]);
    assert!(
        exact < size as u64 + 4096,
        "right-sized write of {size} bytes allocated {exact}"
    );

    let (fixed, lengths) = allocated_by_write(&batch, ChunkSizing::Fixed);
    assert_eq!(lengths, vec![size as u32]);
    assert!(fixed > 1 << 20, "fixed 1 MiB chunks allocated only {fixed}");
    println!(
        "payload {size} B: right-sized write allocated {exact} B (+{} B), fixed 1 MiB chunks {fixed} B",
        exact - size as u64
    );
}
