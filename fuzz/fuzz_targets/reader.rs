//! Whole inputs through the stream decoder: any bytes give batches or an error, never a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::ipc::{ReadLimits, StreamDecoder};

fuzz_target!(|data: &[u8]| {
    let limits = ReadLimits {
        max_message_bytes: 1 << 24,
        max_decompressed_bytes: 1 << 24,
        max_dictionary_bytes: 1 << 26,
    };
    let mut decoder = StreamDecoder::new(limits);
    let _ = decoder.push(data);
    let _ = decoder.finish();
    while let Some(batch) = decoder.next_batch() {
        for column in batch.columns() {
            let _ = column.to_data().validate_full();
        }
    }
});
