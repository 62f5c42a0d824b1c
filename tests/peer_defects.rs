//! Streams that real producers write with a defect that other readers accept
//! (tests/data/peers: an apache-arrow JS sparse union with short children, a flechette
//! fixed-size list with a null list, pyarrow's V4 run-end encoded columns) read as those
//! readers read them; hostile variants of each are refused with the field and the rule.
//! The repairs are in src/ipc/reader/repair.rs.

use std::path::Path;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, DictionaryArray, FixedSizeListArray, Int32Array, Int8Array, RecordBatch,
    StringArray, StructArray, UnionArray,
};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_ipc::writer::StreamWriter;
use arrow_ipc::FieldNode;
use arrow_schema::{DataType, Field, UnionFields};
use flatbuffers::FlatBufferBuilder;
use quiver::ipc::{ReadLimits, ReadStats, StreamDecoder};

fn peer_stream(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/peers")
        .join(name);
    std::fs::read(path).unwrap()
}

fn decode(bytes: &[u8]) -> Result<(Vec<RecordBatch>, ReadStats), String> {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.push(bytes).map_err(|e| e.to_string())?;
    decoder.finish().map_err(|e| e.to_string())?;
    let batches = std::iter::from_fn(|| decoder.next_batch()).collect();
    Ok((batches, *decoder.stats()))
}

/// Each row of the column as arrow-cast displays it (a null as "null").
fn rows(batch: &RecordBatch, column: &str) -> Vec<String> {
    let array = batch.column_by_name(column).unwrap();
    let options = FormatOptions::default().with_null("null");
    let formatter = ArrayFormatter::try_new(array.as_ref(), &options).unwrap();
    (0..array.len())
        .map(|row| formatter.value(row).to_string())
        .collect()
}

fn only_batch(bytes: &[u8]) -> (RecordBatch, ReadStats) {
    let (batches, stats) = decode(bytes).unwrap();
    assert_eq!(batches.len(), 1);
    (batches.into_iter().next().unwrap(), stats)
}

/// The stream with its first record batch's nodes, buffers and body changed by `change`.
fn with_batch_changed(
    bytes: &[u8],
    change: impl FnOnce(&mut Vec<FieldNode>, &mut Vec<arrow_ipc::Buffer>, &mut [u8]),
) -> Vec<u8> {
    with_changed(bytes, false, change)
}

/// The same, of the first dictionary batch (`dictionary`) or record batch.
fn with_changed(
    bytes: &[u8],
    dictionary: bool,
    change: impl FnOnce(&mut Vec<FieldNode>, &mut Vec<arrow_ipc::Buffer>, &mut [u8]),
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut change = Some(change);
    while at < bytes.len() {
        let len = i32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        if len == 0 {
            out.extend_from_slice(&bytes[at..at + 8]);
            break;
        }
        let metadata = &bytes[at + 8..at + 8 + len];
        let message = arrow_ipc::root_as_message(metadata).unwrap();
        let body_len = message.bodyLength() as usize;
        let whole = &bytes[at..at + 8 + len + body_len];
        at += whole.len();
        let dictionary_batch = message.header_as_dictionary_batch();
        let batch = match dictionary {
            true => dictionary_batch.and_then(|d| d.data()),
            false => message.header_as_record_batch(),
        };
        let (Some(batch), Some(change)) = (batch, change.take_if(|_| batch.is_some())) else {
            out.extend_from_slice(whole);
            continue;
        };
        let mut body = whole[8 + len..].to_vec();
        let mut nodes: Vec<FieldNode> = batch.nodes().unwrap().iter().copied().collect();
        let mut buffers: Vec<arrow_ipc::Buffer> =
            batch.buffers().unwrap().iter().copied().collect();
        change(&mut nodes, &mut buffers, &mut body);
        let mut fbb = FlatBufferBuilder::new();
        let nodes = fbb.create_vector(&nodes);
        let buffers = fbb.create_vector(&buffers);
        let args = arrow_ipc::RecordBatchArgs {
            length: batch.length(),
            nodes: Some(nodes),
            buffers: Some(buffers),
            ..Default::default()
        };
        let data = arrow_ipc::RecordBatch::create(&mut fbb, &args);
        let (header_type, header) = match dictionary_batch {
            Some(d) => {
                let args = arrow_ipc::DictionaryBatchArgs {
                    id: d.id(),
                    data: Some(data),
                    isDelta: d.isDelta(),
                };
                let header = arrow_ipc::DictionaryBatch::create(&mut fbb, &args);
                (
                    arrow_ipc::MessageHeader::DictionaryBatch,
                    header.as_union_value(),
                )
            }
            None => (arrow_ipc::MessageHeader::RecordBatch, data.as_union_value()),
        };
        let args = arrow_ipc::MessageArgs {
            version: message.version(),
            header_type,
            header: Some(header),
            bodyLength: body.len() as i64,
            custom_metadata: None,
        };
        let root = arrow_ipc::Message::create(&mut fbb, &args);
        fbb.finish(root, None);
        let mut metadata = fbb.finished_data().to_vec();
        metadata.resize(metadata.len().div_ceil(8) * 8, 0);
        out.extend_from_slice(&(-1i32).to_le_bytes());
        out.extend_from_slice(&(metadata.len() as i32).to_le_bytes());
        out.extend_from_slice(&metadata);
        out.extend_from_slice(&body);
    }
    out
}

