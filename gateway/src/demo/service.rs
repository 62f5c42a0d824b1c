//! The demo Flight service: FlightInfo and DoGet from tickets, and DoPut uploads kept in
//! memory up to a limit.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::flight_descriptor::DescriptorType;
use arrow_flight::flight_service_server::{FlightService, FlightServiceServer};
use arrow_flight::{
    Action, ActionType, Criteria, Empty, FlightData, FlightDescriptor, FlightEndpoint, FlightInfo,
    HandshakeRequest, HandshakeResponse, PollInfo, PutResult, SchemaAsIpc, SchemaResult, Ticket,
};
use arrow_ipc::writer::IpcWriteOptions;
use arrow_schema::ArrowError;
use futures::stream::{self, BoxStream};
use futures::{StreamExt, TryStreamExt};
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status, Streaming};

use super::ticket::Plan;
use super::{schema, DemoTicket, Generated};

/// Largest total the demo stores by default, over all its uploads, so that it cannot be
/// made to eat memory.
const MAX_STORED_BYTES: usize = 1 << 30;
/// What one stored message costs beyond its bytes (the `FlightData` and its `Bytes`), so
/// that empty messages count too.
const MESSAGE_OVERHEAD: usize = 128;

/// The memory `data` takes in the store, as counted against `Demo::max_stored_bytes`.
fn stored_bytes(data: &FlightData) -> usize {
    data.data_header.len() + data.data_body.len() + data.app_metadata.len() + MESSAGE_OVERHEAD
}

/// The demo service. DoPut uploads are kept in memory by descriptor path, up to
/// `max_stored_bytes` in all (1 GiB by default).
#[derive(Clone)]
pub struct Demo {
    stored: Arc<Mutex<HashMap<String, Vec<FlightData>>>>,
    max_stored_bytes: usize,
}

impl Default for Demo {
    fn default() -> Self {
        Demo::with_max_stored_bytes(MAX_STORED_BYTES)
    }
}

/// Serves `demo` on an ephemeral loopback port and returns its address.
pub async fn spawn(demo: Demo) -> io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let max_message = demo.max_stored_bytes;
    let service = FlightServiceServer::new(demo).max_decoding_message_size(max_message);
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    Ok(addr)
}

fn bad_ticket(e: String) -> Status {
    Status::invalid_argument(e)
}

/// How long a PollFlightInfo's retry descriptor is said to stay valid.
const POLL_EXPIRY: Duration = Duration::from_secs(60);

/// What a descriptor names: an upload by path, or a `cmd` of demo ticket keys.
fn parse(descriptor: &FlightDescriptor) -> Result<(DemoTicket, Plan), Status> {
    match descriptor.r#type() {
        DescriptorType::Path => {
            let name = descriptor.path.join("/");
            let plan = Plan {
                partitions: 1,
                polls: 1,
                polled: 0,
            };
            Ok((DemoTicket::Put(name), plan))
        }
        _ => DemoTicket::parse(&descriptor.cmd).map_err(bad_ticket),
    }
}

/// The descriptor of the next poll of a `cmd` query after `polled` polls.
fn retry(descriptor: &FlightDescriptor, polled: usize) -> FlightDescriptor {
    let cmd = String::from_utf8_lossy(&descriptor.cmd);
    let mut keys: Vec<&str> = cmd
        .split('&')
        .filter(|p| !p.starts_with("polled="))
        .collect();
    let next = format!("polled={polled}");
    keys.push(&next);
    FlightDescriptor::new_cmd(keys.join("&"))
}

type Stream<T> = BoxStream<'static, Result<T, Status>>;

#[tonic::async_trait]
impl FlightService for Demo {
    type HandshakeStream = Stream<HandshakeResponse>;
    type ListFlightsStream = Stream<FlightInfo>;
    type DoGetStream = Stream<FlightData>;
    type DoPutStream = Stream<PutResult>;
    type DoExchangeStream = Stream<FlightData>;
    type DoActionStream = Stream<arrow_flight::Result>;
    type ListActionsStream = Stream<ActionType>;

    async fn handshake(
        &self,
        _: Request<Streaming<HandshakeRequest>>,
    ) -> Result<Response<Self::HandshakeStream>, Status> {
        Err(Status::unimplemented("the demo needs no handshake"))
    }

    async fn list_flights(
        &self,
        _: Request<Criteria>,
    ) -> Result<Response<Self::ListFlightsStream>, Status> {
        let infos: Vec<Result<FlightInfo, Status>> = ["none", "lz4", "zstd"]
            .iter()
            .map(|c| self.info(FlightDescriptor::new_cmd(format!("compression={c}"))))
            .collect();
        Ok(Response::new(stream::iter(infos).boxed()))
    }

    async fn get_flight_info(
        &self,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        self.info(request.into_inner()).map(Response::new)
    }

