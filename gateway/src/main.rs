//! `quiver-gateway`: bridges browser WebSockets to Arrow Flight gRPC servers.
//! See `docs/protocol.md` for the wire protocol and `--help` for the options.

use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    let args = quiver_gateway::config::Args::parse();
    match quiver_gateway::run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quiver-gateway: {e}");
            ExitCode::FAILURE
        }
    }
}
