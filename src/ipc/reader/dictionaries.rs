//! The dictionaries a stream has sent so far, and what they hold. A reader keeps them
//! for the whole stream, out of the caller's sight, and delta batches make them grow
//! without end: `maxDictionaryBytes` bounds them, so that a hostile stream gets an error
//! rather than exhausting wasm memory.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{make_array, ArrayRef};
use arrow_buffer::Buffer;
use arrow_data::transform::MutableArrayData;
use arrow_ipc::MetadataVersion;
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::repair::BodyLimit;
use super::{data_bytes, read_batch};
use crate::ipc::error::{QuiverError, Result};

/// The fields of a dictionary batch besides its data.
#[derive(Clone, Copy)]
pub(super) struct DictionaryHeader {
    pub id: i64,
    pub is_delta: bool,
}

/// Each dictionary's values by id, and the bytes of their buffers together.
#[derive(Default)]
pub(super) struct Dictionaries {
    values: HashMap<i64, ArrayRef>,
    bytes: u64,
}

impl Dictionaries {
    /// The values by id, as arrow-ipc reads record batches against them.
    pub fn by_id(&self) -> &HashMap<i64, ArrayRef> {
        &self.values
    }

    /// The bytes of every dictionary's buffers.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The first field of `schema` (nested ones too) whose dictionary has not been sent,
    /// with its id. arrow-ipc reads such a dictionary as empty, which the spec allows for
    /// a column of nulls, so a key into it fails with a bounds error that names neither.
    pub fn missing(&self, schema: &Schema) -> Option<(String, i64)> {
        schema.flattened_fields().into_iter().find_map(|field| {
            #[allow(deprecated)]
            let id = field.dict_id()?;
            let missing = matches!(field.data_type(), DataType::Dictionary(..))
                && !self.values.contains_key(&id);
            missing.then(|| (field.name().clone(), id))
        })
    }

    /// Decodes a dictionary batch, its header and its (uncompressed) data, replacing the
    /// values of its id or, for a delta, appending to them. The dictionaries may hold at
    /// most `max_bytes` afterwards; a delta is refused before its values are appended. A
    /// body with padded buffers after it (`repair.rs`) may hold at most `max_body` bytes.
    /// Returns the bytes copied on the way (realigned buffers, a padded body, and the
    /// appended values).
    ///
    /// This replaces `arrow_ipc::reader::read_dictionary`, which appends deltas with
    /// `arrow_select::concat`. That links all of arrow-select (concat, and through it the
    /// dictionary merging and `interleave` for every type): about 370 KB of the
    /// unoptimised wasm. `MutableArrayData`, which arrow-ipc links anyway, appends the
    /// same values.
    pub fn read(
        &mut self,
        body: &Buffer,
        header: DictionaryHeader,
        data: arrow_ipc::RecordBatch<'_>,
        schema: &SchemaRef,
        version: MetadataVersion,
        (max_bytes, max_body): (u64, BodyLimit),
    ) -> Result<u64> {
        let id = header.id;
        // arrow-ipc finds the dictionary's field the same way.
        #[allow(deprecated)]
        let field = schema.fields_with_dict_id(id).first().copied();
        let Some(DataType::Dictionary(_, value_type)) = field.map(|f| f.data_type()) else {
            return Err(QuiverError::invalid(format!(
                "dictionary id {id} not found in schema"
            )));
        };
        let values_field = Field::new("dictionary values", value_type.as_ref().clone(), true);
        let values_schema = Arc::new(Schema::new(vec![values_field]));
        let (values, mut copied) =
            read_batch(body, data, &values_schema, &self.values, version, max_body)?;
        let values = values.column(0).to_data();
        let existing = self.values.get(&id).map(|v| v.to_data());
        let replaced = existing.as_ref().map_or(0, data_bytes);
        let others = self.bytes - replaced;
        let values = if header.is_delta {
            let existing = existing.ok_or_else(|| {
                QuiverError::invalid(format!(
                    "delta dictionary batch for id {id}, which has no dictionary yet"
                ))
            })?;
            // The appended values hold about what the two parts hold apart.
            let expected = others + replaced + data_bytes(&values);
            check(expected, max_bytes)?;
            let appended = append(id, &existing, &values)?;
            // Appending copies the dictionary so far and the delta into new buffers.
            copied += data_bytes(&appended);
            appended
        } else {
            values
        };
        let total = others + data_bytes(&values);
        check(total, max_bytes)?;
        self.values.insert(id, make_array(values));
        self.bytes = total;
        Ok(copied)
    }
}

fn check(total: u64, max_bytes: u64) -> Result<()> {
    if total > max_bytes {
        return Err(QuiverError::LimitExceeded {
            what: "dictionaries held by the reader",
            limit: "maxDictionaryBytes",
            found: total,
            max: max_bytes,
        });
    }
    Ok(())
}

/// `existing` followed by `delta`, in new buffers.
fn append(
    id: i64,
    existing: &arrow_data::ArrayData,
    delta: &arrow_data::ArrayData,
) -> Result<arrow_data::ArrayData> {
    // The fallible forms: nested dictionaries whose merged values overflow their key
    // type, or offsets that overflow, are errors, not panics.
    let cannot = |e: arrow_schema::ArrowError| {
        QuiverError::invalid(format!(
            "delta dictionary batch for id {id} cannot be appended: {e}"
        ))
    };
    let len = existing.len() + delta.len();
    let mut appended =
        MutableArrayData::try_new(vec![existing, delta], false, len).map_err(cannot)?;
    appended.try_extend(0, 0, existing.len()).map_err(cannot)?;
    appended.try_extend(1, 0, delta.len()).map_err(cannot)?;
    Ok(appended.freeze())
}
