//! Test data shared by the writer's native tests.

use std::sync::Arc;

use arrow_array::builder::{StringDictionaryBuilder, StringRunBuilder};
use arrow_array::types::{Int16Type, Int32Type};
use arrow_array::{
    ArrayRef, Decimal128Array, FixedSizeListArray, Int32Array, Int64Array, LargeStringArray,
    ListArray, RecordBatch, StringArray, StringViewArray, StructArray,
};
use arrow_schema::{DataType, Field};

/// Batches covering nested, dictionary, view, decimal and run-end encoded columns.
pub fn nested_batches() -> Vec<RecordBatch> {
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>(
        (0..20).map(|i| (i % 4 != 1).then(|| (0..i % 5).map(Some).collect::<Vec<_>>())),
    );
    let strings = StringArray::from_iter((0..20).map(|i| (i % 3 != 0).then(|| format!("s{i}"))));
    let fixed = FixedSizeListArray::new(
        Arc::new(Field::new_list_field(DataType::Int64, true)),
        2,
        Arc::new(Int64Array::from_iter_values(0..40)),
        None,
    );
    let structs = StructArray::from(vec![
        (
            Arc::new(Field::new("a", DataType::Int32, true)),
            Arc::new(Int32Array::from_iter(
                (0..20).map(|i| (i % 2 == 0).then_some(i)),
            )) as ArrayRef,
        ),
        (
            Arc::new(Field::new("b", DataType::LargeUtf8, true)),
            Arc::new(LargeStringArray::from_iter_values(
                (0..20).map(|i| "y".repeat(i % 4)),
            )) as ArrayRef,
        ),
    ]);
    let views = StringViewArray::from_iter(
        (0..20)
            .map(|i| (i % 5 != 0).then(|| format!("a string long enough to be out of line {i}"))),
    );
    let decimals = Decimal128Array::from_iter((0..20).map(|i| (i % 6 != 0).then_some(i * 1000)))
        .with_precision_and_scale(12, 3)
        .unwrap();
    let mut runs = StringRunBuilder::<Int16Type>::new();
    for i in 0..20 {
        runs.append_option((i % 7 != 3).then(|| format!("run{}", i / 4)));
    }
    let runs = runs.finish();

    let mut batches = Vec::new();
    let mut dictionary = StringDictionaryBuilder::<Int32Type>::new();
    for round in 0..3 {
        for i in 0..20 {
            dictionary.append_option((i % 4 != 2).then(|| format!("d{}", i + round * 7)));
        }
        // Keeping the values makes each batch's dictionary extend the last: a delta.
        let dictionary = dictionary.finish_preserve_values();
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("list", Arc::new(list.clone())),
            ("strings", Arc::new(strings.clone())),
            ("fixed", Arc::new(fixed.clone())),
            ("struct", Arc::new(structs.clone())),
            ("views", Arc::new(views.clone())),
            ("decimals", Arc::new(decimals.clone())),
            ("runs", Arc::new(runs.clone())),
            ("dictionary", Arc::new(dictionary)),
        ];
        batches.push(RecordBatch::try_from_iter(columns).unwrap());
    }
    batches
}
