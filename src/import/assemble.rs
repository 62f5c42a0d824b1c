//! Exactly-sized destination buffers, and `ArrayData` built from them once JS filled them.

use arrow_array::{make_array, RecordBatch, RecordBatchOptions};
use arrow_buffer::{BooleanBuffer, Buffer, MutableBuffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, SchemaRef};

use crate::ipc::{QuiverError, Result};

/// One array node, in pre-order: its length, and the bit offset of its validity bitmap
/// (and of a boolean's values) inside the first copied byte. JS copies bitmaps from the
/// byte holding the node's first bit, so a sliced Arrow JS `Data` needs no bit shifting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    pub length: usize,
    pub bit_offset: usize,
}

/// Destinations JS writes into; [`Filled::finish`] turns them into arrow-rs buffers.
#[derive(Debug)]
pub struct Filled {
    buffers: Vec<MutableBuffer>,
    sizes: Vec<usize>,
}

/// One 64-byte-aligned buffer per size (arrow-rs rounds capacity up to 64), never zeroed:
/// JS writes every byte once. `addresses()` gives where. Memory that cannot be had is an
/// error, not an abort.
pub fn allocate(sizes: Vec<usize>) -> Result<Filled> {
    let buffers = sizes
        .iter()
        .map(|&s| {
            MutableBuffer::try_with_capacity(s).map_err(|e| {
                QuiverError::Usage(format!(
                    "cannot allocate a {s}-byte buffer to copy into: {e}"
                ))
            })
        })
        .collect::<Result<_>>()?;
    Ok(Filled { buffers, sizes })
}

impl Filled {
    /// Where each destination starts in (wasm) memory.
    pub fn addresses(&mut self) -> Vec<usize> {
        self.buffers
            .iter_mut()
            .map(|b| b.as_mut_ptr() as usize)
            .collect()
    }

    /// Total bytes JS writes.
    pub fn total_bytes(&self) -> usize {
        self.sizes.iter().sum()
    }

    /// The buffers, each of its exact size.
    ///
    /// # Safety
    /// Every destination must have been written in full (`sizes[i]` bytes from
    /// `addresses()[i]`).
    pub unsafe fn finish(self) -> Vec<Buffer> {
        self.buffers
            .into_iter()
            .zip(self.sizes)
            .map(|(mut buffer, size)| {
                // SAFETY: capacity >= size (allocate), and the caller wrote the bytes.
                unsafe { buffer.set_len(size) };
                buffer.into()
            })
            .collect()
    }
}

/// The record batch over `buffers`, consumed in the order JS described them: per node in
/// pre-order, a validity buffer (empty for no nulls; none for Null), then the type's own
/// buffers (values; or offsets then values; or offsets; or dictionary indices), then its
/// children (a dictionary's values are its child). Every array is fully validated.
pub fn assemble(
    schema: &SchemaRef,
    num_rows: usize,
    nodes: &[Node],
    buffers: Vec<Buffer>,
) -> Result<RecordBatch> {
    let mut walk = Walk {
        nodes: nodes.iter(),
        buffers: buffers.into_iter(),
    };
    let columns = schema
        .fields()
        .iter()
        .map(|field| {
            walk.array(field.data_type())
                .map(make_array)
                .map_err(|e| QuiverError::Usage(format!("column {:?}: {e}", field.name())))
        })
        .collect::<Result<Vec<_>>>()?;
    if walk.nodes.next().is_some() || walk.buffers.next().is_some() {
        return Err(QuiverError::Internal(
            "more nodes or buffers than the schema uses".into(),
        ));
    }
    let options = RecordBatchOptions::new().with_row_count(Some(num_rows));
    Ok(RecordBatch::try_new_with_options(
        SchemaRef::clone(schema),
        columns,
        &options,
    )?)
}

struct Walk<'a> {
    nodes: std::slice::Iter<'a, Node>,
    buffers: std::vec::IntoIter<Buffer>,
}

