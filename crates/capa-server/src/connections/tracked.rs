//! A response body that keeps its request counted as in flight until the body is sent whole or
//! dropped: an MCP event stream or a long answer is work, not an idle connection.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};

use super::book::Busy;

/// [`Body`] with the [`Busy`] mark of its request.
#[derive(Debug)]
pub(crate) struct Tracked {
    body: Body,
    _busy: Busy,
}

impl Tracked {
    pub(crate) fn new(body: Body, busy: Busy) -> Self {
        Self { body, _busy: busy }
    }
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
