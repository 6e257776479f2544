//! A run as it was accepted: everything its execution needs, queued behind the thread's
//! running one until its turn.

use crate::storage::{Agent, Message};

/// What a run needs.
pub struct RunJob {
    /// Organization id.
    pub org_id: String,
    /// Thread id.
    pub thread_id: String,
    /// Stream buffer key.
    pub key: String,
    /// The task id returned by the 202.
    pub task_id: String,
    /// Audit identity of the key that posted the run (`key:<id>`).
    pub actor: String,
    /// The run's user message: the history given to the model ends with it.
    pub user_message_id: String,
    /// The run's assistant message, created empty when the run was accepted.
    pub assistant_message: Message,
    /// The thread's agent.
    pub agent: Agent,
    /// Model to use.
    pub model: String,
    /// Extra system text of this run.
    pub system_text: Vec<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
}