#[test]
fn arrow_js_sparse_unions_with_short_children_read_as_arrow_js_reads_them() {
    let bytes = peer_stream("arrowjs_sparse_union.arrows");
    let (batch, stats) = only_batch(&bytes);
    assert_eq!(
        rows(&batch, "u"),
        ["{s=a}", "{i=1}", "{s=bb}", "{i=2}", "{i=3}"]
    );
    // The body is copied, followed by the short child "s" padded: a byte of bitmap (in 8)
    // and 6 offsets of 4 bytes.
    assert_eq!(
        stats.bytes_copied - stats.bytes_pushed,
        ARROW_JS_UNION_BODY + 8 + 24
    );
}

/// The body length of the Arrow JS union's record batch, as its message declares it.
const ARROW_JS_UNION_BODY: u64 = 240;

/// The Arrow JS union's nodes and buffers: "u" (its type ids), "i" (bitmap, values), "s"
/// (bitmap, offsets, data).
const ARROW_JS_S: usize = 2;
const ARROW_JS_S_OFFSETS: usize = 4;

#[test]
fn a_union_row_beyond_its_child_is_refused() {
    // Child "s" holds rows 0..3, and row 2 selects it: cut it to 2 rows.
    let bytes = with_batch_changed(
        &peer_stream("arrowjs_sparse_union.arrows"),
        |nodes, _, _| {
            assert_eq!(nodes[ARROW_JS_S].length(), 3);
            nodes[ARROW_JS_S] = FieldNode::new(2, 0);
        },
    );
    assert_eq!(
        decode(&bytes).unwrap_err(),
        "invalid Arrow IPC: field \"s\" of sparse union \"u\" has 2 rows, expected from 3 \
         (the rows up to the last that selects it) to 5 (the union's)"
    );
}

#[test]
fn a_union_child_longer_than_the_union_is_refused() {
    let bytes = with_batch_changed(
        &peer_stream("arrowjs_sparse_union.arrows"),
        |nodes, _, _| nodes[ARROW_JS_S] = FieldNode::new(6, 0),
    );
    assert_eq!(
        decode(&bytes).unwrap_err(),
        "invalid Arrow IPC: field \"s\" of sparse union \"u\" has 6 rows, expected from 3 \
         (the rows up to the last that selects it) to 5 (the union's)"
    );
}