impl Walk<'_> {
    fn buffer(&mut self) -> Result<Buffer> {
        self.buffers
            .next()
            .ok_or_else(|| QuiverError::Internal("fewer buffers than the schema uses".into()))
    }

    fn array(&mut self, data_type: &DataType) -> Result<ArrayData> {
        let node = *self
            .nodes
            .next()
            .ok_or_else(|| QuiverError::Internal("fewer nodes than the schema uses".into()))?;
        let mut builder = ArrayData::builder(data_type.clone()).len(node.length);
        if *data_type == DataType::Null {
            return Ok(builder.build()?);
        }
        builder = builder.nulls(self.nulls(node)?);
        builder = match data_type {
            // The values bitmap starts at the same bit as the validity bitmap.
            DataType::Boolean => builder.offset(node.bit_offset).add_buffer(self.buffer()?),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => {
                builder
                    .add_buffer(self.buffer()?)
                    .add_buffer(self.buffer()?)
            }
            DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => builder
                .add_buffer(self.buffer()?)
                .child_data(vec![self.array(f.data_type())?]),
            DataType::FixedSizeList(f, _) => builder.child_data(vec![self.array(f.data_type())?]),
            DataType::Struct(fields) => builder.child_data(
                fields
                    .iter()
                    .map(|f| self.array(f.data_type()))
                    .collect::<Result<_>>()?,
            ),
            DataType::Dictionary(_, values) => builder
                .add_buffer(self.buffer()?)
                .child_data(vec![self.array(values)?]),
            _ => builder.add_buffer(self.buffer()?),
        };
        Ok(builder.build()?)
    }

    /// The node's validity, or `None` when JS sent no bitmap or it has no nulls.
    fn nulls(&mut self, node: Node) -> Result<Option<NullBuffer>> {
        let bitmap = self.buffer()?;
        if bitmap.is_empty() {
            return Ok(None);
        }
        let bits = node.bit_offset + node.length;
        if bitmap.len() * 8 < bits {
            return Err(QuiverError::Usage(format!(
                "validity bitmap needs {} bytes, found {}",
                bits.div_ceil(8),
                bitmap.len()
            )));
        }
        let nulls = NullBuffer::new(BooleanBuffer::new(bitmap, node.bit_offset, node.length));
        Ok((nulls.null_count() > 0).then_some(nulls))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Array, BooleanArray, Int32Array, StringArray};
    use arrow_schema::{Field, Schema};

    use super::*;
    use crate::TestResult;

    fn filled(bytes: &[&[u8]]) -> Vec<Buffer> {
        let mut filled = allocate(bytes.iter().map(|b| b.len()).collect()).unwrap();
        for (address, source) in filled.addresses().into_iter().zip(bytes) {
            // SAFETY: each destination has capacity for its source (allocate).
            unsafe {
                std::ptr::copy_nonoverlapping(source.as_ptr(), address as *mut u8, source.len())
            };
        }
        // SAFETY: every destination was written in full above.
        unsafe { filled.finish() }
    }

    fn node(length: usize, bit_offset: usize) -> Node {
        Node { length, bit_offset }
    }

    #[test]
    fn builds_validated_columns_with_bit_offsets() -> TestResult {
        let schema = Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("b", DataType::Boolean, true),
        ]));
        let ints: Vec<u8> = [1i32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        let offsets: Vec<u8> = [0i32, 1, 1, 3]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        // Bits 2..5 of 0b0001_0100 / 0b0000_1100: validity [1, 0, 1], values [1, 1, 0].
        let batch = assemble(
            &schema,
            3,
            &[node(3, 0), node(3, 0), node(3, 2)],
            filled(&[
                &[0b101],
                &ints,
                &[],
                &offsets,
                b"abc",
                &[0b1_0100],
                &[0b1100],
            ]),
        )?;
        let n = batch
            .column(0)
            .as_any()
            .downcast_ref::<Int32Array>()
            .ok_or("column 0 is not an Int32Array")?;
        assert_eq!(n.iter().collect::<Vec<_>>(), [Some(1), None, Some(3)]);
        let s = batch
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or("column 1 is not a StringArray")?;
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            [Some("a"), Some(""), Some("bc")]
        );
        let b = batch
            .column(2)
            .as_any()
            .downcast_ref::<BooleanArray>()
            .ok_or("column 2 is not a BooleanArray")?;
        assert_eq!(
            b.iter().collect::<Vec<_>>(),
            [Some(true), None, Some(false)]
        );
        Ok(())
    }

    #[test]
    fn invalid_buffers_are_errors_naming_the_column() {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, false)]));
        let offsets: Vec<u8> = [0i32, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
        let error = assemble(&schema, 1, &[node(1, 0)], filled(&[&[], &offsets, b"ab"]))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("column \"s\": "), "{error}");
        let bitmap = assemble(&schema, 9, &[node(9, 0)], filled(&[&[1], &offsets, b"ab"]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            bitmap,
            "column \"s\": validity bitmap needs 2 bytes, found 1"
        );
    }
}
