//! The browser's way back: the redirect URI we register (Pi's `callbackPort`/`callbackUrl`,
//! pi-mcp-adapter's `redirectUri` with `{port}` and `MCP_OAUTH_CALLBACK_PORT`), a listener on the
//! loopback interface that takes the authorization response and shows a page, and the same
//! response pasted by hand (the redirected URL, or the code alone).

use crate::config::{Env, OAuthConfig};
use crate::loopback::{self, read_head, request_line};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use url::{Host, Url};

/// pi-mcp-adapter's redirect for pre-registered clients: `http://localhost:<port>/callback`.
const PRE_REGISTERED_PORT: u16 = 19876;
const PORT_VARIABLE: &str = "MCP_OAUTH_CALLBACK_PORT";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Port {
    /// Must be this one (a registered redirect URI names it).
    Fixed(u16),
    /// This one if free (a client registered before used it), else any.
    Prefer(u16),
    Any,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Shape {
    /// Used exactly as written.
    Exact(String),
    /// The port is added to it.
    WithPort(Url),
    /// `{port}` is replaced by the port.
    Template(String),
}

/// The redirect URI to register and send, and where to listen for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    shape: Shape,
    port: Port,
    /// Loopback address and path to listen on; `None`: only pasting completes the sign-in
    /// (an HTTPS or remote redirect URI).
    listen: Option<(IpAddr, String)>,
}

impl Plan {
    /// The redirect URI for `config`: `callbackUrl`, `redirectUri`, `callbackPort`, then
    /// pi-mcp-adapter's default for a pre-registered client, else `http://127.0.0.1:<free
    /// port>/callback` (the port of `registered`, a URI a stored client was registered with,
    /// when it is free).
    pub fn new(config: &OAuthConfig, env: &Env, registered: Option<&str>) -> Result<Plan, String> {
        let env_port = env
            .get(PORT_VARIABLE)
            .and_then(|p| p.trim().parse::<u16>().ok())
            .filter(|p| *p > 0);
        let configured_port = config.callback_port.or(env_port);
        if let Some(raw) = &config.callback_url {
            let url = Url::parse(raw)
                .ok()
                .filter(|u| u.scheme() == "http" && super::metadata::is_loopback(u))
                .ok_or_else(|| {
                    format!("`oauth.callbackUrl` {raw:?} must be an http:// URL on localhost, 127.0.0.1 or [::1]")
                })?;
            let listen = Some(listen_on(&url)?);
            return Ok(match url.port() {
                Some(port) => Plan {
                    shape: Shape::Exact(raw.clone()),
                    port: Port::Fixed(port),
                    listen,
                },
                None => Plan {
                    port: configured_port.map_or(Port::Any, Port::Fixed),
                    shape: Shape::WithPort(url),
                    listen,
                },
            });
        }
        if let Some(raw) = &config.redirect_uri {
            let port = configured_port.map_or(Port::Any, Port::Fixed);
            let probe = raw.replace("{port}", "1");
            let url = Url::parse(&probe)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https"))
                .ok_or_else(|| format!("`oauth.redirectUri` {raw:?} is not an http(s) URL"))?;
            let local = url.scheme() == "http" && super::metadata::is_loopback(&url);
            let listen = if local { Some(listen_on(&url)?) } else { None };
            return Ok(if raw.contains("{port}") {
                Plan {
                    shape: Shape::Template(raw.clone()),
                    port,
                    listen,
                }
            } else {
                Plan {
                    port: url.port().map_or(Port::Any, Port::Fixed),
                    shape: Shape::Exact(raw.clone()),
                    listen,
                }
            });
        }
        let default = |host: &str, port: Port| -> Result<Plan, String> {
            let url = Url::parse(&format!("http://{host}/callback")).map_err(|e| e.to_string())?;
            Ok(Plan {
                listen: Some(listen_on(&url)?),
                shape: Shape::WithPort(url),
                port,
            })
        };
        if let Some(port) = config.callback_port {
            return default("127.0.0.1", Port::Fixed(port));
        }
        if config.client_id.is_some() {
            return default(
                "localhost",
                Port::Fixed(env_port.unwrap_or(PRE_REGISTERED_PORT)),
            );
        }
        let remembered = registered
            .and_then(|uri| Url::parse(uri).ok())
            .filter(|u| u.host_str() == Some("127.0.0.1") && u.path() == "/callback")
            .and_then(|u| u.port());
        default(
            "127.0.0.1",
            env_port.map_or(remembered.map_or(Port::Any, Port::Prefer), Port::Fixed),
        )
    }

    fn finish(&self, port: u16) -> String {
        match &self.shape {
            Shape::Exact(uri) => uri.clone(),
            Shape::Template(uri) => uri.replace("{port}", &port.to_string()),
            Shape::WithPort(url) => {
                let mut url = url.clone();
                let _ = url.set_port(Some(port));
                url.to_string()
            }
        }
    }

