//! Flight SQL in JSON: the browser names Flight SQL commands and actions in JSON, and the
//! gateway encodes them as Flight SQL's protobuf messages (arrow-flight's `sql` types)
//! and decodes their results back to JSON. The wasm client thus carries no protobuf code
//! (docs/protocol.md, "Flight SQL").
//!
//! - A descriptor `{"sql": {"type": "statementQuery", "query": "..."}}` becomes the
//!   command descriptor of that `Command*` message, packed in an `Any`.
//! - A DoPut to such a descriptor answers each `PutResult` with the JSON of its
//!   `DoPutUpdateResult` or `DoPutPreparedStatementResult`, as UTF-8 in `appMetadata`.
//! - An action whose type starts with `sql.` takes a JSON body and answers JSON bodies.

use arrow_flight::sql::{
    ActionClosePreparedStatementRequest, ActionCreatePreparedStatementRequest,
    ActionCreatePreparedStatementResult, Any, CommandGetCatalogs, CommandGetDbSchemas,
    CommandGetPrimaryKeys, CommandGetSqlInfo, CommandGetTableTypes, CommandGetTables,
    CommandPreparedStatementQuery, CommandPreparedStatementUpdate, CommandStatementQuery,
    CommandStatementUpdate, DoPutPreparedStatementResult, DoPutUpdateResult, ProstMessageExt,
};
use arrow_flight::{Action, CancelFlightInfoRequest, CancelFlightInfoResult, CancelStatus};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use prost::Message;
use quiver::flight::control;
use serde::Deserialize;
use serde_json::json;
use tonic::Status;

use crate::calls::encapsulated;
use crate::convert::info_to_proto;

/// The prefix of the action types that this module runs.
pub(crate) const ACTION_PREFIX: &str = "sql.";

/// A Flight SQL command, as a `sql` descriptor names it.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub(crate) enum Command {
    StatementQuery {
        query: String,
    },
    StatementUpdate {
        query: String,
    },
    PreparedStatementQuery {
        handle: String,
    },
    PreparedStatementUpdate {
        handle: String,
    },
    GetCatalogs,
    GetDbSchemas {
        catalog: Option<String>,
        db_schema_filter_pattern: Option<String>,
    },
    GetTables {
        catalog: Option<String>,
        db_schema_filter_pattern: Option<String>,
        table_name_filter_pattern: Option<String>,
        #[serde(default)]
        table_types: Vec<String>,
        #[serde(default)]
        include_schema: bool,
    },
    GetTableTypes,
    GetSqlInfo {
        #[serde(default)]
        info: Vec<u32>,
    },
    GetPrimaryKeys {
        catalog: Option<String>,
        db_schema: Option<String>,
        table: String,
    },
}

/// What the `PutResult`s of a DoPut to a command hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PutAnswer {
    /// `DoPutUpdateResult`, as `{"recordCount": N}`.
    RecordCount,
    /// `DoPutPreparedStatementResult`, as `{"handle": "<base64>" | null}`.
    Handle,
    /// Opaque bytes, passed through.
    Opaque,
}

impl Command {
    /// Parses the JSON of a `sql` descriptor.
    pub fn from_json(json: &str) -> Result<Self, Status> {
        serde_json::from_str(json)
            .map_err(|e| Status::invalid_argument(format!("descriptor.sql is not valid: {e}")))
    }

