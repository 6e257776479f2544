//! Connection workers: one thread per core, each running its own single-threaded runtime, each
//! serving the connections handed to it from start to end (nginx's worker processes, Envoy's
//! workers). A connection's requests never hop between threads, so a cache hit costs no
//! cross-thread wake-up or work stealing; a new connection goes to the worker serving the
//! fewest. What a request spawns (a background refresh, an agent run) runs on its worker.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// A connection's service, started on the worker's runtime with the stream registered there.
pub type Serving = Box<dyn FnOnce(TcpStream) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// A connection handed to a worker.
struct Handed {
    stream: std::net::TcpStream,
    serving: Serving,
    open: Open,
}

/// A connection counted open on its worker until this is dropped (the connection ended, was
/// dropped with the worker's runtime, or never reached it).
struct Open(Arc<AtomicUsize>);

impl Open {
    fn count(open: &Arc<AtomicUsize>) -> Open {
        open.fetch_add(1, Ordering::Relaxed);
        Open(open.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

struct Worker {
    connections: mpsc::UnboundedSender<Handed>,
    open: Arc<AtomicUsize>,
}

/// The workers of one server. Dropping them lets each worker finish (its runtime, and what
/// still runs on it, is dropped once no connection can be handed to it).
pub struct Workers {
    workers: Vec<Worker>,
}

impl Workers {
    /// One worker per core this process may use (those that could not be started are logged;
    /// without any, connections are served on the caller's runtime).
    pub fn start() -> Workers {
        let count = std::thread::available_parallelism().map_or(1, |n| n.get());
        let workers = (0..count)
            .filter_map(|index| match Worker::start(index) {
                Ok(worker) => Some(worker),
                Err(error) => {
                    tracing::warn!(%error, "a connection worker could not be started");
                    None
                }
            })
            .collect();
        Workers { workers }
    }

    /// Hands `stream` to the worker with the fewest open connections, which runs `serving` on
    /// it until it ends. A stream that cannot leave this runtime is served here instead.
    pub fn hand(&self, stream: TcpStream, serving: Serving) {
        let Some(worker) = self
            .workers
            .iter()
            .min_by_key(|w| w.open.load(Ordering::Relaxed))
        else {
            tokio::spawn(serving(stream));
            return;
        };
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(error) => {
                tracing::debug!(%error, "connection not handed to a worker");
                return;
            }
        };
        let open = Open::count(&worker.open);
        if let Err(mpsc::error::SendError(handed)) = worker.connections.send(Handed {
            stream,
            serving,
            open,
        }) {
            // The worker is gone (its thread panicked): this runtime serves the connection.
            if let Ok(stream) = TcpStream::from_std(handed.stream) {
                tokio::spawn((handed.serving)(stream));
            }
        }
    }
}

impl Worker {
    fn start(index: usize) -> std::io::Result<Worker> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (connections, mut handed) = mpsc::unbounded_channel::<Handed>();
        let open = Arc::new(AtomicUsize::new(0));
        std::thread::Builder::new()
            .name(format!("sitefile-worker-{index}"))
            .spawn(move || {
                runtime.block_on(async move {
                    while let Some(Handed {
                        stream,
                        serving,
                        open,
                    }) = handed.recv().await
                    {
                        match TcpStream::from_std(stream) {
                            Ok(stream) => {
                                tokio::spawn(async move {
                                    serving(stream).await;
                                    drop(open);
                                });
                            }
                            Err(error) => tracing::debug!(%error, "connection not registered"),
                        }
                    }
                });
                // What still runs here (a connection past the shutdown deadline) is dropped.
                runtime.shutdown_background();
            })?;
        Ok(Worker { connections, open })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;
    use tokio::net::TcpListener;
    use tokio::sync::watch;

    #[tokio::test]
    async fn connections_are_served_on_worker_threads_the_least_busy_first() {
        let workers = Workers::start();
        let count = workers.workers.len();
        assert!(count >= 1, "one worker per core");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let served: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let (release, released) = watch::channel(false);
        let mut clients = Vec::new();
        for _ in 0..count * 3 {
            clients.push(TcpStream::connect(address).await.unwrap());
            let (stream, _) = listener.accept().await.unwrap();
            let (served, mut released) = (served.clone(), released.clone());
            let (started, mut start) = watch::channel(false);
            workers.hand(
                stream,
                Box::new(move |_stream| {
                    Box::pin(async move {
                        let thread = std::thread::current().name().map(str::to_string);
                        *served.lock().unwrap().entry(thread.unwrap()).or_default() += 1;
                        started.send_replace(true);
                        // Held open until released: each worker's count stays as handed.
                        let _ = released.wait_for(|r| *r).await;
                    })
                }),
            );
            start.wait_for(|s| *s).await.unwrap();
        }
        let served = served.lock().unwrap().clone();
        assert_eq!(served.len(), count, "every worker serves: {served:?}");
        assert!(served.keys().all(|t| t.starts_with("sitefile-worker-")));
        assert!(
            served.values().all(|&n| n == 3),
            "open connections are spread evenly: {served:?}"
        );
        release.send_replace(true);
        drop(clients);
    }
}
