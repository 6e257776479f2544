//! The server-to-client direction of the connection proxy: what an upstream sends on its
//! own (progress, log messages, list changes, resource updates, and its requests to the
//! client) reaches the downstream client as Server-Sent Events, in the answer to a POST or
//! on the session's GET stream, whose events carry ids (the session's [`Journal`]) so a
//! client can resume it with `Last-Event-ID`. A client that goes away ends the work
//! feeding its stream, and so the upstream request or stream.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::task::AbortOnDropHandle;

use super::journal::Journal;
use super::transport::reply;
use super::upstream::Session;

/// A message for the client, with its event id when its stream is journaled.
type Numbered = (Option<u64>, Value);

/// The sending end of a downstream client's event stream.
#[derive(Clone)]
pub struct Relay {
    sender: mpsc::Sender<Numbered>,
    /// The session whose journal numbers and keeps what is sent (the GET stream).
    journaled: Option<Arc<Session>>,
}

/// The client's stream is gone.
#[derive(Debug)]
pub struct Gone;

impl Relay {
    /// Sends `message` to the client (numbered and kept first on a journaled stream, so a
    /// client that missed it gets it when it resumes).
    pub async fn send(&self, message: Value) -> Result<(), Gone> {
        let id = self.journal().map(|journal| journal.record(&message));
        self.sender.send((id, message)).await.map_err(|_| Gone)
    }

    /// Whether what is sent is kept for a resuming client (the session's GET stream).
    pub fn is_journaled(&self) -> bool {
        self.journaled.is_some()
    }

    fn journal(&self) -> Option<&Journal> {
        let client = self.journaled.as_deref()?.client()?;
        Some(&client.journal)
    }
}

/// Messages held for a slow client before the upstream stream waits for it.
const RELAY_BUFFER: usize = 32;

/// Answers one forwarded request. `work` forwards it and returns the answer, sending what
/// the upstream sends the client before it (notifications, requests) into the relay it is
/// given; these events carry no ids (a broken answer is not resumed). When the answer
/// comes first it is a JSON reply with its status, as without relaying; once a
/// notification comes first the reply is an event stream (200) of the notifications, then
/// the answer. A client that does not accept `text/event-stream` (`streaming` false) gets
/// no relay.
pub async fn answer<F>(
    streaming: bool,
    keepalive: Duration,
    work: impl FnOnce(Option<Relay>) -> F,
) -> Response
where
    F: Future<Output = (StatusCode, Value)> + Send + 'static,
{
    if !streaming {
        let (status, body) = work(None).await;
        return reply(status, body);
    }
    let (sender, received) = mpsc::channel(RELAY_BUFFER);
    let relay = Relay {
        sender,
        journaled: None,
    };
    // The work runs inside the response (no task of its own, so no hop to another task
    // per call); a client that goes away drops the response, and so the work.
    let mut outputs = Box::pin(outputs(received, work(Some(relay))));
    let first = match outputs.next().await {
        Some(Output::Notification(message)) => message,
        Some(Output::Answer(status, body)) => return reply(status, body),
        None => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    };
    let rest = outputs.map(|output| match output {
        Output::Notification(message) | Output::Answer(_, message) => message,
    });
    sse(
        futures_util::stream::once(std::future::ready(first))
            .chain(rest)
            .map(|message| (None, message)),
        keepalive,
    )
}

/// One thing to send the client of a forwarded request.
enum Output {
    /// A message the upstream sent the client before its answer.
    Notification(Value),
    /// The answer, with its HTTP status.
    Answer(StatusCode, Value),
}

/// The notifications relayed by `work`, then its answer. The notifications it sent before
/// its answer are all delivered: the channel is closed when it ends and drained, so no
/// sender kept elsewhere holds the stream open.
fn outputs<F>(received: mpsc::Receiver<Numbered>, work: F) -> impl Stream<Item = Output>
where
    F: Future<Output = (StatusCode, Value)> + Send + 'static,
{
    let state = (received, Some(Box::pin(work)), None);
    futures_util::stream::unfold(state, |(mut received, mut work, mut answer)| async move {
        if let Some(running) = work.as_mut() {
            tokio::select! {
                biased;
                Some((_, message)) = received.recv() => {
                    return Some((Output::Notification(message), (received, work, answer)));
                }
                done = running => {
                    answer = Some(done);
                    work = None;
                    received.close();
                }
            }
        }
        if let Some((_, message)) = received.recv().await {
            return Some((Output::Notification(message), (received, work, answer)));
        }
        let (status, body) = answer.take()?;
        Some((Output::Answer(status, body), (received, work, answer)))
    })
}

/// The GET stream of `session`: first `replay` (journaled events a resuming client missed),
/// then what `pump` sends into the relay it is given (numbered in the session's journal)
/// until it returns, which ends the stream; a client that goes away ends `pump`.
pub fn stream<F>(
    keepalive: Duration,
    session: Arc<Session>,
    replay: Vec<(u64, Value)>,
    pump: impl FnOnce(Relay) -> F,
) -> Response
where
    F: Future<Output = ()> + Send + 'static,
{
    let (sender, received) = mpsc::channel(RELAY_BUFFER);
    let relay = Relay {
        sender,
        journaled: Some(session),
    };
    let task = AbortOnDropHandle::new(tokio::spawn(pump(relay)));
    let replayed = replay.into_iter().map(|(id, message)| (Some(id), message));
    let messages = futures_util::stream::iter(replayed)
        .chain(ReceiverStream::new(received))
        .chain(
            // Holding the task here ties it to the response body.
            futures_util::stream::once(async move { drop(task) })
                .filter_map(|()| std::future::ready(None)),
        );
    sse(messages, keepalive)
}

/// An event stream of JSON-RPC messages (`event: message`, with their `id` when numbered),
/// with keep-alive comments.
fn sse(messages: impl Stream<Item = Numbered> + Send + 'static, keepalive: Duration) -> Response {
    let events = messages.map(|(id, message)| {
        let event = Event::default().event("message").data(message.to_string());
        Ok::<_, std::convert::Infallible>(match id {
            Some(id) => event.id(id.to_string()),
            None => event,
        })
    });
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(keepalive))
        .into_response();
    let headers = response.headers_mut();
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
