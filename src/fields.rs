//! A JSON object read one named field at a time: the Flight control messages the client
//! parses, and the schema description `fromArrowJS` sends.
//!
//! serde's derive for an internally tagged enum (`#[serde(tag = "type")]`) buffers the
//! whole object into its `Content` tree before it can look at the tag, and instantiates
//! that buffering for each variant: parsing `ServerMessage` that way was 16 KiB of the
//! wasm package (brotli), reading it here 7 (docs/size.md). serde_json parses the object
//! once, keeping each value as raw JSON text ([`RawValue`]); each field is deserialized
//! when the message's reader takes it, by the `Deserialize` of its own type.

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Error;

/// The fields of one JSON object not taken yet, and the names taken so far.
pub struct Fields<'a> {
    entries: Vec<(String, &'a RawValue)>,
    taken: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    /// Parses `text`, which must be one JSON object with no key twice.
    pub fn parse(text: &'a str) -> Result<Self, Error> {
        serde_json::from_str(text).map(Self::new)
    }

    /// For the `Deserialize` of a type read field by field: `read` takes the fields of
    /// the object `deserializer` holds, and any it leaves is an error naming `what`.
    /// Only serde_json's deserializers can hand out the raw text of each value.
    pub fn deserialize<D: Deserializer<'a>, T>(
        deserializer: D,
        what: &str,
        read: impl FnOnce(&mut Fields<'a>) -> Result<T, Error>,
    ) -> Result<T, D::Error> {
        let mut fields = Object::deserialize(deserializer).map(Self::new)?;
        let value = read(&mut fields).map_err(D::Error::custom)?;
        fields.finish(what).map_err(D::Error::custom)?;
        Ok(value)
    }

    fn new(Object(entries): Object<'a>) -> Self {
        Fields {
            entries,
            taken: Vec::new(),
        }
    }

    /// Field `name`, which must be present.
    pub fn take<T: Deserialize<'a>>(&mut self, name: &'static str) -> Result<T, Error> {
        match self.remove(name) {
            Some(raw) => value(name, raw),
            None => Err(Error::missing_field(name)),
        }
    }

    /// Field `name`, or `T::default()` when it is absent.
    pub fn take_or_default<T: Deserialize<'a> + Default>(
        &mut self,
        name: &'static str,
    ) -> Result<T, Error> {
        self.remove(name)
            .map_or_else(|| Ok(T::default()), |raw| value(name, raw))
    }

    /// Checks that every field was taken. `what` names the object in the error.
    pub fn finish(self, what: &str) -> Result<(), Error> {
        let Some((key, _)) = self.entries.first() else {
            return Ok(());
        };
        Err(Error::custom(format_args!(
            "unknown field `{key}`: {what} has only `{}`",
            self.taken.join("`, `")
        )))
    }

    fn remove(&mut self, name: &'static str) -> Option<&'a RawValue> {
        self.taken.push(name);
        let i = self.entries.iter().position(|(key, _)| key == name)?;
        Some(self.entries.swap_remove(i).1)
    }
}

/// Deserializes field `name` from its raw text.
fn value<'a, T: Deserialize<'a>>(name: &str, raw: &'a RawValue) -> Result<T, Error> {
    serde_json::from_str(raw.get()).map_err(|e| in_field(name, e))
}

/// An error in field `name`'s value, naming the field instead of a position, which would
/// count from the start of the value, not of the message.
fn in_field(name: &str, error: Error) -> Error {
    let text = error.to_string();
    let at = format!(" at line {} column {}", error.line(), error.column());
    let reason = text.strip_suffix(&at).unwrap_or(&text);
    Error::custom(format_args!("field `{name}`: {reason}"))
}

/// A JSON object's entries in order, each value as its raw text.
struct Object<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Object<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor)
    }
}

struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Object<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Object<'de>, M::Error> {
        let mut entries: Vec<(String, &RawValue)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, &RawValue>()? {
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(M::Error::custom(format_args!("duplicate field `{key}`")));
            }
            entries.push((key, value));
        }
        Ok(Object(entries))
    }
}
