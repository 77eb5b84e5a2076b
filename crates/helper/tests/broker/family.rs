//! A family's hub (the broker in family mode) inside this process: the sessions of a process
//! share one server through it, each with its own connection; an attach whose launch does not
//! give its identity is refused; a listing the server's connection took is served from memory.

use crate::support::*;
use pi_mcp_connection::broker::family::InProcess;
use pi_mcp_connection::broker::Broker;
use pi_mcp_connection::pool::shared::wire::FamilyAttach;
use pi_mcp_connection::pool::shared::{identity, FamilyReach};
use pi_mcp_connection::pool::{ListBounds, TransportSpec};
use std::sync::Arc;
use std::time::Duration;

/// The test server as a server `session` shares with its family through `hub`; `identity`
/// overrides the one its launch gives.
fn in_family(
    session: &Arc<pi_mcp_connection::pool::Broker>,
    hub: &Arc<Broker>,
    dir: &Dir,
    identity: Option<&str>,
) -> pi_mcp_connection::pool::ConnectSpec {
    let mut spec = shared(session, "", &[]);
    let TransportSpec::Shared(shared) = &mut spec.transport else {
        unreachable!()
    };
    shared.identity = identity.map_or_else(
        || {
            let launch = &shared.stdio;
            identity::family(
                &spec.server,
                launch,
                spec.protocol,
                &spec.client,
                &dir.agent,
                None,
            )
        },
        str::to_string,
    );
    shared.family = Some(FamilyReach {
        hub: Arc::new(InProcess(Arc::downgrade(hub))),
        attach: FamilyAttach {
            token: None,
            agent_dir: dir.agent.clone(),
            roots_cwd: None,
        },
    });
    spec
}

fn bounds() -> ListBounds {
    ListBounds {
        timeout: Duration::from_secs(10),
        items: 100,
        bytes: 1 << 20,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_of_one_process_share_one_server_through_the_hub() {
    let dir = Dir::new("family-share");
    let hub = Broker::hub(&dir.agent);
    let (a, b) = (dir.session(None), dir.session(None));
    let first = open(&in_family(&a, &hub, &dir, None)).await;
    let second = open(&in_family(&b, &hub, &dir, None)).await;
    assert!(first.pid().is_none(), "reached through the hub");
    assert_eq!(echo(&first, "a").await, "echo: a");
    assert_eq!(echo(&second, "b").await, "echo: b");
    until("both sessions told of each other", || {
        first.shared_with() == Some(2) && second.shared_with() == Some(2)
    })
    .await;
    let status = hub.status();
    assert_eq!(status.servers.len(), 1, "{status:?}");
    let pid = status.servers[0].pid.unwrap();

    // The first listing is the server's; the second session's is served from memory.
    let listed = first.listed(&bounds()).await.unwrap();
    let again = second.listed(&bounds()).await.unwrap();
    assert_eq!(listed.tools, again.tools);
    let seen = call(&first, "seen", serde_json::json!({}), plain()).await;
    assert_eq!(
        seen.unwrap().matches("tools/list").count(),
        1,
        "listed once"
    );

    first.close().await;
    second.close().await;
    until(
        "the hub's own server stopped a grace after its last session",
        || !alive(pid),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attach_whose_launch_does_not_give_its_identity_is_refused() {
    let dir = Dir::new("family-forged");
    let hub = Broker::hub(&dir.agent);
    let session = dir.session(None);
    let forged = open(&in_family(&session, &hub, &dir, Some("0123456789abcdef"))).await;
    assert!(forged.pid().is_some(), "refused by the hub: started here");
    assert!(hub.status().servers.is_empty());
    forged.close().await;
}
