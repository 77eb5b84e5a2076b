use super::present::{arguments, question, refusal, ApprovalAnswer, By, Choice, Refusal};
use super::*;
use crate::config::test_tree::Tree;
use crate::config::{Config, Registered};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

fn tool(server: &str, name: &str, definition: Value) -> ToolInfo {
    ToolInfo {
        server: server.into(),
        name: format!("{server}_{name}"),
        original: name.into(),
        description: String::new(),
        definition: Some(Arc::new(definition)),
        resource_uri: None,
        resource_template: None,
    }
}

fn loaded(tree: &Tree, user: Value) -> Config {
    tree.pi_config(user);
    tree.load()
}

fn server<'a>(config: &'a Config, name: &str) -> &'a ServerConfig {
    config.servers.iter().find(|s| s.name == name).unwrap()
}

#[test]
fn a_grant_holds_names_and_a_hash_and_a_changed_tool_or_launch_drops_it() {
    let tree = Tree::new();
    let config = loaded(
        &tree,
        json!({ "mcpServers": { "fs": { "command": "node", "args": ["fs.js", "${TOKEN}"], "approveTools": true } } }),
    );
    let fs = server(&config, "fs");
    let definition = json!({
        "name": "rm",
        "inputSchema": { "type": "object", "properties": { "path": { "type": "string" } } },
        "annotations": { "destructiveHint": true }
    });
    let rm = tool("fs", "rm", definition.clone());
    let grant = Grant::tool(fs, &rm);
    let entry = grant.entry();
    assert_eq!(entry.custom_type, ENTRY_TYPE);
    let data = entry.data.as_object().unwrap();
    let mut keys: Vec<&str> = data.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["hash", "server", "tool"]);
    // The launch is hashed as written: the variable's value is in no entry, hashed or not.
    assert!(!entry.data.to_string().contains("t0k"));

    let grants = Grants::default();
    let subject = Subject::Tool(&rm);
    assert!(!grants.covers(fs, &subject));
    let other = Entry {
        custom_type: "other".into(),
        data: json!({}),
    };
    grants.restore(&[other, entry.clone()]);
    assert!(grants.covers(fs, &subject));
    // Another schema or other hints: another tool, asked again.
    let mut changed = definition.clone();
    changed["inputSchema"]["properties"]["force"] = json!({ "type": "boolean" });
    assert!(!grants.covers(fs, &Subject::Tool(&tool("fs", "rm", changed))));
    let mut rehinted = definition;
    rehinted["annotations"] = json!({});
    assert!(!grants.covers(fs, &Subject::Tool(&tool("fs", "rm", rehinted))));
    // Another launch of the same name: asked again.
    let tree = Tree::new();
    let moved = loaded(
        &tree,
        json!({ "mcpServers": { "fs": { "command": "node", "args": ["other.js"], "approveTools": true } } }),
    );
    assert!(!grants.covers(server(&moved, "fs"), &subject));
    // A server grant covers everything of the server, reads and prompts too.
    grants.restore(&[Grant::server(fs).entry()]);
    let read = Subject::Read {
        server: "fs",
        uri: "file:///x",
    };
    assert!(grants.covers(fs, &read) && grants.covers(fs, &subject));
    assert!(!grants.covers(server(&moved, "fs"), &read));
}

