//! The origin `sitefile serve --origin URL` sits in front of: requests forwarded to it, and each
//! resolution round's loaders sent to it as one batch invoke. Bounded: a connect timeout, a
//! total timeout per request, and a cap on the bytes read from an answer.

use super::header_text;
use axum::body::Bytes;
use axum::http::Method;
use sitefile_core::{InvokeCall, InvokeResult, LoaderCall, Value, batch_body, read_batch_answer};
use std::time::Duration;

/// How long connecting to the origin may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one origin request may take to answer its head (and, when read whole, its body).
const TOTAL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a streamed answer may go without a byte.
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The most bytes read from one origin answer (and sent in one forwarded request body).
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Headers that belong to one connection, never forwarded either way (RFC 9110 §7.6.1), plus
/// the ones the client library writes itself.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "host",
];

/// A request to forward: what the visitor sent, headers as the edge left them.
#[derive(Debug, Clone)]
pub struct OriginRequest {
    /// The method.
    pub method: Method,
    /// The path and query.
    pub target: String,
    /// The visitor's `Host`, sent on as `X-Forwarded-Host`.
    pub host: Option<String>,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}

/// An origin answer whose head arrived and whose body streams.
pub struct Opened {
    /// The status code.
    pub status: u16,
    /// Every header but the hop-by-hop ones, in order.
    pub headers: Vec<(String, String)>,
    /// The body, as it arrives.
    pub body: reqwest::Body,
}

/// A response read whole: what the origin answered, or what the edge answers.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Every header but the hop-by-hop ones, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}

/// An origin and the client that reaches it.
#[derive(Debug, Clone)]
pub struct Origin {
    base: String,
    client: reqwest::Client,
    log_fetches: bool,
}

impl Origin {
    /// The origin at `url` (`http://` or `https://`, no query); the message names what is wrong.
    pub fn new(url: &str) -> Result<Origin, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("--origin {url}: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.query().is_some() {
            return Err(format!(
                "--origin {url}: an http:// or https:// URL without a query"
            ));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("--origin {url}: {e}"))?;
        Ok(Origin {
            base: parsed.as_str().trim_end_matches('/').to_string(),
            client,
            log_fetches: false,
        })
    }

    /// Logs every request to the origin (`OTEL_LOG_OUTGOING_FETCH=true`): method, URL, status
    /// and duration; never a header or a body.
    pub fn logging_fetches(self, log_fetches: bool) -> Origin {
        Origin {
            log_fetches,
            ..self
        }
    }

    /// The origin's URL.
    pub fn url(&self) -> &str {
        &self.base
    }

    /// The outgoing request for `request`.
    fn outgoing(&self, request: &OriginRequest) -> reqwest::RequestBuilder {
        let mut outgoing = self
            .client
            .request(
                request.method.clone(),
                format!("{}{}", self.base, request.target),
            )
            .body(request.body.clone());
        for (name, value) in &request.headers {
            // Asked for identity bodies: a stored copy serves every visitor, whatever encodings
            // each accepts.
            if !is_hop_by_hop(name)
                && !name.eq_ignore_ascii_case("accept-encoding")
                && let Some(value) = header_text::write(value)
            {
                outgoing = outgoing.header(name.as_str(), value);
            }
        }
        if let Some(host) = &request.host {
            outgoing = outgoing.header("x-forwarded-host", host.as_str());
        }
        outgoing
    }

    /// Forwards `request` and reads the answer whole; an unreachable origin, a timeout or an
    /// answer over the size cap is an error naming it.
    pub async fn forward(&self, request: &OriginRequest) -> Result<Reply, String> {
        self.send(self.outgoing(request)).await
    }

    /// Forwards `request` and returns once the answer's head arrived, its body streaming; an
    /// unreachable origin or one that does not answer within the timeout is an error naming it.
    pub async fn open(&self, request: &OriginRequest) -> Result<Opened, String> {
        let response = self.execute(self.outgoing(request)).await?;
        let status = response.status().as_u16();
        let mut headers = header_text::pairs(response.headers());
        headers.retain(|(name, _)| !is_hop_by_hop(name));
        let body = axum::http::Response::<reqwest::Body>::from(response).into_body();
        Ok(Opened {
            status,
            headers,
            body,
        })
    }

    /// Runs `calls` on the origin as one batch invoke (`POST /platform/invoke`): one result per
    /// call, or why the whole batch failed.
    pub async fn invoke(&self, calls: &[InvokeCall]) -> Result<Vec<InvokeResult>, String> {
        let request = self
            .client
            .post(format!("{}/platform/invoke", self.base))
            .header("content-type", "application/json")
            .body(batch_body(calls));
        let reply = self.send(request).await?;
        if reply.status != 200 {
            return Err(format!(
                "the origin answered the batch invoke with status {}",
                reply.status
            ));
        }
        read_batch_answer(calls, &reply.body)
    }

    /// One resolution round's loaders, run on the origin as one batch: each call's value or
    /// error, in order; a failed batch fails every call with its reason.
    pub async fn run_loaders(&self, calls: &[LoaderCall]) -> Vec<Result<Value, String>> {
        let batch: Vec<InvokeCall> = calls
            .iter()
            .map(|call| InvokeCall {
                alias: call.id.to_string(),
                key: call.key.clone(),
                props: call.props.clone(),
            })
            .collect();
        match self.invoke(&batch).await {
            Ok(results) => results
                .into_iter()
                .zip(calls)
                .map(|(result, call)| result.into_loader_result(&call.key))
                .collect(),
            Err(why) => calls
                .iter()
                .map(|call| Err(format!("the loader {} did not run: {why}", call.key)))
                .collect(),
        }
    }

    /// Sends `request` and waits for the answer's head, at most [`TOTAL_TIMEOUT`].
    async fn execute(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, String> {
        let request = request
            .build()
            .map_err(|e| format!("the request to the origin {} is invalid: {e}", self.base))?;
        let (method, url) = (request.method().clone(), request.url().clone());
        let started = std::time::Instant::now();
        let sent = tokio::time::timeout(TOTAL_TIMEOUT, self.client.execute(request)).await;
        if self.log_fetches {
            let status = match &sent {
                Ok(Ok(r)) => r.status().as_u16(),
                _ => 0,
            };
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            tracing::info!(%method, %url, status, ms, "outgoing fetch");
        }
        let why = match sent {
            Ok(Ok(response)) => return Ok(response),
            Ok(Err(e)) => format!("the origin {} could not be reached: {e}", self.base),
            Err(_) => format!(
                "the origin {} did not answer within {} s",
                self.base,
                TOTAL_TIMEOUT.as_secs()
            ),
        };
        tracing::warn!("{why}");
        Err(why)
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Reply, String> {
        let read = async {
            let mut response = self.execute(request).await?;
            let status = response.status().as_u16();
            let mut headers = header_text::pairs(response.headers());
            headers.retain(|(name, _)| !is_hop_by_hop(name));
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| format!("the origin's answer could not be read: {e}"))?
            {
                if body.len() + chunk.len() > MAX_BODY_BYTES {
                    return Err(format!(
                        "the origin's answer is larger than {MAX_BODY_BYTES} bytes"
                    ));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Reply {
                status,
                headers,
                body: Bytes::from(body),
            })
        };
        tokio::time::timeout(TOTAL_TIMEOUT, read)
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "the origin {} did not answer within {} s",
                    self.base,
                    TOTAL_TIMEOUT.as_secs()
                ))
            })
    }
}

/// Whether `name` is a header never forwarded (see [`HOP_BY_HOP`]).
pub fn is_hop_by_hop(name: &str) -> bool {
    HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h))
}