#[test]
fn a_short_union_child_whose_buffers_are_short_of_its_length_is_refused() {
    let bytes = with_batch_changed(
        &peer_stream("arrowjs_sparse_union.arrows"),
        |_, buffers, _| {
            // 4 offsets for 3 strings, of which 2 remain.
            let offsets = buffers[ARROW_JS_S_OFFSETS];
            assert_eq!(offsets.length(), 16);
            buffers[ARROW_JS_S_OFFSETS] = arrow_ipc::Buffer::new(offsets.offset(), 8);
        },
    );
    assert_eq!(
        decode(&bytes).unwrap_err(),
        "invalid Arrow IPC: buffer 4 of field \"s\" has 8 bytes, expected a multiple of 1 of \
         at least 16"
    );
}

#[test]
fn flechette_fixed_size_lists_with_null_lists_read_as_flechette_reads_them() {
    let bytes = peer_stream("flechette_fixed_size_list.arrows");
    let (batch, stats) = only_batch(&bytes);
    assert_eq!(
        rows(&batch, "f"),
        ["[1.0, 2.0, 3.0]", "null", "[4.0, null, 6.0]"]
    );
    assert_eq!(
        rows(&batch, "g"),
        ["[[1, 2], [3, 4]]", "null", "[[5, null], null]"]
    );
    // The null counts are rewritten in the metadata; no data is copied.
    assert_eq!(stats.bytes_copied, stats.bytes_pushed);
}

/// The flechette stream's nodes: f, its values, g, its lists, their values.
const FLECHETTE_VALUES: usize = 1;

#[test]
fn a_fixed_size_list_child_bitmap_too_short_is_refused() {
    let bytes = peer_stream("flechette_fixed_size_list.arrows");
    let bytes = with_batch_changed(&bytes, |nodes, buffers, _| {
        assert_eq!(nodes[FLECHETTE_VALUES].null_count(), 1);
        // Buffers: f's bitmap, then its values' bitmap (8 bytes, 2 needed for 9 values).
        assert_eq!(buffers[1].length(), 8);
        buffers[1] = arrow_ipc::Buffer::new(buffers[1].offset(), 1);
    });
    assert_eq!(
        decode(&bytes).unwrap_err(),
        "invalid Arrow IPC: field \"\" (the values of fixed-size list \"f\") has a \
         validity bitmap of 1 bytes for 9 values, expected at least 2"
    );
}

#[test]
fn a_fixed_size_list_child_with_uncounted_nulls_in_valid_lists_is_refused() {
    let bytes = peer_stream("flechette_fixed_size_list.arrows");
    let bytes = with_batch_changed(&bytes, |_, buffers, body| {
        // Every value null: 9 in the bitmap, 1 declared, and 3 values in the null list.
        let bitmap = buffers[1].offset() as usize;
        body[bitmap..bitmap + 2].fill(0);
    });
    assert_eq!(
        decode(&bytes).unwrap_err(),
        "invalid Arrow IPC: field \"\" (the values of fixed-size list \"f\") declares 1 \
         nulls and its bitmap holds 9, expected at most 3 more (its values outside the \
         list's 2 valid lists)"
    );
}

#[test]
fn pyarrow_v4_run_end_encoded_columns_read_as_pyarrow_reads_them() {
    let bytes = peer_stream("pyarrow_v4_run_end.arrows");
    let (batch, stats) = only_batch(&bytes);
    let expected = ["a", "a", "null", "null", "null", "c"];
    assert_eq!(rows(&batch, "r"), expected);
    assert_eq!(
        rows(&batch, "s"),
        expected.map(|v| format!("{{inner: {v}}}"))
    );
    assert_eq!(rows(&batch, "n"), ["1", "2", "3", "null", "5", "6"]);
    assert_eq!(stats.bytes_copied, stats.bytes_pushed);
}

#[test]
fn a_v4_run_end_validity_slot_that_is_not_empty_is_refused() {
    let bytes = with_batch_changed(
        &peer_stream("pyarrow_v4_run_end.arrows"),
        |_, buffers, _| {
            // "r"'s node comes first, and its slot is buffer 0.
            assert_eq!(buffers[0].length(), 0);
            buffers[0] = arrow_ipc::Buffer::new(buffers[0].offset(), 8);
        },
    );
    assert_eq!(
        decode(&bytes).unwrap_err(),
        "invalid Arrow IPC: buffer 0 of field \"r\", the validity slot that V4 metadata \
         puts before a run-end encoded column's children, has 8 bytes, expected 0"
    );
}

