//! Which dictionary messages a batch needs: new dictionaries, deltas where the new
//! values extend the ones sent (if deltas are wanted), and replacements otherwise.
//!
//! arrow-ipc's `DictionaryTracker` decides this too, but only while it records the batch
//! as written; sizing a write before making it needs the decision without the record.

use arrow_array::Array;
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

    /// Refuses an update that replaces a dictionary already sent, which the IPC file
    /// format does not allow (each id has one dictionary, which only deltas extend).
    pub(crate) fn check_no_replacement(&self, updates: &[Update]) -> Result<()> {
        match updates
            .iter()
            .find(|u| !u.is_delta && self.sent(u.id).is_some())
        {
            Some(update) => Err(QuiverError::Usage(format!(
                "dictionary {} of this batch does not extend the one written before: an IPC \
                 file cannot replace a dictionary (write a stream instead)",
                update.id
            ))),
            None => Ok(()),
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
            Some(old) if ArrayData::ptr_eq(old, values) || old == values => {}
            Some(old)
                if self.deltas
                    && values.len() > old.len()
                    && values.slice(0, old.len()) == *old =>
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
