//! The reader builds batches of flat columns itself (src/ipc/reader/flat.rs) rather than
//! through arrow-ipc's decoder: every type it takes that way decodes to what arrow-rs
//! wrote, with nulls, slices, time zones and empty batches, also next to columns that
//! arrow-ipc decodes. Under `wasm-pack test` this runs as wasm, where the string checks take
//! their SIMD path.

use std::sync::Arc;

use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::{i256, Buffer, NullBuffer};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{Field, Schema};
use quiver::ipc::{ReadLimits, StreamDecoder};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// One column of every flat type, each with a null.
fn flat_columns() -> Vec<(&'static str, ArrayRef)> {
    fn p<T: ArrowPrimitiveType>(values: [T::Native; 3]) -> ArrayRef {
        let [a, _, c] = values;
        Arc::new(PrimitiveArray::<T>::from_iter([Some(a), None, Some(c)]))
    }
    vec![
        (
            "bool",
            Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
        ),
        ("i8", p::<Int8Type>([-1, 0, 7])),
        ("i16", p::<Int16Type>([-300, 0, 7])),
        ("i32", p::<Int32Type>([-70000, 0, 7])),
        ("i64", p::<Int64Type>([-1 << 40, 0, 7])),
        ("u8", p::<UInt8Type>([255, 0, 7])),
        ("u16", p::<UInt16Type>([65535, 0, 7])),
        ("u32", p::<UInt32Type>([u32::MAX, 0, 7])),
        ("u64", p::<UInt64Type>([u64::MAX, 0, 7])),
        (
            "f16",
            // 1.5, -, -1.0 as IEEE half floats.
            Arc::new(Float16Array::new(
                Buffer::from_slice_ref([0x3e00u16, 0, 0xbc00]).into(),
                Some(NullBuffer::from(vec![true, false, true])),
            )),
        ),
        ("f32", p::<Float32Type>([1.5, 0.0, -2.25])),
        ("f64", p::<Float64Type>([1.5, 0.0, f64::MIN_POSITIVE])),
        ("date32", p::<Date32Type>([19000, 0, -1])),
        ("date64", p::<Date64Type>([1 << 41, 0, -86_400_000])),
        ("time32s", p::<Time32SecondType>([3600, 0, 86399])),
        ("time32ms", p::<Time32MillisecondType>([3_600_000, 0, 1])),
        (
            "time64us",
            p::<Time64MicrosecondType>([1, 0, 86_399_999_999]),
        ),
        (
            "time64ns",
            p::<Time64NanosecondType>([1, 0, 86_399_999_999_999]),
        ),
        ("ts_s", p::<TimestampSecondType>([1, 0, -1])),
        (
            "ts_ms_tz",
            Arc::new(
                TimestampMillisecondArray::from(vec![Some(1), None, Some(-1)])
                    .with_timezone("Europe/Paris"),
            ),
        ),
        ("ts_us", p::<TimestampMicrosecondType>([1, 0, -1])),
        (
            "ts_ns_tz",
            Arc::new(
                TimestampNanosecondArray::from(vec![Some(1), None, Some(-1)])
                    .with_timezone("+05:30"),
            ),
        ),
        ("dur_s", p::<DurationSecondType>([1, 0, -1])),
        ("dur_ms", p::<DurationMillisecondType>([1, 0, -1])),
        ("dur_us", p::<DurationMicrosecondType>([1, 0, -1])),
        ("dur_ns", p::<DurationNanosecondType>([1, 0, -1])),
        (
            "utf8",
            Arc::new(StringArray::from(vec![Some("é€"), None, Some("")])),
        ),
        (
            "large_utf8",
            Arc::new(LargeStringArray::from(vec![Some("a"), None, Some("😀")])),
        ),
        (
            "binary",
            Arc::new(BinaryArray::from(vec![Some(&b"\xff"[..]), None, Some(b"")])),
        ),
        (
            "large_binary",
            Arc::new(LargeBinaryArray::from(vec![Some(&b"ab"[..]), None, None])),
        ),
    ]
}

fn batch_of(columns: Vec<(&'static str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
        .collect();
    let arrays = columns.into_iter().map(|(_, array)| array).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

fn write(batches: &[RecordBatch]) -> Vec<u8> {
    let mut writer = StreamWriter::try_new(Vec::new(), &batches[0].schema()).unwrap();
    batches.iter().for_each(|b| writer.write(b).unwrap());
    writer.finish().unwrap();
    writer.into_inner().unwrap()
}

fn read(bytes: &[u8]) -> Result<Vec<RecordBatch>, quiver::ipc::QuiverError> {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.push(bytes)?;
    decoder.finish()?;
    Ok(std::iter::from_fn(|| decoder.next_batch()).collect())
}

#[test]
fn every_flat_type_reads_back_as_written() -> TestResult {
    let batch = batch_of(flat_columns());
    // Sliced: arrow-rs writes a slice's values from its offset, so offsets start above 0.
    let batches = [batch.clone(), batch.slice(1, 2), batch.slice(3, 0)];
    assert_eq!(read(&write(&batches))?, batches);
    Ok(())
}

#[test]
fn flat_and_other_columns_read_together() -> TestResult {
    let mut columns = flat_columns();
    let decimal = Decimal256Array::from(vec![Some(i256::from(5)), None, Some(i256::MINUS_ONE)]);
    columns.push((
        "decimal",
        Arc::new(decimal.with_precision_and_scale(40, 2)?),
    ));
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
        Some(vec![Some(1), None]),
        None,
        Some(vec![]),
    ]);
    columns.push(("list", Arc::new(list)));
    let batch = batch_of(columns);
    assert_eq!(read(&write(std::slice::from_ref(&batch)))?, vec![batch]);
    Ok(())
}
