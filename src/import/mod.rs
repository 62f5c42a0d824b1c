//! Arrow arrays from buffers that JavaScript filled: the core of `fromArrowJS` and
//! `batchFromColumns`. Pure Rust, no wasm-bindgen.
//!
//! The flow for one batch: JS describes the schema ([`FieldSpec`]) and, per array node in
//! pre-order, its length, bit offset and buffer sizes; [`allocate`] makes one exactly-sized
//! buffer per size; JS copies each source buffer once into its destination; [`assemble`]
//! builds and fully validates the `ArrayData` (the input is untrusted).

mod assemble;
mod spec;

pub use assemble::{allocate, assemble, Filled, Node};
pub use spec::{schema_from_specs, FieldSpec, TypeSpec};
