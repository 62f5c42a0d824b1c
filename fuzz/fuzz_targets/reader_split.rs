//! The same decoder fed in segments whose sizes the fuzzer picks: the first byte seeds
//! the split sizes, so message boundaries fall anywhere.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::ipc::{ReadLimits, StreamDecoder};

fuzz_target!(|data: &[u8]| {
    let Some((&seed, mut rest)) = data.split_first() else {
        return;
    };
    let limits = ReadLimits {
        max_message_bytes: 1 << 24,
        max_decompressed_bytes: 1 << 24,
        max_dictionary_bytes: 1 << 26,
    };
    let mut decoder = StreamDecoder::new(limits);
    let mut size = usize::from(seed) + 1;
    while !rest.is_empty() {
        let (segment, tail) = rest.split_at(size.min(rest.len()));
        if decoder.push(segment).is_err() {
            return;
        }
        while decoder.next_batch().is_some() {}
        rest = tail;
        size = size * 7 % 251 + 1;
    }
    let _ = decoder.finish();
});
