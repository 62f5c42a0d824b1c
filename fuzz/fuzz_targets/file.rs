//! Whole inputs as IPC files: the footer, its blocks and the messages they point to give
//! batches or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::ipc::{FileDecoder, ReadLimits};

fuzz_target!(|data: &[u8]| {
    let limits = ReadLimits {
        max_message_bytes: 1 << 24,
        max_decompressed_bytes: 1 << 24,
        max_dictionary_bytes: 1 << 26,
    };
    let Ok(mut decoder) = FileDecoder::from_bytes(data, limits) else {
        return;
    };
    // Out of order, as random access reads them; the last index is past the end.
    let count = decoder.num_batches();
    for index in (0..=count).rev() {
        if let Ok((batch, _)) = decoder.read_batch_from(index, data) {
            for column in batch.columns() {
                let _ = column.to_data().validate_full();
            }
        }
    }
});
