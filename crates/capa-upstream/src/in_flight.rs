//! The requests the hub sent on one line connection that have no answer yet.
//!
//! [`crate::bounded::BoundedLines`] answers a call itself when the server's answer is a line
//! rmcp will drop (too large, too deep), using the id it read from that line. When it could not
//! read the id (longer than it keeps, not a number or a string, or the line ended inside it), the
//! answer can still only be for a request the hub sent: if exactly one is waiting, it is that one.

use std::sync::{Arc, Mutex};

use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId};

/// Requests tracked at once. The hub has at most a few dozen calls in flight per source; past
/// this many (requests that were never answered nor cancelled) tracking stops for the
/// connection, and an unreadable id is then never guessed.
const MAX_TRACKED: usize = 1024;

/// Shared by a connection's writer (which adds what it sends) and its reader (which removes
/// what is answered).
#[derive(Debug, Clone, Default)]
pub(crate) struct InFlight(Arc<Mutex<Ids>>);

#[derive(Debug, Default)]
struct Ids {
    /// Each request's id as JSON (`7`, `"a"`), as rmcp sends it.
    ids: Vec<String>,
    /// More requests were sent than are tracked: which ones wait is no longer known.
    untracked: bool,
}

impl InFlight {
    /// Notes a message the hub is sending: a request now waits for its answer; a cancellation
    /// means its request's answer will not be waited for.
    pub(crate) fn sent(&self, message: &ClientJsonRpcMessage) {
        match message {
            JsonRpcMessage::Request(request) => self.with(|ids| {
                if ids.ids.len() >= MAX_TRACKED {
                    ids.untracked = true;
                } else {
                    ids.ids.push(json_id(&request.id));
                }
            }),
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    let id = json_id(id);
                    self.with(|ids| ids.remove(&id));
                }
            }
            _ => {}
        }
    }

    /// The server answered the request with this id (raw JSON from its line).
    pub(crate) fn answered(&self, raw_id: &[u8]) {
        let id = String::from_utf8_lossy(raw_id);
        self.with(|ids| ids.remove(&id));
    }

    /// The id of the one request waiting, taken out; `None` when none or several wait.
    pub(crate) fn take_sole(&self) -> Option<String> {
        let mut sole = None;
        self.with(|ids| {
            if !ids.untracked && ids.ids.len() == 1 {
                sole = ids.ids.pop();
            }
        });
        sole
    }

    fn with(&self, f: impl FnOnce(&mut Ids)) {
        // A poisoned lock only means another thread panicked mid-update of a list of ids; the
        // worst a stale list does is leave an unreadable id unguessed.
        let mut ids = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut ids);
    }
}

impl Ids {
    /// rmcp matches a numeric request id to the same number sent back as a string, so ids are
    /// compared without their quotes.
    fn remove(&mut self, id: &str) {
        let key = unquoted(id);
        if let Some(at) = self.ids.iter().position(|known| unquoted(known) == key) {
            self.ids.swap_remove(at);
        }
    }
}

fn unquoted(id: &str) -> &str {
    id.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(id)
}

fn json_id(id: &RequestId) -> String {
    id.clone().into_json_value().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{
        CancelledNotification, CancelledNotificationParam, ClientRequest, NumberOrString,
        PingRequest,
    };

    fn request(id: i64) -> ClientJsonRpcMessage {
        JsonRpcMessage::request(
            ClientRequest::PingRequest(PingRequest::default()),
            NumberOrString::Number(id),
        )
    }

    #[test]
    fn the_sole_waiting_request_is_known_and_several_are_not_guessed() {
        let in_flight = InFlight::default();
        assert_eq!(in_flight.take_sole(), None);
        in_flight.sent(&request(3));
        in_flight.sent(&request(4));
        assert_eq!(in_flight.take_sole(), None);
        // Answered as a string: rmcp takes `"3"` for 3, and so does this.
        in_flight.answered(b"\"3\"");
        assert_eq!(in_flight.take_sole().as_deref(), Some("4"));
        assert_eq!(in_flight.take_sole(), None);
    }

    #[test]
    fn a_cancelled_request_waits_no_more() {
        let in_flight = InFlight::default();
        in_flight.sent(&request(5));
        in_flight.sent(&request(6));
        let params = CancelledNotificationParam::new(Some(NumberOrString::Number(5)), None);
        let cancelled = JsonRpcMessage::notification(ClientNotification::CancelledNotification(
            CancelledNotification::new(params),
        ));
        in_flight.sent(&cancelled);
        assert_eq!(in_flight.take_sole().as_deref(), Some("6"));
    }
}
