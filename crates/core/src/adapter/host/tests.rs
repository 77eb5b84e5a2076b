use super::*;
use crate::approval::present::Choice;
use pi_mcp_connection::pool::{Asker, Question};
use serde_json::json;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Dialogs that stay open until the test answers them.
#[derive(Default)]
struct Dialogs {
    shown: Mutex<Vec<(u64, Option<oneshot::Sender<Given>>)>>,
    withdrawn: Mutex<Vec<u64>>,
}

/// What the test answers a dialog with.
enum Given {
    Reply(Reply),
    Choice(Option<&'static str>),
}

impl Dialogs {
    fn ids(&self) -> Vec<u64> {
        self.shown.lock().iter().map(|(id, _)| *id).collect()
    }

    fn answer(&self, at: usize, answer: Given) {
        if let Some(answered) = self.shown.lock()[at].1.take() {
            let _ = answered.send(answer);
        }
    }

    fn show(&self, id: u64) -> oneshot::Receiver<Given> {
        let (answered, answer) = oneshot::channel();
        self.shown.lock().push((id, Some(answered)));
        answer
    }
}

impl FrontEnd for Dialogs {
    fn elicit(&self, question: present::Question) -> BoxFuture<'static, Option<Reply>> {
        let answer = self.show(question.id);
        Box::pin(async move {
            match answer.await {
                Ok(Given::Reply(reply)) => Some(reply),
                _ => None,
            }
        })
    }

    fn sample(&self, _: sampling::Request) -> BoxFuture<'static, Option<sampling::Answer>> {
        Box::pin(async { None })
    }

    fn withdraw(&self, id: u64) {
        self.withdrawn.lock().push(id);
    }

    fn approve(&self, question: ApprovalQuestion) -> BoxFuture<'static, Option<ApprovalAnswer>> {
        let answer = self.show(question.id);
        Box::pin(async move {
            match answer.await {
                Ok(Given::Choice(choice)) => Some(ApprovalAnswer::named(choice)),
                _ => None,
            }
        })
    }
}

/// An approval question with nothing to pick.
fn approval(id: u64) -> ApprovalQuestion {
    ApprovalQuestion {
        id,
        server: "s".into(),
        title: String::new(),
        options: vec![],
        timeout: Duration::ZERO,
    }
}

fn question() -> (Asker, Question) {
    let schema = json!({ "type": "object", "properties": { "name": { "type": "string" } } });
    let asker = Asker {
        server: "s".into(),
        callers: vec![],
        task: None,
        void: CancellationToken::new(),
        on_behalf: None,
    };
    let form = Form::from_schema(&schema).unwrap_or_else(|e| panic!("{e}"));
    let question = Question::Form {
        message: "Name?".into(),
        form,
        schema,
    };
    (asker, question)
}

async fn until(what: &str, check: impl Fn() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn one_dialog_at_a_time_in_order_and_a_question_withdrawn_while_waiting_is_never_shown() {
    let dir = std::env::temp_dir();
    let host = PoolHost(Arc::new(SessionHost::new(&dir, &dir, HashSet::new())));
    let dialogs = Arc::new(Dialogs::default());
    host.attach(dialogs.clone());
    let ask = || {
        let (asker, question) = question();
        tokio::spawn(host.elicit(asker, question))
    };
    let (first, second, third) = (ask(), ask(), ask());
    until("the first dialog", || dialogs.ids().len() == 1).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(dialogs.ids(), [1], "the others wait their turn");
    second.abort();
    let _ = second.await;
    dialogs.answer(0, Given::Reply(Reply::Decline));
    assert_eq!(first.await.ok().flatten(), Some(Reply::Decline));
    until("the next dialog", || dialogs.ids().len() == 2).await;
    assert_eq!(dialogs.ids(), [1, 3], "the withdrawn one was skipped");
    assert!(
        dialogs.withdrawn.lock().is_empty(),
        "nothing unseen is closed"
    );
    third.abort();
    let _ = third.await;
    assert_eq!(*dialogs.withdrawn.lock(), [3], "a shown one is closed");
}

#[tokio::test]
async fn an_approval_closed_at_once_after_waiting_its_turn_is_closed_not_unanswered() {
    let dir = std::env::temp_dir();
    let host = PoolHost(Arc::new(SessionHost::new(&dir, &dir, HashSet::new())));
    let dialogs = Arc::new(Dialogs::default());
    host.attach(dialogs.clone());
    let wait = Duration::from_millis(2600);
    let ask = || tokio::spawn(host.approve(approval, wait));
    let (first, second) = (ask(), ask());
    until("the first dialog", || dialogs.ids().len() == 1).await;
    // The second waits its turn behind the first, a while.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    dialogs.answer(0, Given::Choice(Some("once")));
    assert_eq!(
        first.await.ok().flatten(),
        Some(Answer::Picked(Choice::Once))
    );
    until("the second dialog", || dialogs.ids().len() == 2).await;
    dialogs.answer(1, Given::Choice(None));
    assert_eq!(
        second.await.ok().flatten(),
        Some(Answer::Closed),
        "closed at once once shown: its wait counts from then"
    );
}