    /// The descriptor's `cmd`: the command, packed in an `Any`.
    pub fn to_cmd(&self) -> Result<Vec<u8>, Status> {
        use Command::*;
        let any = match self {
            StatementQuery { query } => CommandStatementQuery {
                query: query.clone(),
                transaction_id: None,
            }
            .as_any(),
            StatementUpdate { query } => CommandStatementUpdate {
                query: query.clone(),
                transaction_id: None,
            }
            .as_any(),
            PreparedStatementQuery { handle } => CommandPreparedStatementQuery {
                prepared_statement_handle: from_base64(handle, "handle")?.into(),
            }
            .as_any(),
            PreparedStatementUpdate { handle } => CommandPreparedStatementUpdate {
                prepared_statement_handle: from_base64(handle, "handle")?.into(),
            }
            .as_any(),
            GetCatalogs => CommandGetCatalogs {}.as_any(),
            GetDbSchemas {
                catalog,
                db_schema_filter_pattern,
            } => CommandGetDbSchemas {
                catalog: catalog.clone(),
                db_schema_filter_pattern: db_schema_filter_pattern.clone(),
            }
            .as_any(),
            GetTables {
                catalog,
                db_schema_filter_pattern,
                table_name_filter_pattern,
                table_types,
                include_schema,
            } => CommandGetTables {
                catalog: catalog.clone(),
                db_schema_filter_pattern: db_schema_filter_pattern.clone(),
                table_name_filter_pattern: table_name_filter_pattern.clone(),
                table_types: table_types.clone(),
                include_schema: *include_schema,
            }
            .as_any(),
            GetTableTypes => CommandGetTableTypes {}.as_any(),
            GetSqlInfo { info } => CommandGetSqlInfo { info: info.clone() }.as_any(),
            GetPrimaryKeys {
                catalog,
                db_schema,
                table,
            } => CommandGetPrimaryKeys {
                catalog: catalog.clone(),
                db_schema: db_schema.clone(),
                table: table.clone(),
            }
            .as_any(),
        };
        Ok(any.encode_to_vec())
    }

    /// What a DoPut to this command answers with.
    pub fn put_answer(&self) -> PutAnswer {
        match self {
            Command::StatementUpdate { .. } | Command::PreparedStatementUpdate { .. } => {
                PutAnswer::RecordCount
            }
            Command::PreparedStatementQuery { .. } => PutAnswer::Handle,
            _ => PutAnswer::Opaque,
        }
    }
}

impl PutAnswer {
    /// A `PutResult`'s `app_metadata` as the browser receives it.
    pub fn to_browser(self, app_metadata: &[u8]) -> Result<Vec<u8>, Status> {
        let json = match self {
            PutAnswer::Opaque => return Ok(app_metadata.to_vec()),
            PutAnswer::RecordCount => {
                let r = decode::<DoPutUpdateResult>(app_metadata, "DoPutUpdateResult")?;
                json!({ "recordCount": r.record_count })
            }
            PutAnswer::Handle => {
                let r = decode::<DoPutPreparedStatementResult>(
                    app_metadata,
                    "DoPutPreparedStatementResult",
                )?;
                json!({ "handle": r.prepared_statement_handle.map(|h| STANDARD.encode(h)) })
            }
        };
        Ok(json.to_string().into_bytes())
    }
}

