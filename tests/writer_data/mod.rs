//! Test data shared by the writer's native tests.

use std::sync::Arc;

use arrow_array::builder::{StringDictionaryBuilder, StringRunBuilder};
use arrow_array::types::{Int16Type, Int32Type};
use arrow_array::{
    ArrayRef, Decimal128Array, FixedSizeListArray, Int32Array, Int64Array, LargeStringArray,
    ListArray, ListViewArray, RecordBatch, StringArray, StringViewArray, StructArray, UnionArray,
};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, UnionFields, UnionMode};

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

    // Views may point anywhere in their values, in any order, and overlap.
    let list_view = ListViewArray::new(
        Arc::new(Field::new_list_field(DataType::Int64, true)),
        ScalarBuffer::from_iter((0..20).map(|i| (i * 7) % 9)),
        ScalarBuffer::from_iter((0..20).map(|i| i % 3)),
        Arc::new(Int64Array::from_iter_values(100..111)),
        Some(NullBuffer::from_iter((0..20).map(|i| i % 6 != 5))),
    );

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
            ("sparse_union", Arc::new(union(UnionMode::Sparse))),
            ("dense_union", Arc::new(union(UnionMode::Dense))),
            ("list_view", Arc::new(list_view.clone())),
        ];
        batches.push(RecordBatch::try_from_iter(columns).unwrap());
    }
    batches
}

/// 20 rows alternating between an int32 and a utf8 child.
fn union(mode: UnionMode) -> UnionArray {
    let fields = UnionFields::try_new(
        vec![0, 1],
        vec![
            Field::new("int", DataType::Int32, true),
            Field::new("str", DataType::Utf8, true),
        ],
    )
    .unwrap();
    let type_ids = ScalarBuffer::from_iter((0..20).map(|i| (i % 2) as i8));
    let (offsets, rows) = match mode {
        UnionMode::Sparse => (None, 20),
        UnionMode::Dense => (Some(ScalarBuffer::from_iter((0..20).map(|i| i / 2))), 10),
    };
    let children: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter(
            (0..rows).map(|i| (i % 4 != 0).then_some(i)),
        )),
        Arc::new(StringArray::from_iter_values(
            (0..rows).map(|i| format!("u{i}")),
        )),
    ];
    UnionArray::try_new(fields, type_ids, offsets, children).unwrap()
}
