//! The checks of one field node or buffer against its field, which the walk before
//! decoding (`precheck.rs`), the flat reader (`flat.rs`) and the repairs (`repair.rs`)
//! share.

use arrow_ipc::FieldNode;
use arrow_schema::Field;

use crate::ipc::error::{QuiverError, Result};

/// A field node's length and null count: what arrow-rs can hold (lengths are `i32` in
/// places) and consistent with each other.
pub(super) fn check_node(field: &Field, node: &FieldNode) -> Result<()> {
    let (length, nulls) = (node.length(), node.null_count());
    if length < 0 || nulls < 0 || nulls > length || length > i64::from(i32::MAX) {
        return Err(QuiverError::invalid(format!(
            "field {:?} has length {length} and null count {nulls}, expected \
             0 <= null count <= length <= {}",
            field.name(),
            i32::MAX
        )));
    }
    Ok(())
}

/// Buffer `index` starts on an 8-byte boundary of the body, as IPC requires: arrow-rs's
/// typed views of it assume their type's alignment.
pub(super) fn check_aligned(index: usize, buffer: &arrow_ipc::Buffer) -> Result<()> {
    if buffer.offset() % 8 != 0 {
        return Err(QuiverError::invalid(format!(
            "buffer {index} starts at body offset {}, expected a multiple of 8",
            buffer.offset()
        )));
    }
    Ok(())
}

/// Buffer `index` of `field` holds a whole number of `width`-byte elements (width 1 for
/// bitmaps and byte data), and at least `min_len` bytes.
pub(super) fn check_length(
    field: &Field,
    index: usize,
    buffer: &arrow_ipc::Buffer,
    width: usize,
    min_len: i64,
) -> Result<()> {
    let len = buffer.length();
    if len < 0 || len % width as i64 != 0 || len < min_len {
        let at_least = match min_len {
            0 => String::new(),
            n => format!(" of at least {n}"),
        };
        return Err(QuiverError::invalid(format!(
            "buffer {index} of field {:?} has {len} bytes, expected a multiple of \
             {width}{at_least}",
            field.name()
        )));
    }
    Ok(())
}
