//! `fetchAll` scheduling: how many readers read at once and on which socket, which
//! endpoint each takes next, and what to cancel when one fails. Endpoints are read in
//! parallel (one after another when `ordered`), and their batches are joined in the
//! FlightInfo's order.

use arrow_schema::{FieldRef, SchemaRef};

use super::answers::schema_from_ipc;
use super::get::{ArrowBatch, Collected};
use super::status::{Failure, INVALID_ARGUMENT};

/// How `fetchAll` was asked to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchPlan {
    pub endpoints: usize,
    pub ordered: bool,
    /// Endpoints read at once; `None` for all of them.
    pub concurrency: Option<usize>,
    pub sockets: usize,
    /// Streams the gateway allows open at once on one socket.
    pub max_streams: usize,
}

impl FetchPlan {
    /// Readers to run: by default every endpoint at once, as far as the gateway's stream
    /// limit allows; one when `ordered`.
    pub fn readers(&self) -> usize {
        let n = self.endpoints;
        match self.ordered {
            true => 1,
            false => self
                .concurrency
                .unwrap_or(n)
                .min(self.max_streams.saturating_mul(self.sockets))
                .clamp(1, n.max(1)),
        }
    }

    /// Sockets to open in all (the client's own among them).
    pub fn sockets(&self) -> usize {
        self.sockets.min(self.readers())
    }

    /// The socket, of [`FetchPlan::sockets`], that reader `reader` reads on: readers are
    /// dealt over the sockets in turn. (Below [`FetchPlan::readers`], the remainder is
    /// the same by `sockets` as by [`FetchPlan::sockets`], the fewer.)
    pub fn socket_of(&self, reader: usize) -> usize {
        reader % self.sockets.max(1)
    }
}

/// The endpoints of one `fetchAll`: the next to take, the ones being read (each with
/// `H`, the handle of the stream reading it), and each one's batches.
#[derive(Debug)]
pub struct Fetch<H> {
    next: usize,
    failed: bool,
    reading: Vec<(usize, H)>,
    results: Vec<Vec<ArrowBatch>>,
    schema: Option<SchemaRef>,
}

impl<H> Fetch<H> {
    pub fn new(endpoints: usize) -> Self {
        Fetch {
            next: 0,
            failed: false,
            reading: Vec::new(),
            results: vec![Vec::new(); endpoints],
            schema: None,
        }
    }

    /// The next endpoint to read, or none once all are taken or one has failed.
    pub fn take(&mut self) -> Option<usize> {
        if self.failed || self.next >= self.results.len() {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(i)
    }

    /// Endpoint `i` is being read by the stream `handle` names.
    pub fn reading(&mut self, i: usize, handle: H) {
        self.reading.push((i, handle));
    }

    /// Endpoint `i`'s stream ended with `collected`. A failure fails the fetch, and so do
    /// columns unlike the first endpoint's; the error then holds the handles of the
    /// streams still reading the others, to cancel.
    pub fn record(&mut self, i: usize, collected: Collected) -> Result<(), (Failure, Vec<H>)> {
        match collected.and_then(|(schema, batches)| self.done(i, schema, batches)) {
            Ok(()) => Ok(()),
            Err(failure) => Err((failure, self.fail(i))),
        }
    }

    /// Endpoint `i` was read. Its columns must be the first endpoint's, or its batches
    /// would be read with another's types.
    fn done(
        &mut self,
        i: usize,
        schema: SchemaRef,
        batches: Vec<ArrowBatch>,
    ) -> Result<(), Failure> {
        self.reading.retain(|(r, _)| *r != i);
        match &self.schema {
            Some(first) if first.fields() != schema.fields() => Err(Failure::new(
                INVALID_ARGUMENT,
                format!(
                    "endpoint {i} has the columns ({}), another endpoint ({}): they \
                     cannot form one table",
                    columns(&schema),
                    columns(first)
                ),
            )),
            Some(_) => Ok(()),
            None => {
                self.schema = Some(schema);
                Ok(())
            }
        }?;
        if let Some(slot) = self.results.get_mut(i) {
            *slot = batches;
        }
        Ok(())
    }

    /// Endpoint `i` failed, and so does the fetch: returns the handles of the streams
    /// still reading the others, to cancel. Nothing more is taken.
    fn fail(&mut self, i: usize) -> Vec<H> {
        self.reading.retain(|(r, _)| *r != i);
        self.failed = true;
        self.reading.drain(..).map(|(_, h)| h).collect()
    }

    /// The table's schema and every batch, in endpoint order. The schema is the first
    /// endpoint's, or, when none was read (there were none), the FlightInfo's:
    /// `raw_schema`, an encapsulated IPC schema message.
    pub fn into_batches(self, raw_schema: &[u8]) -> Collected {
        let schema = match self.schema {
            Some(schema) => schema,
            None => schema_from_ipc(raw_schema)?,
        };
        Ok((schema, self.results.into_iter().flatten().collect()))
    }
}

/// `name: type` of each column, for errors.
fn columns(schema: &SchemaRef) -> String {
    let column = |f: &FieldRef| {
        let null = if f.is_nullable() { "" } else { " not null" };
        format!("{}: {}{null}", f.name(), f.data_type())
    };
    schema
        .fields()
        .iter()
        .map(column)
        .collect::<Vec<_>>()
        .join(", ")
}
