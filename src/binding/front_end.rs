//! What the core asks a person or a model through the front end (`setFrontEnd`): servers'
//! questions, approval dialogs and sampling requests as napi objects, and their answers back.

use super::json::JsonValue;
use super::mirror::Js;
use futures::future::BoxFuture;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use pi_mcp_connection::elicitation::present;
use pi_mcp_connection::pool::Reply;
use pi_mcp_core::adapter::FrontEnd;
use pi_mcp_core::approval::{self, present as approval_present};
use pi_mcp_core::sampling;
use std::sync::Arc;

/// What a server asks a person (elicitation), as `setFrontEnd`'s `elicit` gets it: a form to fill
/// in, or a page to open.
#[napi(discriminant = "mode", discriminant_case = "lowercase")]
pub enum Question {
    Form {
        id: f64,
        server: String,
        title: String,
        labels: QuestionLabels,
        fields: Vec<QuestionField>,
    },
    Url {
        id: f64,
        server: String,
        title: String,
        labels: QuestionLabels,
        /// The page, then the server's words under a heading of ours.
        message: String,
        /// What `openUrl` opens once the user agrees.
        url: String,
    },
}

impl Js for present::Question {
    type Js = Question;
    fn js(self) -> Question {
        let present::Question {
            id,
            server,
            title,
            labels,
            asks,
        } = self;
        let (id, labels) = (id.js(), labels.js());
        match asks {
            present::Asks::Form { fields } => Question::Form {
                id,
                server,
                title,
                labels,
                fields: fields.js(),
            },
            present::Asks::Url { message, url } => Question::Url {
                id,
                server,
                title,
                labels,
                message,
                url,
            },
        }
    }
}

/// The words of the dialogs' buttons and marks.
#[napi(object)]
pub struct QuestionLabels {
    pub answer: String,
    pub decline: String,
    pub done: String,
    /// Leaves an optional field empty.
    pub skip: String,
    /// Marks a chosen option of a multi-select.
    pub chosen: String,
    pub open: String,
}
mirror!(QuestionLabels <- present::Labels { answer, decline, done, skip, chosen, open });

/// One field of a form a server asks to fill in (texts written by the core).
#[napi(object)]
pub struct QuestionField {
    pub name: String,
    pub kind: FieldKind,
    pub required: bool,
    /// May be left empty: optional, or it has a default.
    pub skippable: bool,
    /// Label, what it takes, its default or whether it is optional, and the description.
    pub prompt: String,
    /// The default as text (empty without one).
    pub placeholder: String,
    /// For `boolean`, `choice` and `choices`: what to offer.
    pub options: Option<Vec<FieldOption>>,
    /// For `choices`: how many may be chosen (without `maxItems`, any number).
    pub min_items: Option<f64>,
    pub max_items: Option<f64>,
}
mirror!(QuestionField <- present::ShownField {
    name, kind, required, skippable, prompt, placeholder, options, min_items, max_items,
});

/// What a field takes: `text` and `number` are typed, the others picked from `options`.
#[napi(string_enum = "lowercase")]
pub enum FieldKind {
    Text,
    Number,
    Boolean,
    Choice,
    Choices,
}

mirror!(FieldKind <- present::KindName { Text | Number | Boolean | Choice | Choices });

/// An option to pick: the value to hand back (to `takeField`), and what to show.
#[napi(object)]
pub struct FieldOption {
    pub value: JsonValue,
    pub label: String,
}
mirror!(FieldOption <- present::ShownOption { value, label });

/// The answer to a question: accepted with the fields' values, declined, or cancelled.
#[napi(discriminant = "action", discriminant_case = "lowercase")]
pub enum QuestionAnswer {
    Accept {
        content: Option<serde_json::Map<String, JsonValue>>,
    },
    Decline,
    Cancel,
}

impl From<QuestionAnswer> for Reply {
    fn from(answer: QuestionAnswer) -> Reply {
        match answer {
            QuestionAnswer::Accept { content } => Reply::Accept(content.unwrap_or_default()),
            QuestionAnswer::Decline => Reply::Decline,
            QuestionAnswer::Cancel => Reply::Cancel,
        }
    }
}

/// Field `name` of an open question as `takeField` took it: its `value` (absent: left empty), or
/// the `error` to show before asking again.
#[napi(object)]
pub struct FieldTaken {
    pub value: Option<JsonValue>,
    pub error: Option<String>,
}

impl From<std::result::Result<Option<JsonValue>, String>> for FieldTaken {
    fn from(taken: std::result::Result<Option<JsonValue>, String>) -> FieldTaken {
        match taken {
            Ok(value) => FieldTaken { value, error: None },
            Err(error) => FieldTaken {
                value: None,
                error: Some(error),
            },
        }
    }
}

