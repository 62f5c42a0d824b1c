//! The Flight calls whose results travel as JSON: Handshake, ListFlights, GetFlightInfo,
//! PollFlightInfo, GetSchema, DoAction and ListActions. The `sql.` actions, whose
//! protobuf the gateway encodes (Flight SQL's, CancelFlightInfo, RenewFlightEndpoint), go
//! through [`SqlAction`].

use arrow_flight::{Action, Criteria, Empty, HandshakeRequest};
use quiver::flight::control::{ClientMessage, ServerMessage};
use tonic::Status;

use crate::convert::{descriptor_to_proto, encapsulated, info_from_proto, poll_from_proto};
use crate::out::Out;
use crate::sql::action::{SqlAction, ACTION_PREFIX};
use crate::upstream::{request, CallMetadata, Client};

/// Runs one request and sends its results; the caller sends the terminal status.
pub(crate) async fn run(
    msg: ClientMessage,
    client: Client,
    metadata: CallMetadata,
    out: Out,
) -> Result<(), Status> {
    let mut client = client.flight();
    let metadata = &metadata;
    let send = |m: ServerMessage| {
        let out = out.clone();
        async move { out.send_answer(&m, "a call's answer").await }
    };
    match msg {
        ClientMessage::Handshake { stream, payload } => {
            let hs = HandshakeRequest {
                protocol_version: 0,
                payload: payload.into(),
            };
            let req = request(tokio_stream::iter([hs]), metadata)?;
            let mut responses = client.handshake(req).await?.into_inner();
            while let Some(r) = responses.message().await? {
                send(ServerMessage::Handshake {
                    stream,
                    payload: r.payload.to_vec(),
                })
                .await?;
            }
        }
        ClientMessage::ListFlights { stream, criteria } => {
            let req = request(
                Criteria {
                    expression: criteria.into(),
                },
                metadata,
            )?;
            let mut infos = client.list_flights(req).await?.into_inner();
            while let Some(info) = infos.message().await? {
                let info = with_encapsulated_schema(info_from_proto(info));
                send(ServerMessage::FlightInfo { stream, info }).await?;
            }
        }
        ClientMessage::GetFlightInfo { stream, descriptor } => {
            let req = request(descriptor_to_proto(descriptor)?, metadata)?;
            let info = with_encapsulated_schema(info_from_proto(
                client.get_flight_info(req).await?.into_inner(),
            ));
            send(ServerMessage::FlightInfo { stream, info }).await?;
        }
        ClientMessage::PollFlightInfo { stream, descriptor } => {
            let req = request(descriptor_to_proto(descriptor)?, metadata)?;
            let poll = client.poll_flight_info(req).await?.into_inner();
            send(poll_from_proto(stream, poll)?).await?;
        }
        ClientMessage::GetSchema { stream, descriptor } => {
            let req = request(descriptor_to_proto(descriptor)?, metadata)?;
            let schema = client.get_schema(req).await?.into_inner().schema.to_vec();
            send(ServerMessage::Schema {
                stream,
                schema: encapsulated(schema),
            })
            .await?;
        }
        ClientMessage::DoAction {
            stream,
            action,
            body,
        } if action.starts_with(ACTION_PREFIX) => {
            let sql_action = SqlAction::parse(&action[ACTION_PREFIX.len()..], &body)?;
            let req = request(sql_action.to_action()?, metadata)?;
            let mut results = client.do_action(req).await?.into_inner();
            while let Some(r) = results.message().await? {
                send(ServerMessage::Result {
                    stream,
                    body: sql_action.result_to_browser(&r.body)?,
                })
                .await?;
            }
        }
        ClientMessage::DoAction {
            stream,
            action,
            body,
        } => {
            let req = request(
                Action {
                    r#type: action,
                    body: body.into(),
                },
                metadata,
            )?;
            let mut results = client.do_action(req).await?.into_inner();
            while let Some(r) = results.message().await? {
                send(ServerMessage::Result {
                    stream,
                    body: r.body.to_vec(),
                })
                .await?;
            }
        }
        ClientMessage::ListActions { stream } => {
            let mut types = client
                .list_actions(request(Empty {}, metadata)?)
                .await?
                .into_inner();
            while let Some(t) = types.message().await? {
                send(ServerMessage::ActionType {
                    stream,
                    name: t.r#type,
                    description: t.description,
                })
                .await?;
            }
        }
        other => {
            return Err(Status::internal(format!("not a JSON call: {other:?}")));
        }
    }
    Ok(())
}

fn with_encapsulated_schema(
    mut info: quiver::flight::control::FlightInfo,
) -> quiver::flight::control::FlightInfo {
    info.schema = encapsulated(std::mem::take(&mut info.schema));
    info
}
