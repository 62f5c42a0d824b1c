//! The type description JS sends (apache-arrow JS type objects, flattened to plain data)
//! and its arrow-rs `DataType`.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, IntervalUnit, Schema, SchemaRef, TimeUnit};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

use crate::fields::Fields;
use crate::ipc::{QuiverError, Result};

/// One field: an apache-arrow JS `Field`.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    pub name: String,
    pub nullable: bool,
    pub data_type: TypeSpec,
    pub metadata: HashMap<String, String>,
}

/// One type: the fields of an apache-arrow JS `DataType` that arrow-rs needs. `id` is
/// Arrow JS's `type.typeId` (the `Type` enum); `name` is `String(type)`, for errors.
#[derive(Debug, Clone)]
pub struct TypeSpec {
    pub id: i32,
    pub name: String,
    pub bit_width: Option<u32>,
    pub is_signed: Option<bool>,
    pub precision: Option<u32>,
    pub scale: Option<i32>,
    pub unit: Option<u32>,
    pub timezone: Option<String>,
    pub byte_width: Option<i32>,
    pub list_size: Option<i32>,
    pub keys_sorted: Option<bool>,
    /// A dictionary's: whether the order of its values means something.
    pub is_ordered: Option<bool>,
    pub children: Vec<FieldSpec>,
    pub indices: Option<Box<TypeSpec>>,
    pub dictionary: Option<Box<TypeSpec>>,
}

/// How deeply types may nest in a description, as Arrow C++ allows in IPC metadata.
/// Each level is read by a parse of its own, so serde_json's recursion limit does not
/// bound the depth: this does, before the stack could overflow.
pub const MAX_NESTING: usize = 64;

thread_local! {
    static NESTING: Cell<usize> = const { Cell::new(0) };
}

/// One level of type nesting while it is read; leaving it gives the level back.
struct Nested;

impl Nested {
    fn enter() -> std::result::Result<Nested, String> {
        NESTING.with(|depth| {
            if depth.get() >= MAX_NESTING {
                return Err(format!("types nest deeper than {MAX_NESTING} levels"));
            }
            depth.set(depth.get() + 1);
            Ok(Nested)
        })
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        NESTING.with(|depth| depth.set(depth.get() - 1));
    }
}

// Read field by field (`Fields`) rather than derived: serde's derive for these cost
// 4 KiB of the wasm package (docs/size.md).
impl<'de> Deserialize<'de> for FieldSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        Fields::deserialize(deserializer, "a field", |f| {
            Ok(FieldSpec {
                name: f.take("name")?,
                nullable: f.take("nullable")?,
                data_type: f.take("type")?,
                metadata: f.take_or_default("metadata")?,
            })
        })
    }
}

impl<'de> Deserialize<'de> for TypeSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let _level = Nested::enter().map_err(D::Error::custom)?;
        Fields::deserialize(deserializer, "a type", |f| {
            Ok(TypeSpec {
                id: f.take("id")?,
                name: f.take("name")?,
                bit_width: f.take_or_default("bitWidth")?,
                is_signed: f.take_or_default("isSigned")?,
                precision: f.take_or_default("precision")?,
                scale: f.take_or_default("scale")?,
                unit: f.take_or_default("unit")?,
                timezone: f.take_or_default("timezone")?,
                byte_width: f.take_or_default("byteWidth")?,
                list_size: f.take_or_default("listSize")?,
                keys_sorted: f.take_or_default("keysSorted")?,
                is_ordered: f.take_or_default("isOrdered")?,
                children: f.take_or_default("children")?,
                indices: f.take_or_default("indices")?,
                dictionary: f.take_or_default("dictionary")?,
            })
        })
    }
}