/// A `sql.` action, with its JSON body parsed.
#[derive(Debug, PartialEq)]
pub(crate) enum SqlAction {
    CreatePreparedStatement { query: String },
    ClosePreparedStatement { handle: Vec<u8> },
    CancelFlightInfo { info: Box<control::FlightInfo> },
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
            other => {
                return Err(Status::invalid_argument(format!(
                    "expected action sql.createPreparedStatement, sql.closePreparedStatement \
                     or sql.cancelFlightInfo, found sql.{other}"
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
        };
        Ok(Action::new(r#type, body))
    }

    /// A result body of the upstream action, as JSON for the browser.
    pub fn result_to_browser(&self, body: &[u8]) -> Result<Vec<u8>, Status> {
        let json = match self {
            SqlAction::CreatePreparedStatement { .. } => {
                let any = decode::<Any>(body, "an Any")?;
                let r = any
                    .unpack::<ActionCreatePreparedStatementResult>()
                    .ok()
                    .flatten()
                    .ok_or_else(|| {
                        Status::internal(format!(
                            "expected an ActionCreatePreparedStatementResult from the server, \
                             found an Any of {}",
                            any.type_url
                        ))
                    })?;
                json!({
                    "handle": STANDARD.encode(&r.prepared_statement_handle),
                    "datasetSchema": STANDARD.encode(encapsulated(r.dataset_schema.to_vec())),
                    "parameterSchema": STANDARD.encode(encapsulated(r.parameter_schema.to_vec())),
                })
            }
            SqlAction::ClosePreparedStatement { .. } => json!({}),
            SqlAction::CancelFlightInfo { .. } => {
                let r = decode::<CancelFlightInfoResult>(body, "CancelFlightInfoResult")?;
                let status = match CancelStatus::try_from(r.status) {
                    Ok(CancelStatus::Cancelled) => "cancelled",
                    Ok(CancelStatus::Cancelling) => "cancelling",
                    Ok(CancelStatus::NotCancellable) => "notCancellable",
                    _ => "unspecified",
                };
                json!({ "status": status })
            }
        };
        Ok(json.to_string().into_bytes())
    }
}

fn decode<M: Message + Default>(bytes: &[u8], what: &str) -> Result<M, Status> {
    M::decode(bytes).map_err(|e| {
        Status::internal(format!(
            "expected a {what} from the server, found {} bytes that do not decode: {e}",
            bytes.len()
        ))
    })
}

fn from_base64(text: &str, field: &str) -> Result<Vec<u8>, Status> {
    STANDARD
        .decode(text)
        .map_err(|e| Status::invalid_argument(format!("{field} must be base64: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unpack<M: ProstMessageExt>(cmd: &[u8]) -> M {
        let any = Any::decode(cmd).expect("an Any");
        any.unpack::<M>().expect("unpacks").expect("of that type")
    }

    #[test]
    fn commands_pack_their_fields() -> Result<(), Status> {
        let cmd = Command::from_json(
            r#"{"type":"getTables","catalog":"c","tableNameFilterPattern":"t%","tableTypes":["VIEW"],"includeSchema":true}"#,
        )?
        .to_cmd()?;
        assert_eq!(
            unpack::<CommandGetTables>(&cmd),
            CommandGetTables {
                catalog: Some("c".into()),
                db_schema_filter_pattern: None,
                table_name_filter_pattern: Some("t%".into()),
                table_types: vec!["VIEW".into()],
                include_schema: true,
            }
        );
        let cmd = Command::from_json(r#"{"type":"preparedStatementQuery","handle":"AAE="}"#)?;
        assert_eq!(cmd.put_answer(), PutAnswer::Handle);
        assert_eq!(
            unpack::<CommandPreparedStatementQuery>(&cmd.to_cmd()?).prepared_statement_handle,
            &[0u8, 1][..]
        );
        let cmd = Command::from_json(r#"{"type":"getCatalogs"}"#)?.to_cmd()?;
        assert_eq!(unpack::<CommandGetCatalogs>(&cmd), CommandGetCatalogs {});
        Ok(())
    }

    #[test]
    fn bad_commands_say_what_is_wrong() {
        let err = |json: &str| Command::from_json(json).unwrap_err().message().to_string();
        assert_eq!(
            err(r#"{"type":"statementQuery"}"#),
            "descriptor.sql is not valid: missing field `query`"
        );
        assert!(
            err(r#"{"type":"dropEverything"}"#)
                .starts_with("descriptor.sql is not valid: unknown variant `dropEverything`"),
            "{}",
            err(r#"{"type":"dropEverything"}"#)
        );
        let bad_handle = Command::PreparedStatementUpdate {
            handle: "***".into(),
        };
        assert_eq!(
            bad_handle.to_cmd().unwrap_err().message(),
            "handle must be base64: Invalid symbol 42, offset 0."
        );
    }

    #[test]
    fn put_results_become_json() -> Result<(), Status> {
        let update = DoPutUpdateResult { record_count: 7 }.encode_to_vec();
        assert_eq!(
            PutAnswer::RecordCount.to_browser(&update)?,
            br#"{"recordCount":7}"#
        );
        let handle = DoPutPreparedStatementResult {
            prepared_statement_handle: Some(vec![0, 1].into()),
        }
        .encode_to_vec();
        assert_eq!(
            PutAnswer::Handle.to_browser(&handle)?,
            br#"{"handle":"AAE="}"#
        );
        assert_eq!(PutAnswer::Opaque.to_browser(&[9])?, [9]);
        assert_eq!(
            PutAnswer::RecordCount
                .to_browser(&[0xff])
                .unwrap_err()
                .message(),
            "expected a DoPutUpdateResult from the server, found 1 bytes that do not decode: \
             failed to decode Protobuf message: invalid varint"
        );
        Ok(())
    }

    #[test]
    fn actions_round_trip() -> Result<(), Status> {
        let create = SqlAction::parse("createPreparedStatement", br#"{"query":"SELECT 1"}"#)?;
        let action = create.to_action()?;
        assert_eq!(action.r#type, "CreatePreparedStatement");
        assert_eq!(
            unpack::<ActionCreatePreparedStatementRequest>(&action.body).query,
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
        assert_eq!(
            SqlAction::parse("dropTable", b"{}").unwrap_err().message(),
            "expected action sql.createPreparedStatement, sql.closePreparedStatement or \
             sql.cancelFlightInfo, found sql.dropTable"
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
