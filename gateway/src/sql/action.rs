//! The actions whose protobuf the gateway encodes: a `sql.` action's JSON body, the
//! Flight action it becomes, and its results back as JSON. Besides Flight SQL's, the
//! plain Flight actions CancelFlightInfo and RenewFlightEndpoint.

use arrow_flight::sql::{
    ActionClosePreparedStatementRequest, ActionCreatePreparedStatementRequest,
    ActionCreatePreparedStatementResult, ProstMessageExt,
};
use arrow_flight::{
    Action, CancelFlightInfoRequest, CancelFlightInfoResult, CancelStatus, FlightEndpoint,
    RenewFlightEndpointRequest,
};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use prost::Message;
use quiver::flight::control;
use serde::Deserialize;
use serde_json::json;
use tonic::Status;

use super::{decode, from_base64, unpack};
use crate::convert::{encapsulated, endpoint_from_proto, endpoint_to_proto, info_to_proto};

/// The prefix of the action types that this module runs.
pub(crate) const ACTION_PREFIX: &str = "sql.";

/// A `sql.` action, with its JSON body parsed.
#[derive(Debug, PartialEq)]
pub(crate) enum SqlAction {
    CreatePreparedStatement { query: String },
    ClosePreparedStatement { handle: Vec<u8> },
    CancelFlightInfo { info: Box<control::FlightInfo> },
    RenewFlightEndpoint { endpoint: Box<control::Endpoint> },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryBody {
    query: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HandleBody {
    handle: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InfoBody {
    info: Box<control::FlightInfo>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndpointBody {
    endpoint: Box<control::Endpoint>,
}

impl SqlAction {
    /// Parses action `name` (after the prefix) and its JSON `body`.
    pub fn parse(name: &str, body: &[u8]) -> Result<Self, Status> {
        fn body_of<'a, T: Deserialize<'a>>(name: &str, body: &'a [u8]) -> Result<T, Status> {
            serde_json::from_slice(body).map_err(|e| {
                Status::invalid_argument(format!("the body of action sql.{name} is not valid: {e}"))
            })
        }
        Ok(match name {
            "createPreparedStatement" => {
                let QueryBody { query } = body_of(name, body)?;
                SqlAction::CreatePreparedStatement { query }
            }
            "closePreparedStatement" => {
                let HandleBody { handle } = body_of(name, body)?;
                SqlAction::ClosePreparedStatement {
                    handle: from_base64(&handle, "handle")?,
                }
            }
            "cancelFlightInfo" => {
                let InfoBody { info } = body_of(name, body)?;
                SqlAction::CancelFlightInfo { info }
            }
            "renewFlightEndpoint" => {
                let EndpointBody { endpoint } = body_of(name, body)?;
                SqlAction::RenewFlightEndpoint { endpoint }
            }
            other => {
                return Err(Status::invalid_argument(format!(
                    "expected action sql.createPreparedStatement, sql.closePreparedStatement, \
                     sql.cancelFlightInfo or sql.renewFlightEndpoint, found sql.{other}"
                )))
            }
        })
    }

    /// The Flight action to send upstream.
    pub fn to_action(&self) -> Result<Action, Status> {
        let (r#type, body) = match self {
            SqlAction::CreatePreparedStatement { query } => (
                "CreatePreparedStatement",
                ActionCreatePreparedStatementRequest {
                    query: query.clone(),
                    transaction_id: None,
                }
                .as_any()
                .encode_to_vec(),
            ),
            SqlAction::ClosePreparedStatement { handle } => (
                "ClosePreparedStatement",
                ActionClosePreparedStatementRequest {
                    prepared_statement_handle: handle.clone().into(),
                }
                .as_any()
                .encode_to_vec(),
            ),
            SqlAction::CancelFlightInfo { info } => (
                "CancelFlightInfo",
                CancelFlightInfoRequest {
                    info: Some(info_to_proto(info.as_ref().clone())?),
                }
                .encode_to_vec(),
            ),
            SqlAction::RenewFlightEndpoint { endpoint } => (
                "RenewFlightEndpoint",
                RenewFlightEndpointRequest {
                    endpoint: Some(endpoint_to_proto(endpoint.as_ref().clone())),
                }
                .encode_to_vec(),
            ),
        };
        Ok(Action::new(r#type, body))
    }

    /// A result body of the upstream action, as JSON for the browser.
    pub fn result_to_browser(&self, body: &[u8]) -> Result<Vec<u8>, Status> {
        let json = match self {
            SqlAction::CreatePreparedStatement { .. } => {
                let r = unpack::<ActionCreatePreparedStatementResult>(
                    body,
                    "an ActionCreatePreparedStatementResult",
                )?;
                json!({
                    "handle": STANDARD.encode(&r.prepared_statement_handle),
                    "datasetSchema": STANDARD.encode(encapsulated(r.dataset_schema.to_vec())),
                    "parameterSchema": STANDARD.encode(encapsulated(r.parameter_schema.to_vec())),
                })
            }
            SqlAction::ClosePreparedStatement { .. } => json!({}),
            SqlAction::CancelFlightInfo { .. } => {
                let r = decode::<CancelFlightInfoResult>(body, "a CancelFlightInfoResult")?;
                let status = match CancelStatus::try_from(r.status) {
                    Ok(CancelStatus::Cancelled) => "cancelled",
                    Ok(CancelStatus::Cancelling) => "cancelling",
                    Ok(CancelStatus::NotCancellable) => "notCancellable",
                    _ => "unspecified",
                };
                json!({ "status": status })
            }
            SqlAction::RenewFlightEndpoint { .. } => {
                let e = decode::<FlightEndpoint>(body, "a FlightEndpoint")?;
                json!({ "endpoint": endpoint_from_proto(e) })
            }
        };
        Ok(json.to_string().into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use arrow_flight::sql::CommandGetCatalogs;

    use super::*;

    #[test]
    fn actions_round_trip() -> Result<(), Status> {
        let create = SqlAction::parse("createPreparedStatement", br#"{"query":"SELECT 1"}"#)?;
        let action = create.to_action()?;
        assert_eq!(action.r#type, "CreatePreparedStatement");
        assert_eq!(
            unpack::<ActionCreatePreparedStatementRequest>(
                &action.body,
                "an ActionCreatePreparedStatementRequest"
            )?
            .query,
            "SELECT 1"
        );
        let result = ActionCreatePreparedStatementResult {
            prepared_statement_handle: vec![1].into(),
            dataset_schema: vec![8, 0, 0, 0].into(),
            parameter_schema: vec![].into(),
        }
        .as_any()
        .encode_to_vec();
        assert_eq!(
            create.result_to_browser(&result)?,
            br#"{"datasetSchema":"/////wgAAAA=","handle":"AQ==","parameterSchema":""}"#
        );
        let wrong = CommandGetCatalogs {}.as_any().encode_to_vec();
        assert_eq!(
            create.result_to_browser(&wrong).unwrap_err().message(),
            "expected an ActionCreatePreparedStatementResult from the server, found an Any of \
             type.googleapis.com/arrow.flight.protocol.sql.CommandGetCatalogs"
        );
        // The right type whose value is cut short.
        let mut cut = ActionCreatePreparedStatementResult {
            prepared_statement_handle: vec![1].into(),
            dataset_schema: vec![].into(),
            parameter_schema: vec![].into(),
        }
        .as_any();
        cut.value = vec![0x0a, 0x05, 1].into();
        let message = create
            .result_to_browser(&cut.encode_to_vec())
            .unwrap_err()
            .message()
            .to_string();
        assert!(
            message.starts_with(
                "expected an ActionCreatePreparedStatementResult from the server, found an Any \
                 of its type whose 3 bytes do not decode: "
            ),
            "{message}"
        );
        assert_eq!(
            create.result_to_browser(&[0xff]).unwrap_err().message(),
            "expected an ActionCreatePreparedStatementResult in an Any from the server, found 1 \
             bytes that do not decode: failed to decode Protobuf message: invalid varint"
        );
        assert_eq!(
            SqlAction::parse("dropTable", b"{}").unwrap_err().message(),
            "expected action sql.createPreparedStatement, sql.closePreparedStatement, \
             sql.cancelFlightInfo or sql.renewFlightEndpoint, found sql.dropTable"
        );
        assert_eq!(
            SqlAction::parse("closePreparedStatement", b"{}")
                .unwrap_err()
                .message(),
            "the body of action sql.closePreparedStatement is not valid: missing field `handle` \
             at line 1 column 2"
        );
        Ok(())
    }
}
