//! The demo's generated data: batches of `id: int64, value: float64, label: utf8` whose
//! ids run on across batches and parts, so that each part's rows are distinct.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_ipc::CompressionType;
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};

/// What a demo ticket asks to generate: part `part` of `batches` batches of `rows` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub rows: usize,
    pub batches: usize,
    pub compression: Option<CompressionType>,
    pub part: u64,
}

impl Generated {
    /// Batch `i` of this part, the same on every call.
    pub fn batch(&self, i: usize) -> Result<RecordBatch, ArrowError> {
        let start = (self.part * (self.rows * self.batches) as u64 + (i * self.rows) as u64) as i64;
        let ids = start..start + self.rows as i64;
        const LABELS: [&str; 4] = ["alpha", "beta", "gamma", "delta"];
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(ids.clone())),
            Arc::new(Float64Array::from_iter_values(
                ids.clone().map(|id| (id % 1000) as f64 * 0.25),
            )),
            Arc::new(StringArray::from_iter_values(
                ids.map(|id| LABELS[(id % 4) as usize]),
            )),
        ];
        RecordBatch::try_new(schema(), columns)
    }
}

/// The schema of generated data.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("value", DataType::Float64, false),
        Field::new("label", DataType::Utf8, false),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_do_not_overlap() {
        let g = Generated {
            rows: 4,
            batches: 2,
            compression: None,
            part: 1,
        };
        let b = g.batch(1).unwrap();
        let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(ids.values(), &[12, 13, 14, 15]);
    }
}