    /// Binds the listener (when there is one) and returns the final redirect URI with it.
    pub async fn listen(&self, state: &str) -> Result<Listener, String> {
        let Some((ip, path)) = &self.listen else {
            let port = match self.port {
                Port::Fixed(p) | Port::Prefer(p) => p,
                Port::Any => 0,
            };
            return Ok(Listener {
                redirect_uri: self.finish(port),
                arrivals: None,
                task: None,
            });
        };
        let bind = |port: u16| TcpListener::bind((*ip, port));
        let socket = match self.port {
            Port::Fixed(port) => bind(port).await.map_err(|e| {
                format!("cannot listen on {ip} port {port} for the sign-in's redirect ({e}); free the port or change `oauth.callbackPort`/`callbackUrl`/`redirectUri`")
            })?,
            Port::Prefer(port) => match bind(port).await {
                Ok(socket) => socket,
                Err(_) => bind(0).await.map_err(|e| format!("cannot listen for the redirect: {e}"))?,
            },
            Port::Any => bind(0)
                .await
                .map_err(|e| format!("cannot listen for the redirect: {e}"))?,
        };
        let port = socket.local_addr().map_err(|e| e.to_string())?.port();
        let (tx, rx) = mpsc::channel(1);
        let task = tokio::spawn(serve(socket, path.clone(), state.to_string(), tx));
        Ok(Listener {
            redirect_uri: self.finish(port),
            arrivals: Some(rx),
            task: Some(task),
        })
    }
}

fn listen_on(url: &Url) -> Result<(IpAddr, String), String> {
    let ip = match url.host() {
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
        Some(Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        }
        _ => return Err(format!("{url} is not on this machine")),
    };
    if !ip.is_loopback() && ip != IpAddr::V6(Ipv6Addr::LOCALHOST) {
        return Err(format!("{url} is not on this machine"));
    }
    Ok((ip, url.path().to_string()))
}

/// An authorization response (RFC 6749 §4.1.2, RFC 9207 `iss`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    pub code: Option<String>,
    pub state: Option<String>,
    pub iss: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl Response {
    fn from_url(url: &Url) -> Response {
        let mut response = Response::default();
        for (key, value) in url.query_pairs() {
            let slot = match key.as_ref() {
                "code" => &mut response.code,
                "state" => &mut response.state,
                "iss" => &mut response.iss,
                "error" => &mut response.error,
                "error_description" => &mut response.error_description,
                _ => continue,
            };
            *slot = Some(value.into_owned());
        }
        response
    }

    /// What the user pasted: the redirected URL (it must be this sign-in's redirect URI), or
    /// the code alone.
    pub fn pasted(input: &str, redirect_uri: &str) -> Result<Response, String> {
        let input = input.trim();
        if input.is_empty() {
            return Err("nothing was pasted".into());
        }
        if let Ok(url) = Url::parse(input) {
            let expected = Url::parse(redirect_uri).map_err(|e| e.to_string())?;
            if url.origin() != expected.origin() || url.path() != expected.path() {
                return Err(format!(
                    "the pasted URL is not this sign-in's redirect ({redirect_uri}); paste the address the browser ended on"
                ));
            }
            return Ok(Response::from_url(&url));
        }
        if input.chars().any(char::is_whitespace) || input.contains('=') {
            return Err("paste the whole address the browser ended on, or just the code".into());
        }
        Ok(Response {
            code: Some(input.to_string()),
            ..Response::default()
        })
    }
}

/// The page the browser shows once the sign-in is decided.
#[derive(Clone, Debug)]
pub struct Page {
    pub ok: bool,
    pub message: String,
}

/// A response that reached the listener; the browser waits for `reply`.
pub struct Arrival {
    pub response: Response,
    pub reply: oneshot::Sender<Page>,
}

