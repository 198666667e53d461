//! rmcp's line transport as the hub uses it for a child's pipes and the built-in demo's: what
//! comes in is read through [`BoundedLines`]; what goes out is recorded in [`InFlight`], and,
//! when the server's own limit is known, a request over it is not sent but answered at once.

use std::collections::VecDeque;

use capa_domain::json_size::json_len;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::bounded::{BoundedLines, TOO_LARGE_MARKER, marker_token};
use crate::in_flight::InFlight;
use crate::limits::MAX_MESSAGE_BYTES;

pub(crate) struct LineTransport<R: AsyncRead + Unpin, W: AsyncWrite> {
    inner: AsyncRwTransport<RoleClient, BoundedLines<R>, W>,
    in_flight: InFlight,
    /// The longest line the server reads, when the hub knows it (its own in-process servers).
    max_request: Option<usize>,
    /// Answers to requests that were not sent, handed to rmcp before anything read.
    refused: VecDeque<RxJsonRpcMessage<RoleClient>>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Lines from `read` are bounded by [`MAX_MESSAGE_BYTES`]; requests longer than
    /// `max_request` (its newline counted) are refused rather than written to `write`.
    pub(crate) fn new(read: R, write: W, max_request: Option<usize>) -> Self {
        let in_flight = InFlight::default();
        // rmcp drops lines over its cap without buffering them; `BoundedLines` uses the same
        // cap to know which lines those are and answers the call they belonged to.
        let inner = AsyncRwTransport::new_client(
            BoundedLines::new(read, MAX_MESSAGE_BYTES, in_flight.clone()),
            write,
        )
        .with_max_line_length(MAX_MESSAGE_BYTES);
        Self {
            inner,
            in_flight,
            max_request,
            refused: VecDeque::new(),
        }
    }

    /// The error answer to a request of `bytes` that the server would drop unread: marked as
    /// the hub's own, so that the call fails at once with `arguments_too_large`.
    fn refusal(
        id: rmcp::model::RequestId,
        bytes: usize,
        limit: usize,
    ) -> RxJsonRpcMessage<RoleClient> {
        tracing::warn!(
            bytes,
            limit,
            "a request is larger than the built-in server reads; not sent, the call fails"
        );
        let data =
            serde_json::json!({TOO_LARGE_MARKER: marker_token(), "sent": bytes, "limit": limit});
        JsonRpcMessage::error(
            ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                format!("request of {bytes} bytes is over the server's limit of {limit} bytes"),
                Some(data),
            ),
            Some(id),
        )
    }
}

impl<R, W> Transport<RoleClient> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let too_large = match (&item, self.max_request) {
            (JsonRpcMessage::Request(request), Some(limit)) => {
                // As rmcp's codec writes it: compact JSON and a newline.
                let bytes = json_len(&item).saturating_add(1);
                (bytes > limit).then(|| (request.id.clone(), bytes, limit))
            }
            _ => None,
        };
        let send = if let Some((id, bytes, limit)) = too_large {
            self.refused.push_back(Self::refusal(id, bytes, limit));
            None
        } else {
            self.in_flight.sent(&item);
            Some(self.inner.send(item))
        };
        async move {
            match send {
                Some(send) => send.await,
                None => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        // Taken when polled, not when the future is made: rmcp may drop a `receive` it never
        // polled (a `select!` with another branch ready).
        if let Some(refused) = self.refused.pop_front() {
            return Some(refused);
        }
        self.inner.receive().await
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
