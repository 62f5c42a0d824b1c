//! What every connection shares: the configuration, the upstream allow-list and the
//! memory budget.

use std::io;
use std::sync::Arc;

use crate::budget::Budget;
use crate::config::Config;
use crate::upstream::Upstreams;

pub(crate) struct Shared {
    pub config: Config,
    pub upstreams: Upstreams,
    pub budget: Arc<Budget>,
}

impl Shared {
    pub fn new(config: Config) -> io::Result<Self> {
        Ok(Shared {
            upstreams: Upstreams::new(&config)?,
            budget: Budget::new(config.buffer_budget),
            config,
        })
    }
}
