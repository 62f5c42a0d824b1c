//! Conversions between Flight protobuf messages and the protocol's JSON messages.

use arrow_flight::flight_descriptor::DescriptorType;
use arrow_flight::{FlightDescriptor, FlightEndpoint, FlightInfo, Location, PollInfo, Ticket};
use quiver::flight::control::{self, check_poll_info, code_name, Descriptor, ServerMessage};
use quiver::flight::message::CONTINUATION;
use tonic::Status;

use crate::sql::command::Command;

/// The Flight descriptor of a protocol one; a `sql` descriptor's command is encoded here.
pub(crate) fn descriptor_to_proto(d: Descriptor) -> Result<FlightDescriptor, Status> {
    Ok(match d {
        Descriptor::Path(path) => FlightDescriptor::new_path(path),
        Descriptor::Cmd(cmd) => FlightDescriptor::new_cmd(cmd),
        Descriptor::Sql(json) => FlightDescriptor::new_cmd(Command::from_json(&json)?.to_cmd()?),
    })
}

fn descriptor_from_proto(d: FlightDescriptor) -> Descriptor {
    match d.r#type() {
        DescriptorType::Path => Descriptor::Path(d.path),
        _ => Descriptor::Cmd(d.cmd.to_vec()),
    }
}

fn timestamp_ms(t: Option<prost_types::Timestamp>) -> Option<i64> {
    t.map(|t| {
        t.seconds
            .saturating_mul(1000)
            .saturating_add(i64::from(t.nanos) / 1_000_000)
    })
}

pub(crate) fn endpoint_from_proto(e: FlightEndpoint) -> control::Endpoint {
    control::Endpoint {
        ticket: e.ticket.map(|t| t.ticket.to_vec()).unwrap_or_default(),
        locations: e.location.into_iter().map(|l| l.uri).collect(),
        expiration_time_ms: timestamp_ms(e.expiration_time),
        app_metadata: e.app_metadata.to_vec(),
    }
}

fn timestamp_from_ms(ms: i64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    }
}

pub(crate) fn endpoint_to_proto(e: control::Endpoint) -> FlightEndpoint {
    FlightEndpoint {
        ticket: Some(Ticket::new(e.ticket)),
        location: e
            .locations
            .into_iter()
            .map(|uri| Location { uri })
            .collect(),
        expiration_time: e.expiration_time_ms.map(timestamp_from_ms),
        app_metadata: e.app_metadata.into(),
    }
}

/// A FlightInfo as the browser sends it back (to cancel it), for the server.
pub(crate) fn info_to_proto(i: control::FlightInfo) -> Result<FlightInfo, Status> {
    Ok(FlightInfo {
        schema: i.schema.into(),
        flight_descriptor: i.descriptor.map(descriptor_to_proto).transpose()?,
        endpoint: i.endpoints.into_iter().map(endpoint_to_proto).collect(),
        total_records: i.total_records,
        total_bytes: i.total_bytes,
        ordered: i.ordered,
        app_metadata: i.app_metadata.into(),
    })
}

pub(crate) fn info_from_proto(i: FlightInfo) -> control::FlightInfo {
    control::FlightInfo {
        schema: i.schema.to_vec(),
        descriptor: i.flight_descriptor.map(descriptor_from_proto),
        endpoints: i.endpoint.into_iter().map(endpoint_from_proto).collect(),
        total_records: i.total_records,
        total_bytes: i.total_bytes,
        ordered: i.ordered,
        app_metadata: i.app_metadata.to_vec(),
    }
}

/// The `pollInfo` message of the server's PollInfo, or why Flight.proto refuses it.
pub(crate) fn poll_from_proto(stream: u32, p: PollInfo) -> Result<ServerMessage, Status> {
    let info = p.info.map(|i| {
        let mut info = info_from_proto(i);
        info.schema = encapsulated(std::mem::take(&mut info.schema));
        info
    });
    let descriptor = p.flight_descriptor.map(descriptor_from_proto);
    check_poll_info(info.as_ref(), descriptor.as_ref(), p.progress).map_err(|reason| {
        Status::internal(format!(
            "the server's PollInfo breaks Flight.proto: {reason}"
        ))
    })?;
    Ok(ServerMessage::PollInfo {
        stream,
        info,
        descriptor,
        progress: p.progress,
        expiration_time_ms: timestamp_ms(p.expiration_time),
    })
}

/// The terminal message of a stream, as `status::for_browser` has it.
pub(crate) fn status_message(stream: u32, status: &Status) -> ServerMessage {
    let (code, message) = crate::status::for_browser(status);
    let code = code as i32;
    ServerMessage::Status {
        stream,
        code,
        name: code_name(code).to_string(),
        message,
        details: status.details().to_vec(),
    }
}

/// Flight allows schema bytes without the continuation marker (the pre-1.0 IPC
/// format); the client's decoder wants it, so add it.
pub(crate) fn encapsulated(schema: Vec<u8>) -> Vec<u8> {
    let marker = CONTINUATION.to_le_bytes();
    if schema.is_empty() || schema.starts_with(&marker) {
        return schema;
    }
    let mut out = Vec::with_capacity(schema.len() + 4);
    out.extend_from_slice(&marker);
    out.extend_from_slice(&schema);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_bytes_get_the_marker() {
        assert_eq!(encapsulated(vec![]), Vec::<u8>::new());
        assert_eq!(
            encapsulated(vec![8, 0, 0, 0, 1]),
            [255, 255, 255, 255, 8, 0, 0, 0, 1]
        );
        assert_eq!(
            encapsulated(vec![255, 255, 255, 255, 0, 0, 0, 0]),
            [255, 255, 255, 255, 0, 0, 0, 0]
        );
    }

    #[test]
    fn flight_info_to_json() {
        let info = FlightInfo {
            schema: vec![1, 2].into(),
            flight_descriptor: Some(FlightDescriptor::new_path(vec!["p".into()])),
            endpoint: vec![FlightEndpoint {
                ticket: Some(Ticket::new("t")),
                location: vec![Location {
                    uri: "grpc://127.0.0.1:1".into(),
                }],
                expiration_time: Some(prost_types::Timestamp {
                    seconds: 2,
                    nanos: 5_000_000,
                }),
                app_metadata: vec![].into(),
            }],
            total_records: 10,
            total_bytes: -1,
            ordered: false,
            app_metadata: vec![].into(),
        };
        let j = info_from_proto(info);
        assert_eq!(j.descriptor, Some(Descriptor::Path(vec!["p".into()])));
        assert_eq!(j.endpoints[0].ticket, b"t");
        assert_eq!(j.endpoints[0].locations, ["grpc://127.0.0.1:1"]);
        assert_eq!(j.endpoints[0].expiration_time_ms, Some(2005));
        let cmd = descriptor_from_proto(descriptor_to_proto(Descriptor::Cmd(vec![7])).unwrap());
        assert_eq!(cmd, Descriptor::Cmd(vec![7]));
        let back = info_from_proto(info_to_proto(j.clone()).unwrap());
        assert_eq!(back, j);
    }

    #[test]
    fn status_keeps_code_message_details() {
        let s = Status::with_details(tonic::Code::Unauthenticated, "no", vec![1u8].into());
        match status_message(4, &s) {
            ServerMessage::Status {
                stream,
                code,
                name,
                message,
                details,
            } => assert_eq!(
                (stream, code, name.as_str(), message.as_str(), details),
                (4, 16, "UNAUTHENTICATED", "no", vec![1])
            ),
            other => panic!("unexpected {other:?}"),
        }
    }
}
