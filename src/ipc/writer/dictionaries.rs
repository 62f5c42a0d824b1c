//! Which dictionary messages a batch needs: new dictionaries, deltas where the new
//! values extend the ones sent (if deltas are wanted), and replacements otherwise.
//!
//! arrow-ipc's `DictionaryTracker` decides this too, but only while it records the batch
//! as written; sizing a write before making it needs the decision without the record.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{make_array, Array, ArrayRef};
use arrow_data::ArrayData;
use arrow_schema::DataType;

use crate::ipc::error::{QuiverError, Result};

/// One dictionary message to write.
pub(crate) struct Update {
    pub(crate) id: i64,
    /// What the message carries: all values, or only those added since the last message.
    pub(crate) values: ArrayData,
    pub(crate) is_delta: bool,
    /// All values, remembered once the write succeeds.
    full: ArrayData,
}

/// The dictionaries sent so far, by id.
pub(crate) struct Dictionaries {
    /// Sorted by id, found by binary search: a `HashMap` of its own linked a hash table's
    /// code for this one use (docs/size.md).
    sent: Vec<(i64, ArrayData)>,
    /// Whether a dictionary that extends the one sent is sent as a delta; if not, it is
    /// sent whole, as a replacement.
    deltas: bool,
}

impl Dictionaries {
    pub(crate) fn new(deltas: bool) -> Self {
        Dictionaries {
            sent: Vec::new(),
            deltas,
        }
    }

    /// Refuses an update of column `column` that replaces a dictionary already sent,
    /// which the IPC file format does not allow (each id has one dictionary, which only
    /// deltas extend).
    pub(crate) fn check_no_replacement(&self, updates: &[Update], column: &str) -> Result<()> {
        match updates
            .iter()
            .any(|u| !u.is_delta && self.sent(u.id).is_some())
        {
            true => Err(QuiverError::Usage(format!(
                "a dictionary in column {column:?} does not extend the one written before: \
                 an IPC file cannot replace a dictionary (write a stream instead)"
            ))),
            false => Ok(()),
        }
    }

    /// `updates` for a column of a batch. Only dictionary columns and columns with
    /// children can hold dictionaries; the others are not converted to `ArrayData`.
    pub(crate) fn column_updates(
        &self,
        column: &dyn Array,
        ids: &mut impl Iterator<Item = i64>,
        out: &mut Vec<Update>,
    ) -> Result<()> {
        let data_type = column.data_type();
        match matches!(data_type, DataType::Dictionary(..)) || has_children(data_type) {
            true => self.updates(&column.to_data(), ids, out),
            false => Ok(()),
        }
    }

    /// Adds the messages that `column` needs to `out`, in stream order. `ids` yields the
    /// dictionary ids in the order the schema assigned them: depth first, children before
    /// their parent, as arrow-ipc's schema encoder numbers them.
    pub(crate) fn updates(
        &self,
        column: &ArrayData,
        ids: &mut impl Iterator<Item = i64>,
        out: &mut Vec<Update>,
    ) -> Result<()> {
        let DataType::Dictionary(..) = column.data_type() else {
            return self.nested(column, ids, out);
        };
        let values = column
            .child_data()
            .first()
            .ok_or_else(|| QuiverError::Usage("a dictionary array has no values".into()))?;
        self.nested(values, ids, out)?;
        let id = ids.next().ok_or_else(|| {
            QuiverError::Internal(
                "the schema numbered fewer dictionaries than the batch has".into(),
            )
        })?;
        let update = |message: ArrayData, is_delta| Update {
            id,
            values: message,
            is_delta,
            full: values.clone(),
        };
        match self.sent(id) {
            None => out.push(update(values.clone(), false)),
            Some(old) if same_values(old, values) => {}
            Some(old)
                if self.deltas
                    && values.len() > old.len()
                    && same_values(&values.slice(0, old.len()), old) =>
            {
                out.push(update(
                    values.slice(old.len(), values.len() - old.len()),
                    true,
                ))
            }
            Some(_) => out.push(update(values.clone(), false)),
        }
        Ok(())
    }