pub struct Listener {
    pub redirect_uri: String,
    arrivals: Option<mpsc::Receiver<Arrival>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Listener {
    /// The next response for this sign-in; never resolves without a listener.
    pub async fn next(&mut self) -> Arrival {
        match &mut self.arrivals {
            Some(rx) => match rx.recv().await {
                Some(arrival) => arrival,
                None => std::future::pending().await,
            },
            None => std::future::pending().await,
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn serve(socket: TcpListener, path: String, state: String, arrivals: mpsc::Sender<Arrival>) {
    loop {
        let Ok((stream, _)) = socket.accept().await else {
            return;
        };
        let (path, state, arrivals) = (path.clone(), state.clone(), arrivals.clone());
        tokio::spawn(async move {
            let _ = answer(stream, &path, &state, &arrivals).await;
        });
    }
}

async fn answer(
    mut stream: TcpStream,
    path: &str,
    state: &str,
    arrivals: &mpsc::Sender<Arrival>,
) -> std::io::Result<()> {
    let Some((head, _)) = read_head(&mut stream).await? else {
        return Ok(());
    };
    let Some((method, target)) = request_line(&head) else {
        return Ok(());
    };
    let Ok(url) = Url::parse(&format!("http://localhost{target}")) else {
        return respond(&mut stream, 400, &page(false, "Not a sign-in address.")).await;
    };
    if method != "GET" || url.path() != path {
        return respond(&mut stream, 404, &page(false, "Not found.")).await;
    }
    let response = Response::from_url(&url);
    if response.state.as_deref() != Some(state) {
        let text = "This page belongs to another sign-in (an old tab?). Start the sign-in again.";
        return respond(&mut stream, 400, &page(false, text)).await;
    }
    let (reply, verdict) = oneshot::channel();
    if arrivals.send(Arrival { response, reply }).await.is_err() {
        return respond(&mut stream, 410, &page(false, "This sign-in is over.")).await;
    }
    let page_of = match verdict.await {
        Ok(p) => p,
        Err(_) => Page {
            ok: false,
            message: "The sign-in stopped.".into(),
        },
    };
    let status = if page_of.ok { 200 } else { 400 };
    respond(&mut stream, status, &page(page_of.ok, &page_of.message)).await
}

async fn respond(stream: &mut TcpStream, status: u16, html: &str) -> std::io::Result<()> {
    let html_type = "text/html; charset=utf-8";
    loopback::respond(stream, status, html_type, &[], html.as_bytes()).await
}

fn page(ok: bool, message: &str) -> String {
    let title = if ok { "Signed in" } else { "Sign-in failed" };
    let escaped = message
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;");
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>body{{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;color:#222}}\
         h1{{font-size:1.4em}}</style></head><body><h1>{title}</h1><p>{escaped}</p></body></html>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OAuthConfig;

    fn plan(config: OAuthConfig, env: &[(&str, &str)], registered: Option<&str>) -> Plan {
        let env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Plan::new(&config, &env, registered).unwrap()
    }

    #[test]
    fn redirect_uris_follow_pi_and_the_adapter() {
        let fresh = plan(OAuthConfig::default(), &[], None);
        assert_eq!(fresh.port, Port::Any);
        assert_eq!(fresh.finish(4000), "http://127.0.0.1:4000/callback");
        let again = plan(
            OAuthConfig::default(),
            &[],
            Some("http://127.0.0.1:5123/callback"),
        );
        assert_eq!(again.port, Port::Prefer(5123));
        let pre = OAuthConfig {
            client_id: Some("c".into()),
            ..OAuthConfig::default()
        };
        assert_eq!(
            plan(pre.clone(), &[], None).finish(19876),
            "http://localhost:19876/callback"
        );
        assert_eq!(
            plan(pre, &[("MCP_OAUTH_CALLBACK_PORT", "7000")], None).port,
            Port::Fixed(7000)
        );
        let exact = OAuthConfig {
            callback_url: Some("http://localhost:8765/oauth/cb".into()),
            ..OAuthConfig::default()
        };
        let exact = plan(exact, &[], None);
        assert_eq!(
            (exact.finish(8765).as_str(), exact.port),
            ("http://localhost:8765/oauth/cb", Port::Fixed(8765))
        );
        let template = OAuthConfig {
            redirect_uri: Some("http://127.0.0.1:{port}/cb".into()),
            callback_port: Some(9000),
            ..OAuthConfig::default()
        };
        assert_eq!(
            plan(template, &[], None).finish(9000),
            "http://127.0.0.1:9000/cb"
        );
        let remote = OAuthConfig {
            redirect_uri: Some("https://app.example/cb".into()),
            ..OAuthConfig::default()
        };
        assert_eq!(plan(remote, &[], None).listen, None);
        let bad = OAuthConfig {
            callback_url: Some("http://example.com/callback".into()),
            ..OAuthConfig::default()
        };
        assert!(Plan::new(&bad, &Env::new(), None)
            .unwrap_err()
            .contains("callbackUrl"));
    }

    #[test]
    fn pasted_responses() {
        let redirect = "http://127.0.0.1:4000/callback";
        let r = Response::pasted(
            "http://127.0.0.1:4000/callback?code=c1&state=s&iss=https%3A%2F%2Fas",
            redirect,
        )
        .unwrap();
        assert_eq!(
            (r.code.as_deref(), r.state.as_deref(), r.iss.as_deref()),
            (Some("c1"), Some("s"), Some("https://as"))
        );
        assert_eq!(
            Response::pasted(" c2 \n", redirect)
                .unwrap()
                .code
                .as_deref(),
            Some("c2")
        );
        assert!(Response::pasted("http://evil.example/callback?code=x", redirect).is_err());
        assert!(Response::pasted("code is x", redirect).is_err());
    }
}