    /// A query that completes at poll `polls`: each poll before that answers the parts
    /// done so far (`partitions * polled / polls` endpoints, in order), its progress, and
    /// a retry descriptor that counts the polls in `polled`.
    async fn poll_flight_info(
        &self,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<PollInfo>, Status> {
        let descriptor = request.into_inner();
        let (_, plan) = parse(&descriptor)?;
        let mut info = self.info(descriptor.clone())?;
        let polled = plan.polled + 1;
        if polled >= plan.polls {
            return Ok(Response::new(PollInfo {
                info: Some(info),
                flight_descriptor: None,
                progress: Some(1.0),
                expiration_time: None,
            }));
        }
        // Still running: the parts done so far, and where to poll next.
        let parts = info.endpoint.len();
        let done = parts * polled / plan.polls;
        info.endpoint.truncate(done);
        info.total_records = info.total_records / parts as i64 * done as i64;
        let expires = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            + POLL_EXPIRY;
        Ok(Response::new(PollInfo {
            info: Some(info),
            flight_descriptor: Some(retry(&descriptor, polled)),
            progress: Some(polled as f64 / plan.polls as f64),
            expiration_time: Some(prost_types::Timestamp {
                seconds: expires.as_secs() as i64,
                nanos: expires.subsec_nanos() as i32,
            }),
        }))
    }

    async fn get_schema(
        &self,
        _: Request<FlightDescriptor>,
    ) -> Result<Response<SchemaResult>, Status> {
        let options = IpcWriteOptions::default();
        let result = SchemaAsIpc::new(&schema(), &options)
            .try_into()
            .map_err(|e: ArrowError| Status::internal(e.to_string()))?;
        Ok(Response::new(result))
    }

    async fn do_get(
        &self,
        request: Request<Ticket>,
    ) -> Result<Response<Self::DoGetStream>, Status> {
        let (ticket, _) = DemoTicket::parse(&request.into_inner().ticket).map_err(bad_ticket)?;
        let g = match ticket {
            DemoTicket::Put(name) => {
                let stored = self
                    .stored
                    .lock()
                    .map_err(|_| Status::internal("store lock poisoned"))?;
                let data = stored
                    .get(&name)
                    .cloned()
                    .ok_or_else(|| Status::not_found(format!("nothing was put at {name:?}")))?;
                return Ok(Response::new(
                    stream::iter(data.into_iter().map(Ok)).boxed(),
                ));
            }
            DemoTicket::Generated(g) => g,
        };
        let options = IpcWriteOptions::default()
            .try_with_compression(g.compression)
            .map_err(|e| Status::internal(e.to_string()))?;
        let batches =
            stream::iter(0..g.batches).map(move |i| g.batch(i).map_err(FlightError::from));
        let data = FlightDataEncoderBuilder::new()
            .with_options(options)
            .with_schema(schema())
            // Keep the requested batch size: the encoder would split batches over 2 MiB.
            .with_max_flight_data_size(usize::MAX)
            .build(batches)
            .map_err(|e| Status::internal(e.to_string()));
        Ok(Response::new(data.boxed()))
    }

    async fn do_put(
        &self,
        request: Request<Streaming<FlightData>>,
    ) -> Result<Response<Self::DoPutStream>, Status> {
        let mut input = request.into_inner();
        let mut data = Vec::new();
        let (mut name, mut bytes) = (None, 0usize);
        while let Some(mut d) = input.message().await? {
            if let Some(desc) = d.flight_descriptor.take() {
                if desc.r#type() != DescriptorType::Path || desc.path.len() != 1 {
                    return Err(Status::invalid_argument(
                        "demo DoPut needs a one-element path descriptor",
                    ));
                }
                name = desc.path.into_iter().next();
            }
            bytes += stored_bytes(&d);
            if bytes > self.max_stored_bytes {
                return Err(Status::resource_exhausted(format!(
                    "a demo DoPut may store at most {} bytes",
                    self.max_stored_bytes
                )));
            }
            data.push(d);
        }
        let name = name.ok_or_else(|| Status::invalid_argument("DoPut sent no descriptor"))?;
        let count = data.len();
        let mut stored = self
            .stored
            .lock()
            .map_err(|_| Status::internal("store lock poisoned"))?;
        // An upload under a stored name replaces it.
        let others: usize = stored
            .iter()
            .filter(|(stored_name, _)| **stored_name != name)
            .flat_map(|(_, messages)| messages.iter().map(stored_bytes))
            .sum();
        if others + bytes > self.max_stored_bytes {
            return Err(Status::resource_exhausted(format!(
                "the demo stores at most {} bytes of uploads in all, and holds {others}",
                self.max_stored_bytes
            )));
        }
        stored.insert(name, data);
        drop(stored);
        let ack = PutResult {
            app_metadata: format!("stored {count} messages").into(),
        };
        Ok(Response::new(stream::iter([Ok(ack)]).boxed()))
    }

    async fn do_exchange(
        &self,
        _: Request<Streaming<FlightData>>,
    ) -> Result<Response<Self::DoExchangeStream>, Status> {
        Err(Status::unimplemented("the demo has no DoExchange"))
    }

    async fn do_action(
        &self,
        _: Request<Action>,
    ) -> Result<Response<Self::DoActionStream>, Status> {
        Err(Status::unimplemented("the demo has no actions"))
    }

