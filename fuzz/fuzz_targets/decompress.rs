//! Each decompressor on arbitrary frames with an arbitrary declared size: output of any
//! other size is an error, and nothing panics or allocates without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::ipc::codec::{Codecs, Compression};

fuzz_target!(|data: &[u8]| {
    let [a, b, frame @ ..] = data else {
        return;
    };
    let declared = usize::from(u16::from_le_bytes([*a, *b]));
    let mut codecs = Codecs::default();
    let mut out = vec![0u8; declared];
    for codec in [Compression::Lz4Frame, Compression::Zstd] {
        let _ = codecs.decompress(codec, frame, &mut out);
    }
});