#[test]
fn what_asks_a_tool_a_resource_tool_a_read_and_a_prompt() {
    let tree = Tree::new();
    let config = loaded(
        &tree,
        json!({
            "settings": { "approveTools": "destructive" },
            "mcpServers": {
                "hinted": { "command": "x" },
                "all": { "command": "x", "approveTools": true },
                "some": { "command": "x", "approveTools": ["mcp__some__push", "get_*"] }
            }
        }),
    );
    let read_only = json!({ "annotations": { "readOnlyHint": true } });
    let hinted = server(&config, "hinted");
    assert!(Subject::Tool(&tool("hinted", "rm", json!({}))).asks(hinted));
    assert!(!Subject::Tool(&tool("hinted", "ls", read_only.clone())).asks(hinted));
    let mut readme = tool("hinted", "get_readme", json!({}));
    (readme.definition, readme.resource_uri) = (None, Some("file:///README".into()));
    assert!(
        !Subject::Tool(&readme).asks(hinted),
        "a resource tool reads"
    );
    let read = |s: &'static str| Subject::Read {
        server: s,
        uri: "file:///x",
    };
    let prompt = |s: &'static str| Subject::Prompt {
        server: s,
        name: "p",
    };
    assert!(!read("hinted").asks(hinted) && !prompt("hinted").asks(hinted));
    let all = server(&config, "all");
    assert!(Subject::Tool(&tool("all", "ls", read_only)).asks(all));
    assert!(read("all").asks(all) && prompt("all").asks(all));
    // Patterns match the MCP name, the model's and Pi's.
    let some = server(&config, "some");
    assert!(Subject::Tool(&tool("some", "push", json!({}))).asks(some));
    readme.server = "some".into();
    assert!(Subject::Tool(&readme).asks(some));
    assert!(!Subject::Tool(&tool("some", "pull", json!({}))).asks(some));
}

#[test]
fn projects_imports_and_registrations_only_add() {
    let tree = Tree::new();
    tree.pi_config(json!({
        "settings": { "approveTools": true },
        "mcpServers": { "mine": { "command": "x" }, "quiet": { "command": "x", "approveTools": false } }
    }));
    tree.write(
        "project/.mcp.json",
        &json!({
            "settings": { "approveTools": false },
            "mcpServers": {
                "mine": { "command": "y", "approveTools": false },
                "quiet": { "approveTools": ["push"] }
            }
        })
        .to_string(),
    );
    let mut opts = tree.opts();
    opts.project_trusted = Some(true);
    opts.registered = vec![Registered {
        name: "ext".into(),
        config: json!({ "command": "z", "approveTools": ["*"] }),
        extension: "/ext/index.js".into(),
    }];
    let config = crate::config::load(&opts);
    let mine = server(&config, "mine");
    assert_eq!(mine.entry["command"], "y", "the project's launch is used…");
    assert!(
        mine.approval.all,
        "…but it cannot turn the user's approval off"
    );
    let quiet = server(&config, "quiet");
    assert!(!quiet.approval.all && quiet.approval.patterns == ["push"]);
    assert!(server(&config, "ext").approval.whole_server());
    // An untrusted project adds nothing and removes nothing: it is not read.
    opts.project_trusted = Some(false);
    opts.registered.clear();
    let untrusted = crate::config::load(&opts);
    assert!(server(&untrusted, "mine").approval.all);
    assert!(server(&untrusted, "quiet").approval.is_off());
}

