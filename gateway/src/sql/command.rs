//! Flight SQL commands: a `sql` descriptor's JSON, packed as the `Command*` message it
//! names, and what a DoPut to it answers.

use arrow_flight::sql::{
    CommandGetCatalogs, CommandGetDbSchemas, CommandGetPrimaryKeys, CommandGetSqlInfo,
    CommandGetTableTypes, CommandGetTables, CommandPreparedStatementQuery,
    CommandPreparedStatementUpdate, CommandStatementQuery, CommandStatementUpdate,
    DoPutPreparedStatementResult, DoPutUpdateResult, ProstMessageExt,
};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use prost::Message;
use serde::Deserialize;
use serde_json::json;
use tonic::Status;

use super::{decode, from_base64};

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
    // Struct variants, not unit ones: serde skips a unit variant's other fields unseen,
    // deny_unknown_fields or not.
    GetCatalogs {},
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
    GetTableTypes {},
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
            GetCatalogs {} => CommandGetCatalogs {}.as_any(),
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
            GetTableTypes {} => CommandGetTableTypes {}.as_any(),
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
                let r = decode::<DoPutUpdateResult>(app_metadata, "a DoPutUpdateResult")?;
                json!({ "recordCount": r.record_count })
            }
            PutAnswer::Handle => {
                let r = decode::<DoPutPreparedStatementResult>(
                    app_metadata,
                    "a DoPutPreparedStatementResult",
                )?;
                json!({ "handle": r.prepared_statement_handle.map(|h| STANDARD.encode(h)) })
            }
        };
        Ok(json.to_string().into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::unpack;

    #[test]
    fn commands_pack_their_fields() -> Result<(), Status> {
        let cmd = Command::from_json(
            r#"{"type":"getTables","catalog":"c","tableNameFilterPattern":"t%","tableTypes":["VIEW"],"includeSchema":true}"#,
        )?
        .to_cmd()?;
        assert_eq!(
            unpack::<CommandGetTables>(&cmd, "a CommandGetTables")?,
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
            unpack::<CommandPreparedStatementQuery>(
                &cmd.to_cmd()?,
                "a CommandPreparedStatementQuery"
            )?
            .prepared_statement_handle,
            &[0u8, 1][..]
        );
        let cmd = Command::from_json(r#"{"type":"getCatalogs"}"#)?.to_cmd()?;
        assert_eq!(
            unpack::<CommandGetCatalogs>(&cmd, "a CommandGetCatalogs")?,
            CommandGetCatalogs {}
        );
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
        for json in [
            r#"{"type":"getCatalogs","catalog":"x"}"#,
            r#"{"type":"getTableTypes","tableTypes":["VIEW"]}"#,
        ] {
            assert!(
                err(json).starts_with("descriptor.sql is not valid: unknown field"),
                "{}",
                err(json)
            );
        }
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
}
