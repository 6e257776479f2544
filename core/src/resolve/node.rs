//! A partly resolved value: content with holes where loader results will go.

use crate::value::{Key, Value};

/// Index of a loader call within one resolution.
pub type CallId = usize;

/// A value under resolution.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// Nothing: dropped from arrays, omitted from objects (an unmatched flag).
    Absent,
    /// A fully resolved value.
    Value(Value),
    /// An array with holes.
    Array(Vec<Node>),
    /// An object with holes.
    Object(Vec<(Key, Node)>),
    /// The result of a loader call, once it has answered.
    Call(CallId),
}

impl Node {
    /// An array node, collapsed to a value when nothing in it waits for a loader.
    pub fn array(items: Vec<Node>) -> Node {
        if items
            .iter()
            .all(|n| matches!(n, Node::Value(_) | Node::Absent))
        {
            Node::Value(Value::array(
                items
                    .into_iter()
                    .filter_map(|n| match n {
                        Node::Value(v) => Some(v),
                        _ => None,
                    })
                    .collect(),
            ))
        } else {
            Node::Array(items)
        }
    }

    /// An object node, collapsed to a value when nothing in it waits for a loader.
    pub fn object(entries: Vec<(Key, Node)>) -> Node {
        if entries
            .iter()
            .all(|(_, n)| matches!(n, Node::Value(_) | Node::Absent))
        {
            Node::Value(Value::object(
                entries
                    .into_iter()
                    .filter_map(|(k, n)| match n {
                        Node::Value(v) => Some((k, v)),
                        _ => None,
                    })
                    .collect(),
            ))
        } else {
            Node::Object(entries)
        }
    }

    /// Marks every call this node refers to.
    pub fn mark_calls(&self, used: &mut [bool]) {
        match self {
            Node::Call(id) => {
                if let Some(slot) = used.get_mut(*id) {
                    *slot = true;
                }
            }
            Node::Array(items) => items.iter().for_each(|n| n.mark_calls(used)),
            Node::Object(entries) => entries.iter().for_each(|(_, n)| n.mark_calls(used)),
            Node::Absent | Node::Value(_) => {}
        }
    }

    /// The value, with `result(id)` for each call; `None` while some call has no result yet.
    /// `Absent` at the top stays `None`-free: it becomes `Some(None)`.
    pub fn materialize(&self, result: &dyn Fn(CallId) -> Option<Value>) -> Option<Option<Value>> {
        Some(match self {
            Node::Absent => None,
            Node::Value(v) => Some(v.clone()),
            Node::Call(id) => Some(result(*id)?),
            Node::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    if let Some(v) = item.materialize(result)? {
                        out.push(v);
                    }
                }
                Some(Value::array(out))
            }
            Node::Object(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for (k, n) in entries {
                    if let Some(v) = n.materialize(result)? {
                        out.push((k.clone(), v));
                    }
                }
                Some(Value::object(out))
            }
        })
    }
}
