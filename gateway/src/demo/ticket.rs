//! Demo tickets: `key=value` pairs joined by `&`, parsed into what to generate or which
//! upload to replay, and written back for the endpoints of a FlightInfo.

use arrow_ipc::CompressionType;

use super::Generated;

/// Largest rows per batch (about 100 MB), batches per stream and part a demo ticket may
/// ask for; with these, every id fits in an i64.
const MAX_ROWS: usize = 1 << 22;
const MAX_BATCHES: usize = 1 << 20;
const MAX_PARTS: usize = 1 << 10;

/// What a `cmd` descriptor asks of GetFlightInfo and PollFlightInfo besides its ticket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// Endpoints, one per part.
    pub partitions: usize,
    /// PollFlightInfo: the poll that finds the query complete (0 or 1: the first).
    pub polls: usize,
    /// PollFlightInfo: the polls answered so far, which the retry descriptor carries.
    pub polled: usize,
}

/// What a ticket asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum DemoTicket {
    Generated(Generated),
    Put(String),
}

impl DemoTicket {
    /// Parses `key=value&...`; also returns what it asks of GetFlightInfo and
    /// PollFlightInfo.
    pub fn parse(bytes: &[u8]) -> Result<(Self, Plan), String> {
        let text =
            std::str::from_utf8(bytes).map_err(|_| "demo ticket must be UTF-8".to_string())?;
        let mut g = Generated {
            rows: 65536,
            batches: 16,
            compression: None,
            part: 0,
        };
        let mut plan = Plan {
            partitions: 1,
            polls: 1,
            polled: 0,
        };
        for pair in text.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("expected key=value in demo ticket, found {pair:?}"))?;
            let number = |max: usize| -> Result<usize, String> {
                match value.parse::<usize>() {
                    Ok(n) if n <= max => Ok(n),
                    _ => Err(format!(
                        "{key} must be an integer up to {max}, found {value:?}"
                    )),
                }
            };
            match key {
                "put" => return Ok((DemoTicket::Put(value.to_string()), plan)),
                "rows" => g.rows = number(MAX_ROWS)?,
                "batches" => g.batches = number(MAX_BATCHES)?,
                "part" => g.part = number(MAX_PARTS)? as u64,
                "partitions" => plan.partitions = number(MAX_PARTS)?.max(1),
                "polls" => plan.polls = number(MAX_PARTS)?,
                "polled" => plan.polled = number(MAX_PARTS)?,
                "compression" => {
                    g.compression = match value {
                        "none" => None,
                        "lz4" => Some(CompressionType::LZ4_FRAME),
                        "zstd" => Some(CompressionType::ZSTD),
                        _ => {
                            return Err(format!(
                                "compression must be none, lz4 or zstd, found {value:?}"
                            ))
                        }
                    }
                }
                _ => return Err(format!("unknown demo ticket key {key:?}")),
            }
        }
        Ok((DemoTicket::Generated(g), plan))
    }
}

impl Generated {
    /// The ticket that asks for this part.
    pub(super) fn to_ticket(&self) -> String {
        let c = match self.compression {
            Some(CompressionType::LZ4_FRAME) => "lz4",
            Some(_) => "zstd",
            None => "none",
        };
        format!(
            "rows={}&batches={}&compression={c}&part={}",
            self.rows, self.batches, self.part
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets() {
        let (t, p) = DemoTicket::parse(b"rows=10&batches=2&compression=lz4&partitions=3").unwrap();
        assert_eq!(p.partitions, 3);
        let (_, p) = DemoTicket::parse(b"partitions=4&polls=3&polled=1").unwrap();
        assert_eq!((p.partitions, p.polls, p.polled), (4, 3, 1));
        let DemoTicket::Generated(g) = t else {
            panic!("generated")
        };
        assert_eq!(
            (g.rows, g.batches, g.compression),
            (10, 2, Some(CompressionType::LZ4_FRAME))
        );
        assert_eq!(g.to_ticket(), "rows=10&batches=2&compression=lz4&part=0");
        assert_eq!(
            DemoTicket::parse(b"put=x").unwrap().0,
            DemoTicket::Put("x".into())
        );
        assert_eq!(
            DemoTicket::parse(b"rows=ten").unwrap_err(),
            "rows must be an integer up to 4194304, found \"ten\""
        );
        assert_eq!(
            DemoTicket::parse(b"compression=gzip").unwrap_err(),
            "compression must be none, lz4 or zstd, found \"gzip\""
        );
        assert_eq!(
            DemoTicket::parse(b"color=red").unwrap_err(),
            "unknown demo ticket key \"color\""
        );
        assert_eq!(
            DemoTicket::parse(&[0xFF]).unwrap_err(),
            "demo ticket must be UTF-8"
        );
    }
}
