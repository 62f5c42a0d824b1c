//! The plan of a record batch or dictionary message body: its field nodes, and its
//! buffers as parts (`part.rs`) that point into the arrays' own buffers, so that each
//! byte is read once, when it is written out.
//!
//! This mirrors arrow-ipc's `write_array_data`, which materializes rebased offsets and
//! shifted bitmaps of sliced arrays into new buffers before copying them into a growing
//! body `Vec`. Here a sliced array costs no copy: offsets are rebased and bits are shifted
//! while they are written into the chunk.

use arrow_array::cast::AsArray;
use arrow_array::types::ByteArrayType;
use arrow_array::{downcast_primitive, Array, GenericByteArray};
use arrow_buffer::{Buffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_ipc::FieldNode;
use arrow_schema::{DataType, UnionMode};

use super::part::{read_int, Part};
use crate::ipc::error::{QuiverError, Result};

/// The nodes, buffers and variadic counts of one message body.
#[derive(Default)]
pub(crate) struct BodyPlan {
    pub(crate) nodes: Vec<FieldNode>,
    pub(crate) parts: Vec<Part>,
    pub(crate) variadic_counts: Vec<i64>,
}

impl BodyPlan {
    /// Empties the plan, keeping its capacity for the next message.
    pub(crate) fn clear(&mut self) {
        self.nodes.clear();
        self.parts.clear();
        self.variadic_counts.clear();
    }

    /// Plans one column of a batch. Flat columns are read straight from their arrays;
    /// the others go through `ArrayData`.
    pub(crate) fn add_column(&mut self, array: &dyn Array, name: &str) -> Result<()> {
        match self.add_flat(array)? {
            true => Ok(()),
            false => self.add(&array.to_data(), name),
        }
    }

    /// Plans a primitive, boolean or (large) utf8/binary column from its array, without
    /// the `to_data()` clone that `add` needs, which took a third of the time of a
    /// 100-row write. Returns false, having planned nothing, for any other column.
    fn add_flat(&mut self, array: &dyn Array) -> Result<bool> {
        macro_rules! values_of {
            ($t:ty, $array:ident) => {
                $array.as_primitive_opt::<$t>().map(|a| a.values().inner())
            };
        }
        let values = downcast_primitive!(array.data_type() => (values_of, array), _ => None);
        if let Some(values) = values {
            self.add_node(array.len(), array.nulls())?;
            self.parts.push(Part::Bytes(values.clone()));
            return Ok(true);
        }
        match array.data_type() {
            DataType::Boolean => match array.as_boolean_opt() {
                Some(array) => {
                    self.add_node(array.len(), array.nulls())?;
                    let values = array.values();
                    self.add_bits(values.inner(), values.offset(), values.len())?;
                }
                None => return Ok(false),
            },
            DataType::Utf8 => return self.add_flat_bytes(array.as_string_opt::<i32>()),
            DataType::LargeUtf8 => return self.add_flat_bytes(array.as_string_opt::<i64>()),
            DataType::Binary => return self.add_flat_bytes(array.as_binary_opt::<i32>()),
            DataType::LargeBinary => return self.add_flat_bytes(array.as_binary_opt::<i64>()),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn add_flat_bytes<T: ByteArrayType>(
        &mut self,
        array: Option<&GenericByteArray<T>>,
    ) -> Result<bool> {
        let Some(array) = array else {
            return Ok(false);
        };
        self.add_node(array.len(), array.nulls())?;
        let width = std::mem::size_of::<T::Offset>();
        let (start, end) = self.add_offset_buffer(array.offsets().inner().inner(), width)?;
        let values = slice(array.values(), start, end - start)?;
        self.parts.push(Part::Bytes(values));
        Ok(true)
    }

    /// The field node and validity buffer that start every layout but null, union and
    /// run-end encoded, which IPC V5 gives no validity buffer.
    fn add_node(&mut self, len: usize, nulls: Option<&NullBuffer>) -> Result<()> {
        let null_count = nulls.map_or(0, NullBuffer::null_count);
        self.nodes
            .push(FieldNode::new(len as i64, null_count as i64));
        match nulls {
            Some(nulls) if null_count > 0 => {
                self.add_bits(nulls.buffer(), nulls.offset(), nulls.len())
            }
            _ => {
                self.parts.push(Part::Zeros(0));
                Ok(())
            }
        }
    }

    /// Plans one column (or a dictionary's values); `name` is the field named in errors.
    pub(crate) fn add(&mut self, data: &ArrayData, name: &str) -> Result<()> {
        let data_type = data.data_type();
        let (offset, len) = (data.offset(), data.len());
        match data_type {
            DataType::Null => self.nodes.push(FieldNode::new(len as i64, len as i64)),
            DataType::Union(..) | DataType::RunEndEncoded(..) => self
                .nodes
                .push(FieldNode::new(len as i64, data.null_count() as i64)),
            _ => self.add_node(len, data.nulls())?,
        }
        match data_type {
            DataType::Null => {}
            DataType::Boolean => self.add_bits(buffer(data, 0)?, offset, len)?,
            DataType::Utf8 | DataType::Binary => self.add_bytes(data, 4)?,
            DataType::LargeUtf8 | DataType::LargeBinary => self.add_bytes(data, 8)?,
            DataType::Utf8View | DataType::BinaryView => {
                self.add_fixed(data, 16)?;
                let data_buffers = data.buffers().get(1..).unwrap_or_default();
                self.parts
                    .extend(data_buffers.iter().cloned().map(Part::Bytes));
                self.variadic_counts.push(data_buffers.len() as i64);
            }
            DataType::List(field) | DataType::Map(field, _) => {
                let (start, end) = self.add_offsets(data, 4)?;
                self.add(&slice_child(data, start, end - start)?, field.name())?;
            }
            DataType::LargeList(field) => {
                let (start, end) = self.add_offsets(data, 8)?;
                self.add(&slice_child(data, start, end - start)?, field.name())?;
            }
            DataType::FixedSizeList(field, size) => {
                let size = usize::try_from(*size).unwrap_or_default();
                self.add(&slice_child(data, offset * size, len * size)?, field.name())?;
            }
            DataType::Struct(fields) => {
                // Struct children are sliced along with their parent.
                for (child, field) in data.child_data().iter().zip(fields.iter()) {
                    self.add(child, field.name())?;
                }
            }
            DataType::ListView(field) => self.add_list_view(data, 4, field.name())?,
            DataType::LargeListView(field) => self.add_list_view(data, 8, field.name())?,
            DataType::Union(fields, mode) => {
                self.add_fixed(data, 1)?;
                let dense = *mode == UnionMode::Dense;
                if dense {
                    self.add_fixed_at(data, 1, 4)?;
                }
                for (child, (_, field)) in data.child_data().iter().zip(fields.iter()) {
                    // Sparse children line up with the parent's rows; dense ones are
                    // addressed by the offsets and written whole, as arrow-ipc does.
                    let child = match dense {
                        true => child.clone(),
                        false => slice_array(child, offset, len)?,
                    };
                    self.add(&child, field.name())?;
                }
            }
            DataType::RunEndEncoded(_, values) => self.add_run_end_encoded(data, values.name())?,
            DataType::Dictionary(key, _) => {
                // Only the keys: the values travel in dictionary messages.
                self.add_fixed(data, key.primitive_width().unwrap_or_default())?
            }
            DataType::FixedSizeBinary(width) => {
                self.add_fixed(data, usize::try_from(*width).unwrap_or_default())?
            }
            other => match other.primitive_width() {
                Some(width) => self.add_fixed(data, width)?,
                None => return Err(unsupported(name, other)),
            },
        }
        Ok(())
    }

    fn add_bits(&mut self, source: &Buffer, offset: usize, len: usize) -> Result<()> {
        let needed = offset
            .checked_add(len)
            .map(|end| end.div_ceil(8))
            .filter(|&bytes| bytes <= source.len());
        if needed.is_none() {
            // The bytes that hold bits offset..offset + len.
            let (start, end) = (offset / 8, offset.saturating_add(len).div_ceil(8));
            return Err(too_short(source.len(), start, end - start));
        }
        self.parts.push(if offset.is_multiple_of(8) {
            Part::Bytes(slice(source, offset / 8, len.div_ceil(8))?)
        } else {
            Part::Bits {
                source: source.clone(),
                offset,
                len,
            }
        });
        Ok(())
    }

    /// Buffer `index` of a fixed-width layout, `width` bytes per row.
    fn add_fixed_at(&mut self, data: &ArrayData, index: usize, width: usize) -> Result<()> {
        let values = slice(
            buffer(data, index)?,
            data.offset() * width,
            data.len() * width,
        )?;
        self.parts.push(Part::Bytes(values));
        Ok(())
    }

    /// List view offsets and sizes for the slice, then the whole child: offsets may point
    /// anywhere in it, in any order (arrow-ipc writes it whole too).
    fn add_list_view(&mut self, data: &ArrayData, width: usize, name: &str) -> Result<()> {
        self.add_fixed(data, width)?;
        self.add_fixed_at(data, 1, width)?;
        self.add(child(data, 0)?, name)
    }

    /// The values of a fixed-width column, `width` bytes per row.
    fn add_fixed(&mut self, data: &ArrayData, width: usize) -> Result<()> {
        self.add_fixed_at(data, 0, width)
    }

    /// Offsets rebased to start at 0, then the value bytes they cover.
    fn add_bytes(&mut self, data: &ArrayData, width: usize) -> Result<()> {
        let (start, end) = self.add_offsets(data, width)?;
        let values = slice(buffer(data, 1)?, start, end - start)?;
        self.parts.push(Part::Bytes(values));
        Ok(())
    }

    /// Plans the offsets of `data` and returns the range of child positions they cover.
    fn add_offsets(&mut self, data: &ArrayData, width: usize) -> Result<(usize, usize)> {
        if data.is_empty() {
            // The spec wants N + 1 offsets, so an empty array still gets one 0 (its
            // offsets buffer may be empty).
            self.parts.push(Part::Zeros(width));
            return Ok((0, 0));
        }
        let source = slice(
            buffer(data, 0)?,
            data.offset() * width,
            (data.len() + 1) * width,
        )?;
        self.add_offset_buffer(&source, width)
    }

    /// Plans N + 1 offsets of `width` bytes, rebased to start at 0, and returns the range
    /// of child positions they cover.
    fn add_offset_buffer(&mut self, source: &Buffer, width: usize) -> Result<(usize, usize)> {
        if source.len() < width {
            return Err(too_short(source.len(), 0, width));
        }
        let first = read_int(&source[..width]);
        let last = read_int(&source[source.len() - width..]);
        let (Ok(start), Ok(end)) = (usize::try_from(first), usize::try_from(last)) else {
            return Err(QuiverError::Usage(format!(
                "offsets run from {first} to {last}; expected non-negative offsets"
            )));
        };
        if end < start {
            return Err(QuiverError::Usage(format!(
                "offsets run backwards, from {start} to {end}"
            )));
        }
        self.parts.push(if first == 0 {
            Part::Bytes(source.clone())
        } else {
            Part::Ints {
                source: source.clone(),
                width,
                base: first,
                max: i64::MAX,
            }
        });
        Ok((start, end))
    }

    /// Only the runs a sliced run-end encoded array covers, with run ends rebased to the
    /// slice and the last one cut at its length (arrow-ipc builds new arrays for this).
    fn add_run_end_encoded(&mut self, data: &ArrayData, values_name: &str) -> Result<()> {
        let ends = child(data, 0)?;
        let width = ends.data_type().primitive_width().unwrap_or(8);
        let ends_bytes = slice(buffer(ends, 0)?, ends.offset() * width, ends.len() * width)?;
        let end_at = |i: usize| read_int(&ends_bytes[i * width..(i + 1) * width]);
        let (offset, len) = (data.offset() as i64, data.len() as i64);
        let (first, count) = if len == 0 {
            (0, 0)
        } else {
            let first = partition_point(ends.len(), |i| end_at(i) <= offset);
            let last = partition_point(ends.len(), |i| end_at(i) < offset + len);
            if last >= ends.len() {
                return Err(QuiverError::Usage(format!(
                    "run ends stop before the array's end at {}",
                    offset + len
                )));
            }
            (first, last + 1 - first)
        };
        self.nodes.push(FieldNode::new(count as i64, 0));
        self.parts.push(Part::Zeros(0));
        self.parts.push(Part::Ints {
            source: slice(&ends_bytes, first * width, count * width)?,
            width,
            base: offset,
            max: len,
        });
        let values = child(data, 1)?;
        self.add(&slice_array(values, first, count)?, values_name)
    }
}

/// The first index in `0..n` where `before` turns false (`before` must be monotone).
fn partition_point(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

fn unsupported(name: &str, data_type: &DataType) -> QuiverError {
    QuiverError::Unsupported(format!(
        "field \"{name}\" has type {data_type}, which Quiver's writer cannot write yet"
    ))
}

/// Whether the writer can write `data_type`; names the first field it cannot.
pub(crate) fn check_type(name: &str, data_type: &DataType) -> Result<()> {
    match data_type {
        DataType::Dictionary(_, values) if matches!(**values, DataType::Dictionary(..)) => {
            Err(QuiverError::Unsupported(format!(
                "field \"{name}\" is a dictionary of dictionaries, which IPC cannot describe"
            )))
        }
        DataType::Dictionary(_, values) => check_type(name, values),
        DataType::Struct(fields) => fields
            .iter()
            .try_for_each(|f| check_type(f.name(), f.data_type())),
        DataType::Union(fields, _) => fields
            .iter()
            .try_for_each(|(_, f)| check_type(f.name(), f.data_type())),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => check_type(f.name(), f.data_type()),
        DataType::RunEndEncoded(ends, values) => {
            check_type(ends.name(), ends.data_type())?;
            check_type(values.name(), values.data_type())
        }
        _ => Ok(()),
    }
}

fn buffer(data: &ArrayData, index: usize) -> Result<&Buffer> {
    data.buffers().get(index).ok_or_else(|| {
        QuiverError::Usage(format!(
            "a {} array has {} buffers, expected at least {}",
            data.data_type(),
            data.buffers().len(),
            index + 1
        ))
    })
}

fn child(data: &ArrayData, index: usize) -> Result<&ArrayData> {
    data.child_data().get(index).ok_or_else(|| {
        QuiverError::Usage(format!(
            "a {} array has {} children, expected at least {}",
            data.data_type(),
            data.child_data().len(),
            index + 1
        ))
    })
}

fn slice_child(data: &ArrayData, start: usize, len: usize) -> Result<ArrayData> {
    slice_array(child(data, 0)?, start, len)
}

/// `ArrayData::slice`, which panics out of bounds, after a bounds check.
fn slice_array(data: &ArrayData, start: usize, len: usize) -> Result<ArrayData> {
    match start.checked_add(len) {
        Some(end) if end <= data.len() => Ok(data.slice(start, len)),
        _ => Err(QuiverError::Usage(format!(
            "a child {} array of {} rows is too short for rows {start}..{}",
            data.data_type(),
            data.len(),
            start.saturating_add(len)
        ))),
    }
}

/// `Buffer::slice_with_length`, which panics out of bounds, after a bounds check.
fn slice(source: &Buffer, start: usize, len: usize) -> Result<Buffer> {
    match start.checked_add(len) {
        Some(end) if end <= source.len() => Ok(source.slice_with_length(start, len)),
        _ => Err(too_short(source.len(), start, len)),
    }
}

fn too_short(has: usize, start: usize, len: usize) -> QuiverError {
    QuiverError::Usage(format!(
        "an array buffer of {has} bytes is too short for bytes {start}..{}",
        start.saturating_add(len)
    ))
}
