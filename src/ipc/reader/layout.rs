//! A record batch's metadata held apart, so that it can be changed and built again, and
//! where each field's node and buffers lie in it, as a tree. The repairs (`repair.rs`)
//! use these to find a child's bitmap or a union's type ids, and to build the metadata of
//! one column alone. They run only when a batch needs a repair, so they may allocate.

use std::ops::Range;

use arrow_ipc::FieldNode;
use arrow_schema::{DataType, Field, UnionMode};
use flatbuffers::FlatBufferBuilder;

use super::precheck::child_fields;

/// The nodes, buffers and variadic buffer counts of a record batch.
pub(super) struct Parts {
    pub nodes: Vec<FieldNode>,
    pub buffers: Vec<arrow_ipc::Buffer>,
    pub variadic: Vec<i64>,
}

impl Parts {
    pub fn of(batch: arrow_ipc::RecordBatch<'_>) -> Self {
        Parts {
            nodes: batch.nodes().into_iter().flatten().copied().collect(),
            buffers: batch.buffers().into_iter().flatten().copied().collect(),
            variadic: batch.variadicBufferCounts().into_iter().flatten().collect(),
        }
    }

    /// A record batch of `length` rows made of `span`'s nodes, buffers and counts.
    pub fn build(&self, length: i64, span: &Span) -> Rebuilt {
        let mut fbb = FlatBufferBuilder::new();
        let nodes = fbb.create_vector(&self.nodes[span.nodes.clone()]);
        let buffers = fbb.create_vector(&self.buffers[span.buffers.clone()]);
        let variadic = fbb.create_vector(&self.variadic[span.variadic.clone()]);
        let args = arrow_ipc::RecordBatchArgs {
            length,
            nodes: Some(nodes),
            buffers: Some(buffers),
            compression: None,
            variadicBufferCounts: Some(variadic),
        };
        let root = arrow_ipc::RecordBatch::create(&mut fbb, &args);
        fbb.finish(root, None);
        Rebuilt(fbb)
    }

    /// All of it.
    pub fn whole(&self) -> Span {
        Span {
            nodes: 0..self.nodes.len(),
            buffers: 0..self.buffers.len(),
            variadic: 0..self.variadic.len(),
        }
    }
}

/// Record batch metadata built by [`Parts::build`].
pub(super) struct Rebuilt(FlatBufferBuilder<'static>);

impl Rebuilt {
    pub fn batch(&self) -> arrow_ipc::RecordBatch<'_> {
        // SAFETY: `Parts::build` finished these bytes with a `RecordBatch` root in a
        // flatbuffer builder; what the builder writes needs no verification.
        unsafe { flatbuffers::root_unchecked::<arrow_ipc::RecordBatch>(self.0.finished_data()) }
    }
}

/// Ranges of a batch's nodes, buffers and variadic buffer counts.
#[derive(Clone)]
pub(super) struct Span {
    pub nodes: Range<usize>,
    pub buffers: Range<usize>,
    pub variadic: Range<usize>,
}

/// One field's place in a batch.
pub(super) struct Layout<'f> {
    pub field: &'f Field,
    /// Its node's index, and the node's length.
    pub node: usize,
    pub len: usize,
    /// Its own buffers (a validity bitmap first, for the types that have one).
    pub own: Range<usize>,
    /// What it and its descendants take.
    pub span: Span,
    pub children: Vec<Layout<'f>>,
}

/// The buffer slots that a metadata version gives unions and run-end encoded columns.
#[derive(Clone, Copy)]
pub(super) struct Slots {
    /// V4 unions have a validity buffer slot, which arrow-ipc skips.
    pub union_validity: bool,
    /// V4 writers also give run-end encoded columns one, which arrow-ipc does not expect.
    pub run_end_validity: bool,
}

/// Lays `fields` over `parts` in the order arrow-ipc reads them; `None` if the metadata
/// runs out (arrow-ipc reports that).
pub(super) fn layout<'f>(
    fields: &[&'f Field],
    parts: &Parts,
    slots: Slots,
) -> Option<Vec<Layout<'f>>> {
    let mut walk = Walk {
        parts,
        slots,
        node: 0,
        buffer: 0,
        variadic: 0,
    };
    fields.iter().map(|f| walk.field(f)).collect()
}

/// Every layout of the tree, parents before their children.
pub(super) fn flatten<'a, 'f>(layouts: &'a [Layout<'f>]) -> Vec<&'a Layout<'f>> {
    let mut all = Vec::new();
    for layout in layouts {
        all.push(layout);
        all.extend(flatten(&layout.children));
    }
    all
}

/// The next node, buffer and variadic count to take.
struct Walk<'p> {
    parts: &'p Parts,
    slots: Slots,
    node: usize,
    buffer: usize,
    variadic: usize,
}

impl Walk<'_> {
    fn field<'f>(&mut self, field: &'f Field) -> Option<Layout<'f>> {
        use DataType::*;
        let (node, first, variadic) = (self.node, self.buffer, self.variadic);
        let len = usize::try_from(self.parts.nodes.get(node)?.length()).ok()?;
        self.node += 1;
        let own = match field.data_type() {
            Null => 0,
            Utf8 | Binary | LargeUtf8 | LargeBinary => 3,
            Utf8View | BinaryView => {
                let count = *self.parts.variadic.get(variadic)?;
                self.variadic += 1;
                usize::try_from(count).ok()?.checked_add(2)?
            }
            List(_) | LargeList(_) | Map(..) => 2,
            ListView(_) | LargeListView(_) => 3,
            FixedSizeList(..) | Struct(_) => 1,
            Union(_, mode) => {
                usize::from(self.slots.union_validity) + 1 + usize::from(*mode == UnionMode::Dense)
            }
            RunEndEncoded(..) => usize::from(self.slots.run_end_validity),
            _ => 2,
        };
        let end = first
            .checked_add(own)
            .filter(|end| *end <= self.parts.buffers.len())?;
        self.buffer = end;
        let mut children = Vec::new();
        for child in child_fields(field.data_type()) {
            children.push(self.field(child)?);
        }
        Some(Layout {
            field,
            node,
            len,
            own: first..end,
            span: Span {
                nodes: node..self.node,
                buffers: first..self.buffer,
                variadic: variadic..self.variadic,
            },
            children,
        })
    }
}
