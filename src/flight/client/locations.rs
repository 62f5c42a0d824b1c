//! An endpoint's locations, tried in order. Flight lists the places that each serve an
//! endpoint's ticket; when one cannot be read before any byte of its stream arrived, the
//! next is asked. The gateway dials only the locations it allows, and refuses the others
//! with PERMISSION_DENIED naming them, so trying the next one never reaches a host
//! outside its `--allow-location` list.

use super::status::{Failure, PERMISSION_DENIED, UNAVAILABLE};
use crate::flight::control::code_name;

/// Where a DoGet reads its ticket, and why the places it tried before failed.
#[derive(Debug)]
pub struct Locations {
    /// Empty: the gateway's upstream.
    list: Vec<String>,
    /// Why each location before the one being read failed, in order.
    failures: Vec<Failure>,
}

impl Locations {
    pub fn new(list: Vec<String>) -> Self {
        Locations {
            list,
            failures: Vec::new(),
        }
    }

    /// The location being read (none: the gateway's upstream).
    pub fn current(&self) -> Option<&String> {
        self.list.get(self.failures.len())
    }

    /// The read at the current location failed with `failure`; `nothing_arrived` if no
    /// byte of its stream did. Returns the next location to read, or the failure the
    /// stream ends with.
    ///
    /// Only a location that could not be reached (UNAVAILABLE) or that the gateway
    /// refused (PERMISSION_DENIED) is passed over: any other failure is the server's
    /// answer, and once bytes arrived, reading again elsewhere would repeat batches.
    pub fn next(&mut self, failure: Failure, nothing_arrived: bool) -> Result<String, Failure> {
        let passed_over =
            nothing_arrived && matches!(failure.code, UNAVAILABLE | PERMISSION_DENIED);
        match self.list.get(self.failures.len() + 1) {
            Some(next) if passed_over => {
                let next = next.clone();
                self.failures.push(failure);
                Ok(next)
            }
            _ => Err(self.with_earlier(failure)),
        }
    }

    /// `last`, or, if other locations were tried before, a failure that names each
    /// location and why it failed, with `last`'s code and details.
    fn with_earlier(&self, last: Failure) -> Failure {
        if self.failures.is_empty() {
            return last;
        }
        let each: Vec<String> = self
            .list
            .iter()
            .zip(self.failures.iter().chain([&last]))
            .map(|(location, f)| format!("{location}: {} {}", code_name(f.code), f.message))
            .collect();
        Failure {
            code: last.code,
            message: format!(
                "{} of the endpoint's {} locations failed: {}",
                each.len(),
                self.list.len(),
                each.join("; ")
            ),
            details: last.details,
        }
    }
}
