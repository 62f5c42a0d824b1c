//! The reader validates string and binary columns itself (src/ipc/reader/validate.rs):
//! these streams show that it refuses exactly what arrow-rs's full validation refuses.
//! Natively this runs the portable loops; under `wasm-pack test` it runs as wasm, where
//! the checks take their SIMD path.

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, RecordBatch, StringArray};
use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema};
use quiver::ipc::{ReadLimits, StreamDecoder};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// IPC bytes of a stream with one column of `data_type` (Utf8 or Binary) whose offsets and
/// data are exactly `offsets` and `data`, valid or not: a valid stream of the same shape,
/// with those two buffers overwritten in the record batch's body.
fn stream(data_type: &DataType, offsets: &[i32], data: &[u8]) -> Vec<u8> {
    // One string holding all the bytes, then empty ones: the buffers have the right sizes.
    let rows = offsets.len() - 1;
    let text = "a".repeat(data.len());
    let values = std::iter::once(text.as_str()).chain(std::iter::repeat_n("", rows - 1));
    let column: ArrayRef = match data_type {
        DataType::Utf8 => Arc::new(StringArray::from_iter_values(values)),
        _ => Arc::new(BinaryArray::from_iter_values(values)),
    };
    let schema = Arc::new(Schema::new(vec![Field::new("c", data_type.clone(), false)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![column]).unwrap();
    let write = |batches: &[RecordBatch]| {
        let mut writer = StreamWriter::try_new(Vec::new(), &schema).unwrap();
        batches.iter().for_each(|b| writer.write(b).unwrap());
        writer.finish().unwrap();
        writer.into_inner().unwrap()
    };
    let mut bytes = write(&[batch]);
    // The batch message follows the schema message: a continuation marker, the metadata
    // length, the metadata, then the body.
    let at = write(&[]).len() - 8;
    let metadata_len = i32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
    let body = at + 8 + metadata_len;
    let message = arrow_ipc::root_as_message(&bytes[at + 8..body]).unwrap();
    let buffers = message.header_as_record_batch().unwrap().buffers().unwrap();
    let (offsets_at, data_at) = (buffers.get(1).offset(), buffers.get(2).offset());
    let offset_bytes: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    let start = body + offsets_at as usize;
    bytes[start..start + offset_bytes.len()].copy_from_slice(&offset_bytes);
    let start = body + data_at as usize;
    bytes[start..start + data.len()].copy_from_slice(data);
    bytes
}

/// Whether arrow-rs's `validate_full` accepts the column.
fn arrow_accepts(data_type: &DataType, offsets: &[i32], data: &[u8]) -> bool {
    let builder = ArrayData::builder(data_type.clone())
        .len(offsets.len() - 1)
        .add_buffer(Buffer::from_slice_ref(offsets))
        .add_buffer(Buffer::from_slice_ref(data));
    // SAFETY: validated at once, and never used otherwise.
    unsafe { builder.build_unchecked() }.validate_full().is_ok()
}

/// Quiver's reader decodes the stream exactly when arrow-rs accepts the column.
fn agrees(offsets: &[i32], data: &[u8]) {
    for data_type in [DataType::Utf8, DataType::Binary] {
        let mut decoder = StreamDecoder::new(ReadLimits::default());
        let decoded = decoder.push(&stream(&data_type, offsets, data));
        assert_eq!(
            decoded.is_ok(),
            arrow_accepts(&data_type, offsets, data),
            "{data_type} offsets {offsets:?} of {data:?}: quiver {decoded:?}"
        );
    }
}

#[test]
fn strings_and_binaries_are_refused_where_arrow_refuses_them() {
    let text = "aé€😀z".as_bytes(); // 1, 2, 3 and 4-byte characters
    let cases: &[(&[i32], &[u8])] = &[
        (&[0, 1, 3, 6, 10, 11], text),
        (&[0, 2, 3], text),     // splits é
        (&[0, 4], text),        // splits €
        (&[1, 3], text),        // starts at a character, not at 0
        (&[0, 3, 1], text),     // decreasing
        (&[-1, 3], text),       // negative
        (&[0, 12], text),       // past the data
        (&[0, 2], b"\xff\xfe"), // not UTF-8
        (&[0, 1, 2], b"a\x80"), // a lone continuation byte
        (&[0, 0, 0], b""),      // empty strings
        (&[3, 3], b"abc"),      // one empty string at the end
    ];
    for (offsets, data) in cases {
        agrees(offsets, data);
    }
}

#[test]
fn random_offsets_agree_with_arrow() {
    // A small xorshift: the test is deterministic and needs no extra crate.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    // Long enough for several steps of the SIMD loops (64 bytes and 16 offsets a step)
    // and their tails. The data mostly ends at or just past the last offset, so the
    // checks of the bytes run; sometimes it is any length. Two thirds of it is ASCII,
    // a third mixed characters, and half of it then gets one high byte anywhere, which
    // the ASCII check must find.
    let alphabet = "abcdefgh€é😀".as_bytes();
    for _ in 0..1500 {
        let mut offsets = vec![next(3) as i32 - 1];
        for _ in 0..=next(60) {
            // Mostly increasing, sometimes by a partial character, rarely decreasing.
            let step = if next(40) == 0 { -1 } else { next(10) as i32 };
            offsets.push(offsets[offsets.len() - 1] + step);
        }
        let end = offsets[offsets.len() - 1].max(0) as u64;
        let len = if next(8) == 0 {
            next(300)
        } else {
            end + next(4)
        } as usize;
        let mut data: Vec<u8> = match next(3) {
            0 => (0..len)
                .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                .collect(),
            _ => (0..len).map(|_| b'a' + next(26) as u8).collect(),
        };
        if len > 0 && next(2) == 0 {
            data[next(len as u64) as usize] = 0x80 | next(128) as u8;
        }
        agrees(&offsets, &data);
    }
}