fn stream_of(column: ArrayRef) -> Vec<u8> {
    let batch = RecordBatch::try_from_iter([("c", column)]).unwrap();
    let mut writer = StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(&batch).unwrap();
    writer.into_inner().unwrap()
}

#[test]
fn dictionary_values_are_repaired_the_same_way() {
    let lists = [
        Some(vec![Some(1), Some(2)]),
        None,
        Some(vec![Some(3), None]),
    ];
    let values = FixedSizeListArray::from_iter_primitive::<Int32Type, _, _>(lists, 2);
    let keys = Int8Array::from(vec![2, 0, 1]);
    let column = DictionaryArray::try_new(keys, Arc::new(values)).unwrap();
    // The dictionary batch's nodes: the lists, their values. flechette counts only the
    // null value of a valid list.
    let bytes = with_changed(&stream_of(Arc::new(column)), true, |nodes, _, _| {
        assert_eq!((nodes[1].length(), nodes[1].null_count()), (6, 3));
        nodes[1] = FieldNode::new(6, 1);
    });
    let (batch, _) = only_batch(&bytes);
    assert_eq!(rows(&batch, "c"), ["[3, null]", "[1, 2]", "null"]);
}

/// A sparse union of 3 rows selecting "s", "i", "s": number child "i" can end at row 1.
fn union_values() -> UnionArray {
    let fields = UnionFields::try_new(
        [0, 1],
        [
            Field::new("i", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
        ],
    )
    .unwrap();
    let children: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![None, Some(7), None])),
        Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
    ];
    UnionArray::try_new(fields, vec![1, 0, 1].into(), None, children).unwrap()
}

/// Cuts union child "i", node `node` of the batch, to the rows up to the last that
/// selects it, as apache-arrow JS does.
fn cut_number_child(
    node: usize,
) -> impl FnOnce(&mut Vec<FieldNode>, &mut Vec<arrow_ipc::Buffer>, &mut [u8]) {
    move |nodes, _, _| {
        assert_eq!((nodes[node].length(), nodes[node].null_count()), (3, 2));
        nodes[node] = FieldNode::new(2, 1);
    }
}

#[test]
fn short_union_children_in_dictionary_values_are_padded() {
    let keys = Int8Array::from(vec![2, 0, 1, 1]);
    let column = DictionaryArray::try_new(keys, Arc::new(union_values())).unwrap();
    // The dictionary batch's nodes: the union, "i", "s".
    let bytes = with_changed(&stream_of(Arc::new(column)), true, cut_number_child(1));
    let (batch, _) = only_batch(&bytes);
    assert_eq!(rows(&batch, "c"), ["{s=c}", "{s=a}", "{i=7}", "{i=7}"]);
}

#[test]
fn short_union_children_in_structs_are_padded() {
    let union: ArrayRef = Arc::new(union_values());
    let field = Arc::new(Field::new("u", union.data_type().clone(), true));
    let column = StructArray::from(vec![(field, union)]);
    // The nodes: the struct, the union, "i", "s".
    let bytes = with_batch_changed(&stream_of(Arc::new(column)), cut_number_child(2));
    let (batch, _) = only_batch(&bytes);
    assert_eq!(
        rows(&batch, "c"),
        ["{u: {s=a}}", "{u: {i=7}}", "{u: {s=c}}"]
    );
}