#[test]
fn the_dialog_names_server_tool_hints_and_arguments_without_secrets() {
    let tree = Tree::new();
    let config = loaded(
        &tree,
        json!({ "mcpServers": { "gh": { "command": "x", "approveTools": true } } }),
    );
    let gh = server(&config, "gh");
    let home = tree.home.display().to_string();
    let definition = json!({
        "inputSchema": { "type": "object", "properties": { "pin": { "type": "string", "format": "password" } } },
        "annotations": { "destructiveHint": true, "openWorldHint": true }
    });
    let push = tool("gh", "push\u{1b}[2J", definition);
    let args = json!({
        "repo": "a/b",
        "body": "x".repeat(500),
        "pin": "1234",
        "api_key": "sk-live",
        "nested": { "Authorization": "Bearer abc", "ok": 1 },
        "evil": "\u{202e}txt.exe",
    });
    let request = request::new(&Subject::Tool(&push), gh, &args, &home);
    let q = question(7, &request, Duration::from_secs(120), By::Model);
    let title = &q.title;
    assert!(
        title.starts_with("MCP server \"gh\" wants to run push"),
        "{title}"
    );
    assert!(
        !title.contains('\u{1b}') && !title.contains('\u{202e}'),
        "{title}"
    );
    assert!(title.contains("Hints (the server's own claim): destructive, open world"));
    for secret in ["1234", "sk-live", "Bearer abc"] {
        assert!(!title.contains(secret), "{secret} shown: {title}");
    }
    assert!(
        title.contains("  pin: (hidden)") && title.contains("\"ok\":1"),
        "{title}"
    );
    assert!(title.lines().all(|l| l.chars().count() < 200), "{title}");
    assert!(
        title.contains("`approveTools` in ~/.pi/agent/mcp.json"),
        "{title}"
    );
    let values: Vec<&str> = q.options.iter().map(|o| o.choice.as_str()).collect();
    assert_eq!(values, ["once", "tool", "server", "deny"]);
    assert_eq!(q.options[1].remember, Some(Grant::tool(gh, &push).entry()));
    assert_eq!(q.timeout, Duration::from_secs(120));
    // A read offers no tool grant; a prompt shows its arguments.
    let read = Subject::Read {
        server: "gh",
        uri: "file:///x",
    };
    let request = request::new(&read, gh, &Value::Null, &home);
    let q = question(8, &request, Duration::from_secs(1), By::Model);
    assert_eq!(q.options.len(), 3);
    let many: serde_json::Map<String, Value> =
        (0..20).map(|i| (format!("k{i}"), json!(i))).collect();
    let shown = arguments(&Value::Object(many), None);
    assert!(shown.ends_with("… and 8 more"), "{shown}");
    assert_eq!(arguments(&json!({}), None), "Arguments: none");
}

#[test]
fn an_answer_names_its_choice_and_a_name_no_option_has_denies() {
    for choice in Choice::ALL {
        assert_eq!(
            ApprovalAnswer::named(Some(choice.as_str())).choice,
            Some(*choice)
        );
    }
    for unknown in ["maybe", "", "Once", "allow"] {
        assert_eq!(
            ApprovalAnswer::named(Some(unknown)).choice,
            Some(Choice::Deny)
        );
    }
    assert_eq!(
        ApprovalAnswer::named(None).choice,
        None,
        "closed without one"
    );
}

#[test]
fn what_the_model_is_told() {
    let tree = Tree::new();
    let config = loaded(
        &tree,
        json!({ "mcpServers": { "gh": { "command": "x", "approveTools": ["push"] } } }),
    );
    let gh = server(&config, "gh");
    let home = tree.home.display().to_string();
    let push = tool("gh", "push", json!({}));
    let told = |r: Refusal| refusal(&r, &Subject::Tool(&push), gh, &home);
    let required = told(Refusal::NobodyToAsk(None));
    assert!(required.starts_with("The MCP tool \"gh_push\" of server \"gh\" needs the user's approval (`approveTools` in ~/.pi/agent/mcp.json)"), "{required}");
    assert!(
        required.contains("and no session with one started it"),
        "{required}"
    );
    let gone = "and its family's session (pi, pid 42) ended before it answered";
    let required = told(Refusal::NobodyToAsk(Some(gone.into())));
    assert!(
        required.contains(&format!("without a terminal), {gone}. It did not run.")),
        "{required}"
    );
    assert!(told(Refusal::YesInsidePi).contains("allowYesInsidePi"));
    assert!(told(Refusal::Denied).starts_with("The user declined the MCP tool \"gh_push\""));
    let unanswered = told(Refusal::Unanswered(Duration::from_secs(120)));
    assert!(unanswered.contains("within 120 s"), "{unanswered}");
}

/// A config whose server `fs` asks before every use.
fn gated_fs() -> (Tree, Config) {
    let tree = Tree::new();
    let config = loaded(
        &tree,
        json!({ "mcpServers": { "fs": { "command": "node", "args": ["fs.js"], "approveTools": true } } }),
    );
    (tree, config)
}