/// The arrow-rs schema of `fields`; errors name the field and the Arrow JS type.
pub fn schema_from_specs(
    fields: &[FieldSpec],
    metadata: HashMap<String, String>,
) -> Result<SchemaRef> {
    let fields = fields
        .iter()
        .map(|f| field(f).map_err(|e| in_field(&f.name, e)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(Schema::new_with_metadata(fields, metadata)))
}

fn in_field(name: &str, error: QuiverError) -> QuiverError {
    QuiverError::Unsupported(format!("field {name:?}: {}", unwrap_message(error)))
}

/// The message without the "unsupported: " prefix, so nested fields read as one path.
fn unwrap_message(error: QuiverError) -> String {
    match error {
        QuiverError::Unsupported(message) => message,
        other => other.to_string(),
    }
}

fn field(spec: &FieldSpec) -> Result<Field> {
    Ok(
        Field::new(&spec.name, data_type(&spec.data_type)?, spec.nullable)
            .with_metadata(spec.metadata.clone())
            .with_dict_is_ordered(spec.data_type.is_ordered.unwrap_or(false)),
    )
}

fn child(spec: &TypeSpec, index: usize) -> Result<Arc<Field>> {
    let child = spec.children.get(index).ok_or_else(|| {
        QuiverError::Unsupported(format!("type {} has no child {index}", spec.name))
    })?;
    field(child)
        .map(Arc::new)
        .map_err(|e| in_field(&child.name, e))
}

fn unsupported(spec: &TypeSpec) -> QuiverError {
    QuiverError::Unsupported(format!("type {} is not supported", spec.name))
}

/// A fixed-size type's size: arrow-rs panics on a negative one, so it is refused here.
fn fixed_size(spec: &TypeSpec, size: Option<i32>) -> Result<i32> {
    match size {
        Some(n) if n < 0 => Err(QuiverError::Usage(format!(
            "type {} declares size {n}, expected a non-negative size",
            spec.name
        ))),
        Some(n) => Ok(n),
        None => Err(unsupported(spec)),
    }
}

fn time_unit(spec: &TypeSpec) -> Result<TimeUnit> {
    // Arrow JS TimeUnit: SECOND = 0, MILLISECOND = 1, MICROSECOND = 2, NANOSECOND = 3.
    match spec.unit {
        Some(0) => Ok(TimeUnit::Second),
        Some(1) => Ok(TimeUnit::Millisecond),
        Some(2) => Ok(TimeUnit::Microsecond),
        Some(3) => Ok(TimeUnit::Nanosecond),
        _ => Err(unsupported(spec)),
    }
}

fn int_type(spec: &TypeSpec) -> Result<DataType> {
    Ok(match (spec.is_signed, spec.bit_width) {
        (Some(true), Some(8)) => DataType::Int8,
        (Some(true), Some(16)) => DataType::Int16,
        (Some(true), Some(32)) => DataType::Int32,
        (Some(true), Some(64)) => DataType::Int64,
        (Some(false), Some(8)) => DataType::UInt8,
        (Some(false), Some(16)) => DataType::UInt16,
        (Some(false), Some(32)) => DataType::UInt32,
        (Some(false), Some(64)) => DataType::UInt64,
        _ => return Err(unsupported(spec)),
    })
}

fn precision(spec: &TypeSpec) -> Result<u8> {
    spec.precision
        .and_then(|p| u8::try_from(p).ok())
        .ok_or_else(|| unsupported(spec))
}

fn scale(spec: &TypeSpec) -> Result<i8> {
    spec.scale
        .and_then(|s| i8::try_from(s).ok())
        .ok_or_else(|| unsupported(spec))
}

/// The arrow-rs type of an Arrow JS type; ids are Arrow JS's `Type` enum.
pub(crate) fn data_type(spec: &TypeSpec) -> Result<DataType> {
    Ok(match spec.id {
        1 => DataType::Null,
        2 => int_type(spec)?,
        3 => match spec.precision {
            // Arrow JS Precision: HALF = 0, SINGLE = 1, DOUBLE = 2.
            Some(0) => DataType::Float16,
            Some(1) => DataType::Float32,
            Some(2) => DataType::Float64,
            _ => return Err(unsupported(spec)),
        },
        4 => DataType::Binary,
        5 => DataType::Utf8,
        6 => DataType::Boolean,
        7 => {
            let (p, s) = (precision(spec)?, scale(spec)?);
            match spec.bit_width {
                Some(32) => DataType::Decimal32(p, s),
                Some(64) => DataType::Decimal64(p, s),
                Some(128) => DataType::Decimal128(p, s),
                Some(256) => DataType::Decimal256(p, s),
                _ => return Err(unsupported(spec)),
            }
        }
        // Arrow JS DateUnit: DAY = 0, MILLISECOND = 1.
        8 => match spec.unit {
            Some(0) => DataType::Date32,
            Some(1) => DataType::Date64,
            _ => return Err(unsupported(spec)),
        },
        // The unit decides the width; an Arrow JS Time that says otherwise is refused,
        // not read at the wrong width.
        9 => match (time_unit(spec)?, spec.bit_width) {
            (unit @ (TimeUnit::Second | TimeUnit::Millisecond), Some(32)) => DataType::Time32(unit),
            (unit @ (TimeUnit::Microsecond | TimeUnit::Nanosecond), Some(64)) => {
                DataType::Time64(unit)
            }
            _ => return Err(unsupported(spec)),
        },
        10 => DataType::Timestamp(time_unit(spec)?, spec.timezone.as_deref().map(Arc::from)),
        // Arrow JS IntervalUnit: YEAR_MONTH = 0, DAY_TIME = 1, MONTH_DAY_NANO = 2.
        11 => match spec.unit {
            Some(0) => DataType::Interval(IntervalUnit::YearMonth),
            Some(1) => DataType::Interval(IntervalUnit::DayTime),
            Some(2) => DataType::Interval(IntervalUnit::MonthDayNano),
            _ => return Err(unsupported(spec)),
        },
        12 => DataType::List(child(spec, 0)?),
        13 => DataType::Struct(
            (0..spec.children.len())
                .map(|i| child(spec, i))
                .collect::<Result<Vec<_>>>()?
                .into(),
        ),
        15 => DataType::FixedSizeBinary(fixed_size(spec, spec.byte_width)?),
        16 => DataType::FixedSizeList(child(spec, 0)?, fixed_size(spec, spec.list_size)?),
        17 => DataType::Map(child(spec, 0)?, spec.keys_sorted.unwrap_or(false)),
        18 => DataType::Duration(time_unit(spec)?),
        19 => DataType::LargeBinary,
        20 => DataType::LargeUtf8,
        21 => DataType::LargeList(child(spec, 0)?),
        -1 => {
            let (Some(indices), Some(values)) = (&spec.indices, &spec.dictionary) else {
                return Err(unsupported(spec));
            };
            DataType::Dictionary(Box::new(int_type(indices)?), Box::new(data_type(values)?))
        }
        _ => return Err(unsupported(spec)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_fixed_sizes_are_refused() {
        for (id, size) in [(15, "byteWidth"), (16, "listSize")] {
            let json = format!(
                r#"[{{"name":"f","nullable":true,"type":{{"id":{id},"name":"T","{size}":-1,
                "children":[{{"name":"item","nullable":true,"type":{{"id":2,"name":"Int8",
                "bitWidth":8,"isSigned":true}}}}]}}}}]"#
            );
            let fields: Vec<FieldSpec> = serde_json::from_str(&json).unwrap();
            let error = schema_from_specs(&fields, HashMap::new()).unwrap_err();
            assert_eq!(
                error.to_string(),
                "unsupported: field \"f\": type T declares size -1, expected a non-negative size"
            );
        }
    }

    /// `depth` types: lists of lists of int8.
    fn nested_json(depth: usize) -> String {
        let mut json = r#"{"id":2,"name":"Int8","bitWidth":8,"isSigned":true}"#.to_owned();
        for _ in 1..depth {
            json = format!(
                r#"{{"id":12,"name":"List","children":[{{"name":"item","nullable":true,"type":{json},"metadata":{{}}}}]}}"#
            );
        }
        format!(r#"[{{"name":"f","nullable":true,"type":{json},"metadata":{{}}}}]"#)
    }

    #[test]
    fn nesting_is_bounded() {
        let fields: Vec<FieldSpec> = serde_json::from_str(&nested_json(MAX_NESTING)).unwrap();
        let schema = schema_from_specs(&fields, HashMap::new()).unwrap();
        assert!(matches!(schema.field(0).data_type(), DataType::List(_)));
        let error = serde_json::from_str::<Vec<FieldSpec>>(&nested_json(MAX_NESTING + 1))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("types nest deeper than 64 levels at line 1"),
            "{error}"
        );
    }
}
