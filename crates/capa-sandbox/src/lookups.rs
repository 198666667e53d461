//! The hub's lookups from inside code — `hub.search`, `hub.describe`, `hub.read` and
//! `hub.resource` — bounded by the upstream timeout and answered as one event each; first polled
//! on the sandbox's thread, then on the hub's runtime if they wait (`State::drive_started`).

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::Sender;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use crate::events::{Event, failure_json, refusal};
use crate::{Host, ToolFailure};

/// One lookup, as the guest asked it (arguments checked).
#[derive(Debug)]
pub(crate) enum Lookup {
    Search(String),
    Describe(Vec<String>),
    /// A piece of a kept result: the handle and the options' JSON, checked by the host.
    Read {
        handle: String,
        options: String,
    },
    /// A resource of the sources, by URI.
    Resource(String),
}

impl Lookup {
    /// The guest's name of the lookup, for errors.
    pub(crate) fn address(&self) -> &'static str {
        match self {
            Self::Search(_) => "hub.search",
            Self::Describe(_) => "hub.describe",
            Self::Read { .. } => "hub.read",
            Self::Resource(_) => "hub.resource",
        }
    }

    /// The lookup's work: its outcome arrives on `events` as operation `seq`. A panicking host
    /// is a failed lookup.
    pub(crate) fn work(
        self,
        host: &dyn Host,
        seq: usize,
        events: Sender<Event>,
        timeout: Duration,
    ) -> BoxFuture<'static, ()> {
        let address = self.address();
        let answer: BoxFuture<'static, Result<Value, ToolFailure>> = match self {
            Self::Search(query) => Box::pin(host.search(query).map(|r| r.map(Value::String))),
            Self::Describe(targets) => {
                Box::pin(host.describe(targets).map(|r| r.map(Value::String)))
            }
            Self::Read { handle, options } => host.read(handle, options),
            Self::Resource(uri) => host.resource(uri),
        };
        Box::pin(async move {
            let answer = AssertUnwindSafe(answer).catch_unwind();
            let outcome = tokio::time::timeout(timeout, answer)
                .await
                .map(|r| r.unwrap_or_else(|_| Err(ToolFailure::new("internal", "lookup failed"))));
            let _ = events.send(event(seq, outcome, address));
        })
    }
}

fn event(
    seq: usize,
    outcome: Result<Result<Value, ToolFailure>, tokio::time::error::Elapsed>,
    address: &str,
) -> Event {
    let (ok, payload) = match outcome {
        Ok(Ok(value)) => (
            true,
            serde_json::to_string(&value).unwrap_or_else(|_| "null".into()),
        ),
        Ok(Err(f)) => (false, failure_json(&f, address)),
        Err(_) => (
            false,
            refusal(
                "upstream_timeout",
                format!("{address} did not answer in time"),
                None,
                address,
            ),
        ),
    };
    Event::Done {
        seq,
        ok,
        payload,
        ms: 0,
    }
}
