//! `fetchAll`: every endpoint of a FlightInfo into one `Table`, endpoints in parallel
//! (one after another when `ordered`), optionally spread over several sockets. Endpoint
//! locations are passed to the gateway, which dials them itself (if it allows them).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use arrow_schema::SchemaRef;
use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::super::batch::table_with_metadata;
use super::conn::{Conn, ConnRef};
use super::error::{Failure, INVALID_ARGUMENT};
use super::get::{ArrowBatch, GetState};
use super::info::{schema_from_ipc, Target};
use super::open::open_get;
use super::options::Fetch;

/// Shared by the workers: the next endpoint to take, each endpoint's batches, and the
/// streams still open, to cancel them when one fails.
struct Work {
    endpoints: Vec<Target>,
    next: Cell<usize>,
    failed: Cell<bool>,
    results: RefCell<Vec<Vec<ArrowBatch>>>,
    schema: RefCell<Option<SchemaRef>>,
    open: RefCell<Vec<Rc<RefCell<GetState>>>>,
}

pub(super) async fn fetch_all(
    conn: ConnRef,
    endpoints: Vec<Target>,
    raw_schema: Vec<u8>,
    options: Fetch,
) -> Result<JsValue, JsValue> {
    let n = endpoints.len();
    let (params, max_streams) = {
        let c = conn.borrow();
        (c.params.clone(), c.limits.max_streams as usize)
    };
    let sockets = usize::try_from(options.connections).unwrap_or(1);
    // By default every endpoint at once, as far as the gateway's stream limit allows.
    let workers = match options.ordered {
        true => 1,
        false => options
            .concurrency
            .map_or(n, |c| usize::try_from(c).unwrap_or(n))
            .min(max_streams.saturating_mul(sockets))
            .clamp(1, n.max(1)),
    };
    let mut conns = vec![conn.clone()];
    let wanted = sockets.min(workers);
    while conns.len() < wanted {
        conns.push(
            Conn::connect(params.clone(), options.signal.clone())
                .await
                .map_err(|f| f.to_js())?,
        );
    }
    let work = Rc::new(Work {
        endpoints,
        next: Cell::new(0),
        failed: Cell::new(false),
        results: RefCell::new(vec![Vec::new(); n]),
        schema: RefCell::new(None),
        open: RefCell::new(Vec::new()),
    });
    let options = Rc::new(options);
    let all: Array = (0..workers)
        .map(|w| {
            let worker = worker(
                Rc::clone(&conns[w % conns.len()]),
                Rc::clone(&work),
                Rc::clone(&options),
            );
            JsValue::from(future_to_promise(worker))
        })
        .collect();
    JsFuture::from(Promise::all(&all)).await?;
    drop(conns);
    let schema = match work.schema.take() {
        Some(schema) => schema,
        None => schema_from_ipc(&raw_schema).map_err(|f| f.to_js())?,
    };
    let batches = work.results.take().into_iter().flatten().collect();
    Ok(table_with_metadata(&schema, batches).into())
}

/// Reads endpoints until none is left; on a failure, cancels the other streams.
async fn worker(conn: ConnRef, work: Rc<Work>, options: Rc<Fetch>) -> Result<JsValue, JsValue> {
    loop {
        let i = work.next.get();
        if i >= work.endpoints.len() || work.failed.get() {
            return Ok(JsValue::UNDEFINED);
        }
        work.next.set(i + 1);
        let (ticket, location) = work.endpoints[i].clone();
        let state = open_get(
            &conn,
            ticket,
            location,
            options.credit_window,
            options.signal.clone(),
            None,
        );
        work.open.borrow_mut().push(Rc::clone(&state));
        let collected = state.borrow_mut().collect().map_err(JsValue::from)?;
        let outcome = JsFuture::from(collected).await;
        work.open.borrow_mut().retain(|s| !Rc::ptr_eq(s, &state));
        let collected = outcome.and_then(|_| {
            let (schema, batches) = state.borrow_mut().take_collected().map_err(|f| f.to_js())?;
            same_columns(&mut work.schema.borrow_mut(), schema, i)?;
            Ok(batches)
        });
        match collected {
            Ok(batches) => work.results.borrow_mut()[i] = batches,
            Err(error) => {
                work.failed.set(true);
                for other in work.open.borrow().iter() {
                    other.borrow_mut().cancel();
                }
                return Err(error);
            }
        }
    }
}

/// `name: type` of each column, for errors.
fn columns(schema: &SchemaRef) -> String {
    let column = |f: &arrow_schema::FieldRef| {
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

/// Keeps the first endpoint's schema; a later endpoint's must have the same columns, or
/// its batches would be read with another's types.
fn same_columns(
    first: &mut Option<SchemaRef>,
    schema: SchemaRef,
    endpoint: usize,
) -> Result<(), JsValue> {
    match first {
        Some(first) if first.fields() != schema.fields() => Err(Failure::new(
            INVALID_ARGUMENT,
            format!(
                "endpoint {endpoint} has the columns ({}), another endpoint ({}): they \
                 cannot form one table",
                columns(&schema),
                columns(first)
            ),
        )
        .to_js()),
        Some(_) => Ok(()),
        None => {
            *first = Some(schema);
            Ok(())
        }
    }
}
