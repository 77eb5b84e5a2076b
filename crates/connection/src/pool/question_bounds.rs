//! How much a server may ask of a person or the model: at most [`MAX_OPEN_QUESTIONS`] questions
//! (elicitation and sampling requests, plain or as tasks) open or waiting per connection, an
//! elicitation of at most [`MAX_QUESTION_BYTES`] with at most [`MAX_FORM_FIELDS`] fields, and a
//! sampling request of at most [`MAX_SAMPLING_BYTES`]. A question past a bound is refused before
//! anyone sees it, with [`LIMIT_EXCEEDED`] and a message saying which bound and what to do.
//! Shown whole or not at all: a clipped form could be answered for what it did not show.

use rmcp::model::ErrorCode;
use rmcp::ErrorData;
use serde_json::Value;
use std::io::{self, Write};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Questions of one server open or waiting for an answer at once; more are refused. A model
/// calling one server's tools in parallel rarely has more than a few asking at a time.
pub const MAX_OPEN_QUESTIONS: usize = 8;
/// The largest elicitation (its params as JSON: message, form or URL): a form of a few dozen
/// fields with descriptions, or a choice among a few hundred options, fits in a tenth of it.
pub const MAX_QUESTION_BYTES: usize = 64 * 1024;
/// The most fields a form may have: each is a dialog of its own.
pub const MAX_FORM_FIELDS: usize = 50;
/// The largest sampling request (its params as JSON: messages, system prompt, tools).
pub const MAX_SAMPLING_BYTES: usize = 4 * 1024 * 1024;
/// The JSON-RPC error a question refused by a bound gets (in the range JSON-RPC leaves to
/// implementations; "limit exceeded" as other JSON-RPC APIs use it).
pub const LIMIT_EXCEEDED: ErrorCode = ErrorCode(-32005);

/// The places for one connection's questions.
#[derive(Clone)]
pub struct QuestionSlots(Arc<Semaphore>);

impl Default for QuestionSlots {
    fn default() -> Self {
        QuestionSlots(Arc::new(Semaphore::new(MAX_OPEN_QUESTIONS)))
    }
}

/// A place held until the question is answered or dropped.
pub type Slot = OwnedSemaphorePermit;

impl QuestionSlots {
    /// A place for one more question, or the error that refuses it (`what`: `elicitation`,
    /// `sampling request`). The error says "this server": a shared one is known to the broker
    /// by its identity only, and the server knows who it is.
    pub fn take(&self, what: &str) -> Result<Slot, ErrorData> {
        self.0.clone().try_acquire_owned().map_err(|_| {
            refused(
                what,
                &format!(
                    "too many questions: this server has {MAX_OPEN_QUESTIONS} questions open or \
                     waiting for an answer already, the most one server may have; nobody was \
                     asked. Ask again once one is answered"
                ),
            )
        })
    }
}

/// `what` (`elicitation`, `sampling request`) refused for `why`, with [`LIMIT_EXCEEDED`].
pub fn refused(what: &str, why: &str) -> ErrorData {
    ErrorData::new(LIMIT_EXCEEDED, format!("{what} refused: {why}"), None)
}

/// Why an `elicitation/create` is too large to show, if it is.
pub fn oversized_question(params: &Value) -> Option<String> {
    let fields = params
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
        .map_or(0, |p| p.len());
    if fields > MAX_FORM_FIELDS {
        return Some(format!(
            "question too large: its form has {fields} fields, over the limit of \
             {MAX_FORM_FIELDS}; nobody was asked. Ask for fewer at a time"
        ));
    }
    over(params, MAX_QUESTION_BYTES).map(|bytes| {
        format!(
            "question too large: it weighs {}, over the {} limit of a question; nobody was \
             asked. Ask with a shorter message or form",
            size(bytes),
            size(MAX_QUESTION_BYTES)
        )
    })
}

/// Why a `sampling/createMessage` is too large to run, if it is.
pub fn oversized_sampling(params: &Value) -> Option<String> {
    over(params, MAX_SAMPLING_BYTES).map(|bytes| {
        format!(
            "it weighs {}, over the {} limit",
            size(bytes),
            size(MAX_SAMPLING_BYTES)
        )
    })
}

/// The size of `value` as JSON (counted, not written out) when it is over `limit` bytes.
fn over(value: &Value, limit: usize) -> Option<usize> {
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, value);
    (counter.0 > limit).then_some(counter.0)
}

struct Counter(usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `64 KiB`, `4 MiB`, `10.0 MiB`.
fn size(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    match bytes {
        b if b >= MIB && b % MIB == 0 => format!("{} MiB", b / MIB),
        b if b >= MIB => format!("{:.1} MiB", b as f64 / MIB as f64),
        b if b % KIB == 0 => format!("{} KiB", b / KIB),
        b => format!("{:.1} KiB", b as f64 / KIB as f64),
    }
}

#[cfg(test)]
mod tests;