    async fn list_actions(
        &self,
        _: Request<Empty>,
    ) -> Result<Response<Self::ListActionsStream>, Status> {
        Ok(Response::new(stream::empty().boxed()))
    }
}

impl Demo {
    /// A demo that stores at most `max_stored_bytes` of uploads in all.
    pub fn with_max_stored_bytes(max_stored_bytes: usize) -> Self {
        Demo {
            stored: Arc::default(),
            max_stored_bytes,
        }
    }

    fn info(&self, descriptor: FlightDescriptor) -> Result<FlightInfo, Status> {
        let (ticket, Plan { partitions, .. }) = parse(&descriptor)?;
        let mut info = FlightInfo::new()
            .try_with_schema(&schema())
            .map_err(|e| Status::internal(e.to_string()))?
            .with_descriptor(descriptor);
        match ticket {
            DemoTicket::Put(name) => {
                info = info.with_endpoint(
                    FlightEndpoint::new().with_ticket(Ticket::new(format!("put={name}"))),
                );
            }
            DemoTicket::Generated(g) => {
                for part in 0..partitions as u64 {
                    let t = Generated { part, ..g.clone() }.to_ticket();
                    info = info.with_endpoint(FlightEndpoint::new().with_ticket(Ticket::new(t)));
                }
                let rows = (g.rows * g.batches * partitions) as i64;
                info = info.with_total_records(rows).with_ordered(true);
            }
        }
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_flight::flight_service_client::FlightServiceClient;
    use tonic::transport::{Channel, Endpoint};

    type Client = FlightServiceClient<Channel>;

    async fn connect(addr: SocketAddr) -> Client {
        let endpoint = Endpoint::from_shared(format!("http://{addr}")).expect("uri");
        FlightServiceClient::new(endpoint.connect().await.expect("connect"))
    }

    /// The messages a DoGet of `ticket` sends.
    async fn messages(client: &mut Client, ticket: &str) -> Vec<FlightData> {
        let response = client.do_get(Ticket::new(ticket.to_string())).await;
        let messages = response.expect("do_get").into_inner().try_collect().await;
        messages.expect("messages")
    }

    /// Uploads `messages` to path `[name]`.
    async fn put(client: &mut Client, name: &str, messages: &[FlightData]) -> Result<(), Status> {
        let mut upload = messages.to_vec();
        upload[0].flight_descriptor = Some(FlightDescriptor::new_path(vec![name.into()]));
        let acks = client.do_put(stream::iter(upload)).await?;
        acks.into_inner().try_collect::<Vec<_>>().await.map(drop)
    }

    /// The messages stored at `name`, or the DoGet's error.
    async fn stored(client: &mut Client, name: &str) -> Result<Vec<FlightData>, Status> {
        let messages = client.do_get(Ticket::new(format!("put={name}"))).await?;
        messages.into_inner().try_collect().await
    }

    #[tokio::test]
    async fn uploads_stop_at_the_store_limit_and_keep_what_was_stored() {
        let mut client = connect(spawn(Demo::default()).await.expect("demo")).await;
        let small = messages(&mut client, "rows=100&batches=1").await;
        let three = messages(&mut client, "rows=100&batches=3").await;
        let one_large = messages(&mut client, "rows=1000&batches=1").await;
        // The limit holds two small uploads and a half: not three small batches in one
        // upload, nor one message of a large batch.
        let size: usize = small.iter().map(stored_bytes).sum();
        let limit = size * 5 / 2;
        assert!(three.iter().map(stored_bytes).sum::<usize>() > limit);
        assert!(one_large.iter().any(|m| m.data_body.len() > limit));

        let demo = spawn(Demo::with_max_stored_bytes(limit))
            .await
            .expect("demo");
        let mut client = connect(demo).await;
        put(&mut client, "a", &small).await.expect("a fits");
        put(&mut client, "b", &small)
            .await
            .expect("b fits beside a");
        // Replacing an upload counts the new one, not both.
        put(&mut client, "a", &small).await.expect("a replaced");

        let over = put(&mut client, "c", &small).await.unwrap_err();
        assert_eq!(over.code(), tonic::Code::ResourceExhausted);
        let in_all = format!(
            "the demo stores at most {limit} bytes of uploads in all, and holds {}",
            2 * size
        );
        assert_eq!(over.message(), in_all);

        let too_large = put(&mut client, "d", &three).await.unwrap_err();
        assert_eq!(too_large.code(), tonic::Code::ResourceExhausted);
        let one = format!("a demo DoPut may store at most {limit} bytes");
        assert_eq!(too_large.message(), one);

        // A message over the limit is refused as it arrives, by tonic's decoder.
        let message_too_large = put(&mut client, "e", &one_large).await.unwrap_err();
        assert_eq!(message_too_large.code(), tonic::Code::OutOfRange);

        // Refused uploads store nothing; what was stored stays whole.
        for refused in ["c", "d", "e"] {
            let err = stored(&mut client, refused).await.unwrap_err();
            assert_eq!(err.code(), tonic::Code::NotFound, "{refused}");
        }
        for kept in ["a", "b"] {
            assert_eq!(
                stored(&mut client, kept).await.expect(kept),
                small,
                "{kept}"
            );
        }
    }
}