#[test]
fn a_members_request_is_shown_and_granted_as_its_own_dialog_would_be() {
    let (tree, config) = gated_fs();
    let fs = server(&config, "fs");
    let home = tree.home.display().to_string();
    let rm = tool(
        "fs",
        "rm",
        json!({ "annotations": { "destructiveHint": true }, "inputSchema": { "type": "object" } }),
    );
    let args = json!({ "path": "/tmp/x", "token": "s3cr3t" });
    let request = request::new(&Subject::Tool(&rm), fs, &args, &home);
    // What travels: the arguments as shown, never their values' secrets.
    let sent = serde_json::to_string(&request).unwrap();
    assert!(
        !sent.contains("s3cr3t") && sent.contains("(hidden)"),
        "{sent}"
    );
    let received: Request = serde_json::from_str(&sent).unwrap();
    assert_eq!(
        received.clone().cleaned(),
        request,
        "its own text is clean already"
    );
    // Its grants hash as the member's own would: the same grant covers both.
    let (whole, tool_grant) = request::grants(&received);
    assert_eq!(tool_grant, Some(Grant::tool(fs, &rm)));
    assert_eq!(whole, Grant::server(fs));
    let grants = Grants::default();
    assert!(!grants.cover(&received));
    grants.add(Grant::tool(fs, &rm));
    assert!(grants.cover(&received) && grants.covers(fs, &Subject::Tool(&rm)));

    let who = "subagent \"worker\" (pid 42) in ~/p";
    let q = question(3, &received, Duration::from_secs(5), By::Member(who));
    let title = &q.title;
    assert!(
        title.contains("Asked for subagent \"worker\" (pid 42) in ~/p, in this session's family"),
        "{title}"
    );
    assert!(
        title.contains("Hints (the server's own claim): destructive"),
        "{title}"
    );
    assert!(
        title.contains("  path: \"/tmp/x\"") && title.contains("  token: (hidden)"),
        "{title}"
    );
    assert_eq!(q.options[1].remember, Some(Grant::tool(fs, &rm).entry()));
}

#[test]
fn a_rogue_members_request_gets_no_grant_but_for_what_its_dialog_names() {
    let (tree, config) = gated_fs();
    let fs = server(&config, "fs");
    let home = tree.home.display().to_string();
    let ls = tool(
        "fs",
        "ls",
        json!({ "annotations": { "readOnlyHint": true } }),
    );
    let rm = tool(
        "fs",
        "rm",
        json!({ "annotations": { "destructiveHint": true } }),
    );
    // A rogue sends text of its own making, and a grant's hash besides.
    let mut forged =
        serde_json::to_value(request::new(&Subject::Tool(&ls), fs, &json!({}), &home)).unwrap();
    forged["arguments"] = json!(format!(
        "Arguments:\n  a: \u{1b}[2Jx\u{202e}\n{}",
        "  b: 1\n".repeat(40)
    ));
    forged["because"] = json!("x".repeat(5000));
    forged["hash"] = json!(Grant::tool(fs, &rm).hash);
    let request: Request = serde_json::from_value(forged).unwrap();
    let request = request.cleaned();
    let title = question(1, &request, Duration::from_secs(5), By::Member("m")).title;
    assert!(
        !title.contains('\u{1b}') && !title.contains('\u{202e}'),
        "{title}"
    );
    assert!(
        title.lines().count() < 30 && title.lines().all(|l| l.chars().count() <= 260),
        "{title}"
    );
    // The person allows the tool its dialog names (ls): the grant is ls's, not rm's.
    let grants = Grants::default();
    grants.add(request::grants(&request).1.unwrap());
    assert!(grants.covers(fs, &Subject::Tool(&ls)));
    assert!(!grants.covers(fs, &Subject::Tool(&rm)));
}
