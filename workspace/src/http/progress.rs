//! How [`super::serve`] sees where a connection is between requests without reaching into
//! hyper: its socket's reads (head bytes while waiting) and the end of each answer's body
//! (waiting for the next head from then on).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::slots::Tracked;

/// Marks its connection waiting for the next head when dropped: hyper drops an answer's body
/// once it has written its end (or gave up on it).
struct AnswerSent(Arc<Tracked>);

impl Drop for AnswerSent {
    fn drop(&mut self) {
        self.0.waiting();
    }
}

/// An answer's body, and what its end means for its connection.
pub(super) struct Guarded {
    body: Body,
    _sent: AnswerSent,
}

impl Guarded {
    /// `body`, an answer on `connection`.
    pub(super) fn new(body: Body, connection: Arc<Tracked>) -> Guarded {
        Guarded {
            body,
            _sent: AnswerSent(connection),
        }
    }
}

impl HttpBody for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A connection's socket, noting the bytes that come while it waits for a head.
pub(super) struct Watched {
    stream: TcpStream,
    tracked: Arc<Tracked>,
}

impl Watched {
    /// `stream`, the socket of `connection`.
    pub(super) fn new(stream: TcpStream, connection: Arc<Tracked>) -> Watched {
        Watched {
            stream,
            tracked: connection,
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.tracked.read_some();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
