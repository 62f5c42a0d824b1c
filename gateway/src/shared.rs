//! What every connection shares: the configuration and the upstream allow-list.

use crate::config::Config;
use crate::upstream::Upstreams;

pub(crate) struct Shared {
    pub config: Config,
    pub upstreams: Upstreams,
}

impl Shared {
    pub fn new(config: Config) -> Self {
        Shared {
            upstreams: Upstreams::new(&config),
            config,
        }
    }
}