    fn nested(
        &self,
        data: &ArrayData,
        ids: &mut impl Iterator<Item = i64>,
        out: &mut Vec<Update>,
    ) -> Result<()> {
        let children = match data.data_type() {
            // Run ends are never dictionary encoded; only the values may be.
            DataType::RunEndEncoded(..) => data.child_data().get(1..).unwrap_or_default(),
            data_type if has_children(data_type) => data.child_data(),
            _ => &[],
        };
        children
            .iter()
            .try_for_each(|child| self.updates(child, ids, out))
    }

    /// Records the messages of a successful write.
    pub(crate) fn commit(&mut self, updates: &mut Vec<Update>) {
        for update in updates.drain(..) {
            match self.sent.binary_search_by_key(&update.id, |(id, _)| *id) {
                Ok(i) => {
                    if let Some((_, sent)) = self.sent.get_mut(i) {
                        *sent = update.full;
                    }
                }
                Err(i) => self.sent.insert(i, (update.id, update.full)),
            }
        }
    }

    /// The dictionary sent with `id`, if any.
    fn sent(&self, id: i64) -> Option<&ArrayData> {
        let i = self.sent.binary_search_by_key(&id, |(id, _)| *id).ok()?;
        self.sent.get(i).map(|(_, sent)| sent)
    }
}

/// Whether arrays of `data_type` have child arrays.
fn has_children(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Struct(_)
            | DataType::Union(..)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::ListView(_)
            | DataType::LargeListView(_)
            | DataType::FixedSizeList(..)
            | DataType::Map(..)
            | DataType::RunEndEncoded(..)
    )
}

/// Whether `a` and `b` hold the same values, row by row as `ArrayData`'s `==` compares
/// them (slices, offsets and what lies under nulls do not matter), nested types included.
/// Unions and run-end encoded values count as the same only as the same data: a "no" only
/// sends values again. `==` linked 9 KiB of the package's brotli for this one use
/// (docs/size.md).
fn same_values(a: &ArrayData, b: &ArrayData) -> bool {
    ArrayData::ptr_eq(a, b) || same_arrays(&make_array(a.clone()), &make_array(b.clone()))
}

fn same_arrays(a: &ArrayRef, b: &ArrayRef) -> bool {
    if a.data_type() != b.data_type() || a.len() != b.len() {
        return false;
    }
    let (data_a, data_b) = (a.to_data(), b.to_data());
    (0..a.len()).all(|i| {
        a.is_valid(i) == b.is_valid(i) && (a.is_null(i) || same_row(a, &data_a, b, &data_b, i))
    })
}

/// Whether valid row `i` of `a` and of `b`, of one type, holds the same value.
fn same_row(a: &ArrayRef, data_a: &ArrayData, b: &ArrayRef, data_b: &ArrayData, i: usize) -> bool {
    match a.data_type() {
        DataType::List(_) => {
            same_arrays(&a.as_list::<i32>().value(i), &b.as_list::<i32>().value(i))
        }
        DataType::LargeList(_) => {
            same_arrays(&a.as_list::<i64>().value(i), &b.as_list::<i64>().value(i))
        }
        DataType::FixedSizeList(..) => same_arrays(
            &a.as_fixed_size_list().value(i),
            &b.as_fixed_size_list().value(i),
        ),
        DataType::Map(..) => same_arrays(
            &(Arc::new(a.as_map().value(i)) as ArrayRef),
            &(Arc::new(b.as_map().value(i)) as ArrayRef),
        ),
        DataType::Struct(_) => (a.as_struct().columns().iter())
            .zip(b.as_struct().columns())
            .all(|(x, y)| same_arrays(&x.slice(i, 1), &y.slice(i, 1))),
        DataType::Utf8View => a.as_string_view().value(i) == b.as_string_view().value(i),
        DataType::BinaryView => a.as_binary_view().value(i) == b.as_binary_view().value(i),
        _ => value(data_a, i).is_some_and(|v| Some(v) == value(data_b, i)),
    }
}

