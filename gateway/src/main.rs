//! `quiver-gateway`: bridges browser WebSockets to Arrow Flight gRPC servers.
//! See `docs/protocol.md` for the wire protocol and `--help` for the options.

use std::process::ExitCode;

use clap::Parser;

/// glibc's malloc kept 18 of 35 MiB that starved connections had held after they closed
/// (`tests/budget.rs`). jemalloc gives freed pages back to the system: a background
/// thread purges pages unused for a second, straight to the system (no lazy `MADV_FREE`
/// stage, whose pages would still count as resident).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8] = b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

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
