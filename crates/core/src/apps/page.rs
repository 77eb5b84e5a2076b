//! The host page: the app's tab, on the host origin. It holds no logic of its own: the bundled
//! host script (`host.js`, ext-apps' `AppBridge`) reads the page's settings, frames the app's
//! document from the app origin in a sandbox, and relays between the two.

use super::registry::AppSession;
use pi_mcp_connection::clean;
use serde_json::{json, Value};

/// The sandbox of the app's frame: scripts and forms, never `allow-same-origin` (its origin
/// stays opaque), no popups, no navigation of the tab.
pub const SANDBOX: &str = "allow-scripts allow-forms";

/// The host page's own policy: its script from its origin, requests to its origin, frames
/// from the app origin only; nothing may frame it.
pub fn policy(app_port: u16) -> String {
    format!(
        "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src data:; frame-src http://127.0.0.1:{app_port}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

/// The settings the host script reads: where the document and the bridge are, and the host
/// context `ui/initialize` answers with.
pub fn settings(session: &AppSession, app_port: u16, context: &Value) -> Value {
    let id = &session.app.id;
    let frame = &session.document().frame;
    json!({
        "token": session.token,
        // Where the tab stays (a reload comes back with the token, not the used-up code).
        "address": format!("/app/{id}/?t={}", session.token),
        "rpc": format!("/app/{id}/rpc"),
        "events": format!("/app/{id}/events"),
        "document": format!("http://127.0.0.1:{app_port}/doc/{id}?t={}", session.doc_token),
        "sandbox": SANDBOX,
        "allow": frame.allow.join("; "),
        "permissions": frame.granted(),
        "border": frame.border,
        "server": session.app.server,
        "tool": session.app.tool,
        "hostContext": context,
    })
}

pub fn html(session: &AppSession, settings: &Value) -> String {
    let title = escape(&format!(
        "{} — MCP server {}",
        clean::line(&session.app.tool),
        clean::line(&session.app.server)
    ));
    // `<` written as an escape: the settings cannot end their script element.
    let settings = settings.to_string().replace('<', "\\u003c");
    let script = format!("/app/{}/host.js?t={}", session.app.id, session.token);
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\"><title>{title}</title>\
         <style>html,body{{margin:0;height:100%;background:Canvas;color:CanvasText;font-family:system-ui,sans-serif}}\
         #app{{display:block;border:0;width:100%;height:100%;box-sizing:border-box}}#app.border{{border:1px solid GrayText;border-radius:8px;background:Canvas}}#status{{position:fixed;bottom:0;right:0;padding:.2em .6em;font-size:12px;opacity:.7}}</style>\
         </head><body><script id=\"pi-mcp-app\" type=\"application/json\">{settings}</script>\
         <script type=\"module\" src=\"{script}\"></script></body></html>"
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