/// The bytes of value `i` of `data`, for the flat types; None for the others.
fn value(data: &ArrayData, i: usize) -> Option<&[u8]> {
    let i = data.offset() + i;
    let buffer = |k: usize| data.buffers().get(k).map(|b| b.as_slice());
    let fixed = |width: usize| buffer(0)?.get(i * width..(i + 1) * width);
    let offsets = |width: usize| {
        let offset = |k: usize| {
            let mut word = [0u8; 8];
            word[..width].copy_from_slice(buffer(0)?.get(k * width..(k + 1) * width)?);
            usize::try_from(i64::from_le_bytes(word)).ok()
        };
        buffer(1)?.get(offset(i)?..offset(i + 1)?)
    };
    match data.data_type() {
        DataType::Null => Some(&[]),
        DataType::Boolean => {
            let byte = buffer(0)?.get(i / 8)?;
            Some(if byte & (1 << (i % 8)) != 0 {
                &[1]
            } else {
                &[0]
            })
        }
        DataType::Utf8 | DataType::Binary => offsets(4),
        DataType::LargeUtf8 | DataType::LargeBinary => offsets(8),
        DataType::FixedSizeBinary(width) => fixed(usize::try_from(*width).ok()?),
        other => fixed(other.primitive_width()?),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::types::Int32Type;
    use arrow_array::{
        Array, ArrayRef, BooleanArray, Int32Array, ListArray, StringArray, StructArray,
    };
    use arrow_buffer::NullBuffer;
    use arrow_schema::{DataType, Field};

    use super::same_values;

    #[test]
    fn flat_values_compare_by_value_whatever_lies_under_their_nulls() {
        let strings = StringArray::from(vec![Some("a"), None, Some("bc")]).to_data();
        // The same strings sliced out of a longer array, at other offsets.
        let longer = StringArray::from(vec![Some("x"), Some("a"), None, Some("bc")]);
        assert!(same_values(&strings, &longer.to_data().slice(1, 3)));
        let other = StringArray::from(vec![Some("a"), None, Some("bd")]).to_data();
        assert!(!same_values(&strings, &other));
        let ints = Int32Array::from(vec![Some(1), None]).to_data();
        let under_null =
            Int32Array::new(vec![1, 7].into(), Some(NullBuffer::from(vec![true, false])));
        assert!(same_values(&ints, &under_null.to_data()));
        let valid = Int32Array::from(vec![Some(1), Some(0)]).to_data();
        assert!(!same_values(&ints, &valid));
        let bools = BooleanArray::from(vec![true, false, true]).to_data();
        let tail = BooleanArray::from(vec![false, true]).to_data();
        assert!(same_values(&bools.slice(1, 2), &tail));
        assert!(!same_values(&bools.slice(0, 2), &tail));
    }

    #[test]
    fn nested_values_compare_row_by_row() {
        let lists = |last| {
            ListArray::from_iter_primitive::<Int32Type, _, _>([
                Some(vec![Some(1), None]),
                None,
                Some(vec![Some(last)]),
            ])
        };
        // Equal values in arrays of their own, and as a slice at another offset.
        assert!(same_values(&lists(3).to_data(), &lists(3).to_data()));
        let last = ListArray::from_iter_primitive::<Int32Type, _, _>([Some(vec![Some(3)])]);
        assert!(same_values(
            &lists(3).to_data().slice(2, 1),
            &last.to_data()
        ));
        assert!(!same_values(&lists(3).to_data(), &lists(4).to_data()));
        assert!(same_values(
            &lists(3).to_data().slice(0, 2),
            &lists(4).to_data().slice(0, 2)
        ));

        let field = |name| Arc::new(Field::new(name, DataType::Int32, true));
        let structs = |hidden, shown| {
            StructArray::new(
                vec![field("a")].into(),
                vec![Arc::new(Int32Array::from(vec![hidden, shown])) as ArrayRef],
                Some(NullBuffer::from(vec![false, true])),
            )
        };
        // What lies under a null struct row does not matter; a field's value does.
        assert!(same_values(
            &structs(1, 2).to_data(),
            &structs(7, 2).to_data()
        ));
        assert!(!same_values(
            &structs(1, 2).to_data(),
            &structs(1, 3).to_data()
        ));
    }
}
