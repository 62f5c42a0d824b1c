//! Each decompressor on arbitrary frames with an arbitrary declared size (the first three
//! bytes, up to 256 KiB, so that LZ4 frames of several linked blocks fit): output of any
//! other size is an error, and nothing panics or allocates without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::ipc::codec::{Codecs, Compression};

const MAX_DECLARED: u32 = 256 * 1024;

fuzz_target!(|data: &[u8]| {
    let [a, b, c, frame @ ..] = data else {
        return;
    };
    let declared = u32::from_le_bytes([*a, *b, *c, 0]) % (MAX_DECLARED + 1);
    let mut codecs = Codecs::default();
    let mut out = vec![0u8; declared as usize];
    for codec in [Compression::Lz4Frame, Compression::Zstd] {
        let _ = codecs.decompress(codec, frame, &mut out);
    }
});