#[test]
fn a_short_struct_child_of_a_union_is_padded_with_its_fields() {
    // Rows select "t", "n", "t", "n": struct child "t" can end at row 2.
    let t = StructArray::from(vec![(
        Arc::new(Field::new("x", DataType::Utf8, true)),
        Arc::new(StringArray::from(vec![Some("a"), None, Some("b"), None])) as ArrayRef,
    )]);
    let fields = UnionFields::try_new(
        [0, 1],
        [
            Field::new("t", t.data_type().clone(), true),
            Field::new("n", DataType::Int32, true),
        ],
    )
    .unwrap();
    let children: Vec<ArrayRef> = vec![
        Arc::new(t),
        Arc::new(Int32Array::from(vec![None, Some(1), None, Some(2)])),
    ];
    let union = UnionArray::try_new(fields, vec![0, 1, 0, 1].into(), None, children).unwrap();
    // The nodes: the union, "t", "x", "n".
    let bytes = with_batch_changed(&stream_of(Arc::new(union)), |nodes, _, _| {
        assert_eq!((nodes[1].length(), nodes[2].length()), (4, 4));
        nodes[1] = FieldNode::new(3, 0);
        nodes[2] = FieldNode::new(3, 1);
    });
    let (batch, _) = only_batch(&bytes);
    assert_eq!(
        rows(&batch, "c"),
        ["{t={x: a}}", "{n=1}", "{t={x: b}}", "{n=2}"]
    );
}

#[test]
fn a_union_in_a_short_union_child_is_refused() {
    let inner: ArrayRef = Arc::new(union_values());
    let fields = UnionFields::try_new(
        [0, 1],
        [
            Field::new("v", inner.data_type().clone(), true),
            Field::new("n", DataType::Int32, true),
        ],
    )
    .unwrap();
    let children: Vec<ArrayRef> =
        vec![inner, Arc::new(Int32Array::from(vec![None, None, Some(1)]))];
    let union = UnionArray::try_new(fields, vec![0, 0, 1].into(), None, children).unwrap();
    // The nodes: the union, "v", its "i" and "s", then "n".
    let bytes = with_batch_changed(&stream_of(Arc::new(union)), |nodes, _, _| {
        nodes[1] = FieldNode::new(2, 0);
    });
    assert_eq!(
        decode(&bytes).unwrap_err(),
        "invalid Arrow IPC: field \"v\" is a union or run-end encoded field in a short \
         sparse union child, expected other types there"
    );
}

#[test]
fn a_padded_body_is_held_to_max_decompressed_bytes() {
    let limits = ReadLimits {
        max_decompressed_bytes: ARROW_JS_UNION_BODY + 8 + 23,
        ..ReadLimits::default()
    };
    let mut decoder = StreamDecoder::new(limits);
    let error = decoder.push(&peer_stream("arrowjs_sparse_union.arrows"));
    assert_eq!(
        error.unwrap_err().to_string(),
        format!(
            "body padded for a sparse union's short children of {} bytes exceeds \
             maxDecompressedBytes = {} bytes",
            ARROW_JS_UNION_BODY + 8 + 24,
            ARROW_JS_UNION_BODY + 8 + 23
        )
    );
}

/// The messages of a stream, each with its prefix and body; the end-of-stream marker last.
fn messages(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len = i32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        let metadata = &bytes[at + 8..at + 8 + len];
        let body = match len {
            0 => 0,
            _ => arrow_ipc::root_as_message(metadata).unwrap().bodyLength() as usize,
        };
        out.push(&bytes[at..at + 8 + len + body]);
        at += 8 + len + body;
    }
    out
}

#[test]
fn padded_bodies_of_one_push_share_its_budget() {
    let bytes = peer_stream("arrowjs_sparse_union.arrows");
    let [schema, batch, end] = messages(&bytes)[..] else {
        panic!("expected a schema, a batch and the end-of-stream marker");
    };
    let twice = [schema, batch, batch, end].concat();
    let padded = ARROW_JS_UNION_BODY + 8 + 24;
    // Room for one padded body: the second is refused, with the budget named, at its
    // first padded buffer (the body, then a byte of bitmap).
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.set_push_budget(Some(padded + 100));
    assert_eq!(
        decoder.push(&twice).unwrap_err().to_string(),
        format!(
            "body padded for a sparse union's short children of {} bytes exceeds the \
             memory the reader may still use = 100 bytes",
            ARROW_JS_UNION_BODY + 1
        )
    );
    // Room for both.
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    decoder.set_push_budget(Some(2 * padded));
    decoder.push(&twice).unwrap();
    assert_eq!(std::iter::from_fn(|| decoder.next_batch()).count(), 2);
}