/// Whether a tool may run (`approveTools`, an MCP App's consent), as `setFrontEnd`'s `approve`
/// gets it: a select of `options` titled `title`; answer with the picked option's `value`. An
/// option with `remember` grants for the session: keep it (Pi's `appendEntry(remember.customType,
/// remember.data)`) and give it back through `restoreGrants`. Unanswered after `timeoutMs`, the
/// use is denied.
#[napi(object)]
pub struct ApprovalQuestion {
    pub id: f64,
    pub server: String,
    pub title: String,
    pub options: Vec<ApprovalOption>,
    pub timeout_ms: f64,
}

impl Js for approval_present::Question {
    type Js = ApprovalQuestion;
    fn js(self) -> ApprovalQuestion {
        let approval_present::Question {
            id,
            server,
            title,
            options,
            timeout,
        } = self;
        ApprovalQuestion {
            id: id.js(),
            server,
            title,
            options: options.js(),
            timeout_ms: timeout.as_millis() as f64,
        }
    }
}

#[napi(object)]
pub struct ApprovalOption {
    pub label: String,
    pub value: ApprovalChoice,
    pub remember: Option<SessionEntry>,
}

impl Js for approval_present::Offered {
    type Js = ApprovalOption;
    fn js(self) -> ApprovalOption {
        let approval_present::Offered {
            label,
            choice,
            remember,
        } = self;
        ApprovalOption {
            label,
            value: choice.js(),
            remember: remember.js(),
        }
    }
}

/// What an option allows: once; for the session, the tool or the whole server; for the app's
/// session, or always (an MCP App's consent); nothing.
#[napi(string_enum = "lowercase")]
pub enum ApprovalChoice {
    Once,
    Tool,
    Server,
    Session,
    Always,
    Deny,
}

mirror!(ApprovalChoice <- approval_present::Choice {
    Once | Tool | Server | Session | Always | Deny
});

/// A session entry (Pi's `appendEntry(customType, data)`): an approval grant to keep, or any
/// entry of the session given back to `restoreGrants`.
#[napi(object)]
pub struct SessionEntry {
    pub custom_type: String,
    pub data: Option<JsonValue>,
}

impl Js for approval::Entry {
    type Js = SessionEntry;
    fn js(self) -> SessionEntry {
        let approval::Entry { custom_type, data } = self;
        SessionEntry {
            custom_type,
            data: Some(data),
        }
    }
}

impl From<SessionEntry> for approval::Entry {
    fn from(entry: SessionEntry) -> approval::Entry {
        let SessionEntry { custom_type, data } = entry;
        approval::Entry {
            custom_type,
            data: data.unwrap_or_default(),
        }
    }
}

/// The option picked: its `value`; null or left out when the dialog closed without one. A string
/// no option has denies (the core reads it).
#[napi(object)]
pub struct ApprovalAnswer {
    #[napi(ts_type = "string | null")]
    pub choice: Option<Either<String, Null>>,
}

/// A server's request for the model (sampling), as `setFrontEnd`'s `sample` gets it: once the
/// user allows it (`approve`, not with `samplingAutoApprove`) in a dialog of `title` and
/// `preview`, Pi's model completes `context` with `options`.
#[napi(object)]
pub struct SamplingRequest {
    pub id: f64,
    pub server: String,
    pub approve: bool,
    pub title: String,
    pub preview: String,
    pub context: SamplingContext,
    pub options: SamplingOptions,
    /// Model names the server prefers, best first.
    pub hints: Vec<String>,
}
mirror!(SamplingRequest <- sampling::Request {
    id, server, approve, title, preview, context, options, hints,
});

/// Pi's `Context` for its model: Pi's messages (user, assistant, tool results) and the tools
/// offered.
#[napi(object)]
pub struct SamplingContext {
    pub system_prompt: Option<String>,
    pub messages: Vec<JsonValue>,
    pub tools: Option<Vec<SamplingTool>>,
}
mirror!(SamplingContext <- sampling::Context { system_prompt, messages, tools });

/// A tool as Pi's `Context` offers it.
#[napi(object)]
pub struct SamplingTool {
    pub name: String,
    pub description: String,
    /// Its input's JSON Schema.
    pub parameters: JsonValue,
}
mirror!(SamplingTool <- sampling::Tool { name, description, parameters });

/// The options of Pi's `complete` a server may set.
#[napi(object)]
pub struct SamplingOptions {
    pub max_tokens: Option<f64>,
    pub temperature: Option<f64>,
}
mirror!(SamplingOptions <- sampling::Options { max_tokens, temperature });

