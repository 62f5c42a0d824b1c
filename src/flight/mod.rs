//! The Flight-over-WebSocket wire protocol: frames and stream states (pure Rust).
