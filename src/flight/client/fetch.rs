//! `fetchAll` scheduling: which endpoint each reader takes next, how many read at once,
//! and what to cancel when one fails. Endpoints are read in parallel (one after another
//! when `ordered`), and their batches are joined in the FlightInfo's order.

use arrow_schema::{FieldRef, SchemaRef};

use super::get::ArrowBatch;
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

    /// Endpoint `i` was read. Its columns must be the first endpoint's, or its batches
    /// would be read with another's types.
    pub fn done(
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
    pub fn fail(&mut self, i: usize) -> Vec<H> {
        self.reading.retain(|(r, _)| *r != i);
        self.failed = true;
        self.reading.drain(..).map(|(_, h)| h).collect()
    }

    /// The first endpoint's schema (if any endpoint was read), and every batch in
    /// endpoint order.
    pub fn into_batches(self) -> (Option<SchemaRef>, Vec<ArrowBatch>) {
        (self.schema, self.results.into_iter().flatten().collect())
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
