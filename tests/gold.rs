//! Every gold `.stream` file of apache/arrow-testing decodes to the data its `.json.gz`
//! describes, however the bytes are split into segments.

use std::io::Read;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_data::ArrayData;
use arrow_integration_test::ArrowJson;
use arrow_schema::DataType;
use quiver::ipc::{ReadLimits, StreamDecoder};

/// Files Quiver refuses, each with the error it must give (listed in the README's limits).
const REFUSED: &[(&str, &str)] = &[(
    "1.0.0-bigendian/",
    "unsupported: big-endian stream: Quiver reads little-endian IPC only",
)];

fn gold_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arrow-testing/integration")
}

fn gold_streams() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for folder in std::fs::read_dir(gold_dir()).expect("gold folder exists") {
        for file in std::fs::read_dir(folder.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "stream") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 90, "found only {} gold streams", files.len());
    files
}

fn name(path: &Path) -> String {
    let folder = path
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy();
    format!("{folder}/{}", path.file_name().unwrap().to_string_lossy())
}

fn expected(path: &Path) -> ArrowJson {
    let gz = std::fs::File::open(path.with_extension("json.gz")).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Pushes `bytes` in segments of the given sizes (cycled) and returns the batches.
fn decode(bytes: &[u8], sizes: &mut dyn FnMut() -> usize) -> Result<Vec<RecordBatch>, String> {
    let mut decoder = StreamDecoder::new(ReadLimits::default());
    let mut batches = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (segment, tail) = rest.split_at(sizes().clamp(1, rest.len()));
        decoder.push(segment).map_err(|e| e.to_string())?;
        batches.extend(std::iter::from_fn(|| decoder.next_batch()));
        rest = tail;
    }
    decoder.finish().map_err(|e| e.to_string())?;
    let stats = decoder.stats();
    assert_eq!(stats.bytes_pushed, bytes.len() as u64);
    Ok(batches)
}

fn assert_matches(path: &Path, batches: &[RecordBatch], json: &ArrowJson) {
    let want = json.get_record_batches().expect("gold JSON converts");
    assert_eq!(batches.len(), want.len(), "{}: batch count", name(path));
    for (i, (got, want)) in batches.iter().zip(&want).enumerate() {
        assert_eq!(got.num_columns(), want.num_columns(), "{}", name(path));
        // Custom metadata is kept, on the schema and on each field.
        assert_eq!(
            got.schema().metadata(),
            want.schema().metadata(),
            "{}",
            name(path)
        );
        for (g, w) in got.schema().fields().iter().zip(want.schema().fields()) {
            assert_eq!(
                g.metadata(),
                w.metadata(),
                "{} field {}",
                name(path),
                w.name()
            );
        }
        for (c, field) in want.schema().fields().iter().enumerate() {
            let (got_type, want_type) =
                (got.schema().field(c).data_type().clone(), field.data_type());
            // The C++ writer of these files canonicalizes map entry names that the JSON keeps
            // (generated_map_non_canonical), so nested names are compared loosely.
            assert!(
                got_type.equals_datatype(want_type),
                "{} batch {i} column {}: {got_type} != {want_type}",
                name(path),
                field.name()
            );
            let want_data = relabel(want.column(c).to_data(), &got_type);
            // Compared without Debug output: a whole buffer dump hides the file name.
            assert!(
                got.column(c).to_data() == want_data,
                "{} batch {i} column {} differs",
                name(path),
                field.name()
            );
        }
    }
}

/// `data` with the nested field names of `ty` (same layout, other names).
fn relabel(data: ArrayData, ty: &DataType) -> ArrayData {
    let child_types: Vec<DataType> = match ty {
        DataType::Map(f, _) | DataType::List(f) | DataType::LargeList(f) => {
            vec![f.data_type().clone()]
        }
        DataType::Struct(fields) => fields.iter().map(|f| f.data_type().clone()).collect(),
        _ => return data.into_builder().data_type(ty.clone()).build().unwrap(),
    };
    let children = data
        .child_data()
        .iter()
        .zip(&child_types)
        .map(|(child, t)| relabel(child.clone(), t))
        .collect();
    data.into_builder()
        .data_type(ty.clone())
        .child_data(children)
        .build()
        .unwrap()
}

/// Yields the size of each next segment.
type SegmentSizes = Box<dyn FnMut() -> usize>;

/// A small deterministic generator, so failures reproduce.
fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    }
}

#[test]
fn gold_files_decode_to_their_json() {
    let mut checked = 0;
    for path in gold_streams() {
        let bytes = std::fs::read(&path).unwrap();
        let refused = REFUSED
            .iter()
            .find(|(prefix, _)| name(&path).starts_with(prefix));
        let mut rng = lcg(bytes.len() as u64);
        let splits: [(&str, SegmentSizes); 3] = [
            ("whole", Box::new(|| usize::MAX)),
            ("byte by byte", Box::new(|| 1)),
            ("random", Box::new(move || (rng() % 700) as usize + 1)),
        ];
        for (how, mut sizes) in splits {
            let result = decode(&bytes, &mut *sizes);
            match (refused, result) {
                (None, Ok(batches)) => assert_matches(&path, &batches, &expected(&path)),
                (None, Err(e)) => panic!("{} ({how}) failed: {e}", name(&path)),
                (Some((_, want)), Err(e)) => assert_eq!(&e, want, "{}", name(&path)),
                (Some(_), Ok(_)) => panic!("{} is listed as refused but decodes", name(&path)),
            }
        }
        checked += 1;
    }
    println!("checked {checked} gold streams");
}
