//! `fetchAll`: every endpoint of a FlightInfo into one `Table`, by readers that take
//! endpoints as [`Fetch`] schedules them, optionally spread over several sockets.
//! Endpoint locations are passed to the gateway, which dials them itself (if it allows
//! them).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::super::batch::table_with_metadata;
use super::conn::{with_client, Conn, ConnRef, Owner};
use super::deferred::promise;
use super::error::to_js;
use super::get::{open_get, Collecting};
use super::info::Target;
use super::options::Fetch as FetchOptions;
use crate::flight::client::fetch::{Fetch, FetchPlan};

/// Shared by the readers: the endpoints and their schedule, which keeps the stream
/// reading each (its connection and id), to cancel the others when one fails.
struct Work {
    endpoints: Vec<Target>,
    fetch: RefCell<Fetch<(ConnRef, u32)>>,
}

pub(super) async fn fetch_all(
    owner: Rc<Owner>,
    endpoints: Vec<Target>,
    raw_schema: Vec<u8>,
    options: FetchOptions,
) -> Result<JsValue, JsValue> {
    let n = endpoints.len();
    let (params, max_streams) = {
        let c = owner.conn.borrow();
        (c.params.clone(), c.client.limits().max_streams as usize)
    };
    let plan = FetchPlan {
        endpoints: n,
        ordered: options.ordered,
        concurrency: options.concurrency.map(|c| usize::try_from(c).unwrap_or(n)),
        sockets: usize::try_from(options.connections).unwrap_or(1),
        max_streams,
    };
    let mut owners = vec![owner];
    while owners.len() < plan.sockets() {
        let more = Conn::connect(params.clone(), options.signal.clone()).await;
        owners.push(more.map_err(|f| to_js(&f))?);
    }
    let work = Rc::new(Work {
        endpoints,
        fetch: RefCell::new(Fetch::new(n)),
    });
    let options = Rc::new(options);
    let all: Array = (0..plan.readers())
        .map(|r| {
            let reader = reader(
                Rc::clone(&owners[plan.socket_of(r)]),
                Rc::clone(&work),
                Rc::clone(&options),
            );
            JsValue::from(promise(reader))
        })
        .collect();
    JsFuture::from(Promise::all(&all)).await?;
    drop(owners);
    let fetch = work.fetch.replace(Fetch::new(0));
    let (schema, batches) = fetch.into_batches(&raw_schema).map_err(|f| to_js(&f))?;
    Ok(table_with_metadata(&schema, batches).into())
}

/// Reads endpoints until none is left; on a failure, cancels the other streams.
async fn reader(
    owner: Rc<Owner>,
    work: Rc<Work>,
    options: Rc<FetchOptions>,
) -> Result<JsValue, JsValue> {
    let conn = &owner.conn;
    loop {
        let Some(i) = work.fetch.borrow_mut().take() else {
            return Ok(JsValue::UNDEFINED);
        };
        let (ticket, locations) = work.endpoints[i].clone();
        let signal = options.signal.clone();
        let stream = open_get(
            &owner,
            ticket,
            locations,
            options.credit_window,
            signal,
            None,
        );
        let id = stream.id();
        work.fetch.borrow_mut().reading(i, (Rc::clone(conn), id));
        let collecting = Collecting::start(&stream);
        let collected = match collecting {
            Ok(collecting) => collecting.wait().await,
            Err(e) => {
                with_client(conn, |c| c.release(id));
                return Err(e.into());
            }
        };
        with_client(conn, |c| c.release(id));
        let recorded = work.fetch.borrow_mut().record(i, collected);
        if let Err((failure, others)) = recorded {
            for (conn, id) in others {
                with_client(&conn, |c| c.cancel(id));
            }
            return Err(to_js(&failure));
        }
    }
}