/// What `sample` resolves with: Pi's assistant message (`complete`'s; the fields read here), or
/// `{ refused: "declined" | "no-ui" | "no-model" }` when the model did not run.
#[napi(object)]
pub struct SamplingAnswer {
    pub refused: Option<String>,
    pub content: Option<Vec<JsonValue>>,
    pub stop_reason: Option<String>,
    pub error_message: Option<String>,
    pub model: Option<String>,
}

impl From<SamplingAnswer> for sampling::Answer {
    fn from(answer: SamplingAnswer) -> sampling::Answer {
        let SamplingAnswer {
            refused,
            content,
            stop_reason,
            error_message,
            model,
        } = answer;
        sampling::Answer {
            refused,
            content: content.unwrap_or_default(),
            stop_reason,
            error_message,
            model,
        }
    }
}

/// A JS function called from any thread that answers with a promise (written out in full: the
/// TypeScript is made from these types); it keeps Node alive only while a call is out.
type Asks<T, A> = ThreadsafeFunction<T, Promise<A>, T, Status, false, true>;

/// Where servers' questions for a person or a model are shown (see `setFrontEnd`).
#[napi(object, object_to_js = false)]
pub struct FrontEndCallbacks {
    /// Shows a question; resolves with the answer, or null when nobody can answer.
    pub elicit: Option<
        ThreadsafeFunction<
            Question,
            Promise<Option<QuestionAnswer>>,
            Question,
            Status,
            false,
            true,
        >,
    >,
    /// Runs a sampling request on the model; resolves with Pi's assistant message or why the
    /// model did not run, or null when no model runs here.
    pub sample: Option<
        ThreadsafeFunction<
            SamplingRequest,
            Promise<Option<SamplingAnswer>>,
            SamplingRequest,
            Status,
            false,
            true,
        >,
    >,
    /// The question or request with this id no longer needs an answer: close its dialog.
    pub withdraw: Option<ThreadsafeFunction<f64, (), f64, Status, false, true>>,
    /// Asks whether a tool may run; resolves with the option picked, or null when nobody can
    /// answer.
    pub approve: Option<
        ThreadsafeFunction<
            ApprovalQuestion,
            Promise<Option<ApprovalAnswer>>,
            ApprovalQuestion,
            Status,
            false,
            true,
        >,
    >,
}

pub struct JsFrontEnd {
    elicit: Option<Arc<Asks<Question, Option<QuestionAnswer>>>>,
    sample: Option<Arc<Asks<SamplingRequest, Option<SamplingAnswer>>>>,
    withdraw: Option<ThreadsafeFunction<f64, (), f64, Status, false, true>>,
    approve: Option<Arc<Asks<ApprovalQuestion, Option<ApprovalAnswer>>>>,
}

impl From<FrontEndCallbacks> for JsFrontEnd {
    fn from(callbacks: FrontEndCallbacks) -> JsFrontEnd {
        JsFrontEnd {
            elicit: callbacks.elicit.map(Arc::new),
            sample: callbacks.sample.map(Arc::new),
            withdraw: callbacks.withdraw,
            approve: callbacks.approve.map(Arc::new),
        }
    }
}

/// Calls `callback` (if any) and awaits its promise; a missing callback, a throw, a rejection or
/// an answer of another shape is `None` (nobody answered).
fn ask<T, A>(callback: Option<Arc<Asks<T, A>>>, value: T) -> BoxFuture<'static, Option<A>>
where
    T: ToNapiValue + Send + 'static,
    A: FromNapiValue + Send + 'static,
{
    Box::pin(async move {
        let promise = callback?.call_async_catch(value).await.ok()?;
        promise.await.ok()
    })
}

impl FrontEnd for JsFrontEnd {
    fn elicit(&self, question: present::Question) -> BoxFuture<'static, Option<Reply>> {
        let asked = ask(self.elicit.clone(), question.js());
        Box::pin(async move { asked.await.flatten().map(Reply::from) })
    }

    fn sample(&self, request: sampling::Request) -> BoxFuture<'static, Option<sampling::Answer>> {
        let asked = ask(self.sample.clone(), request.js());
        Box::pin(async move { asked.await.flatten().map(sampling::Answer::from) })
    }

    fn withdraw(&self, id: u64) {
        if let Some(withdraw) = &self.withdraw {
            withdraw.call(id.js(), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }

    fn approve(
        &self,
        question: approval_present::Question,
    ) -> BoxFuture<'static, Option<approval_present::ApprovalAnswer>> {
        let asked = ask(self.approve.clone(), question.js());
        Box::pin(async move {
            let ApprovalAnswer { choice } = asked.await.flatten()?;
            let choice = match &choice {
                Some(Either::A(name)) => Some(name.as_str()),
                Some(Either::B(Null)) | None => None,
            };
            Some(approval_present::ApprovalAnswer::named(choice))
        })
    }
}
