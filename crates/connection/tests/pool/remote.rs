//! Remote connections to the test server over Streamable HTTP (`/mcp`) and the legacy HTTP+SSE
//! transport (`/sse`).

use crate::support::*;
use pi_mcp_connection::pool::{
    ClientFeatures, ConnectError, ConnectSpec, Connection, Pool, Protocol, RemoteKind, RemoteSpec,
    RequestOptions, TransportSpec,
};
use pi_mcp_connection::secret::Secret;
use serde_json::json;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The test server serving HTTP on a free port; killed on drop.
struct Served {
    child: Child,
    port: u16,
}

impl Served {
    async fn start() -> Served {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Served::on(port).await
    }

    async fn on(port: u16) -> Served {
        let child = Command::new(test_server())
            .args(["--http", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let served = Served { child, port };
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return served;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the test server did not listen on {port}");
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn remote(url: String, prefer: Option<RemoteKind>) -> ConnectSpec {
    ConnectSpec {
        server: "remote".into(),
        transport: TransportSpec::Remote(RemoteSpec {
            url: Secret::new(url),
            headers: vec![],
            authorization: None,
            credentials: None,
            ca_file: None,
            prefer,
            signer: None,
        }),
        protocol: Protocol::Initialize,
        timeout: Duration::from_secs(20),
        debug: false,
        client: ClientFeatures::none(),
        keeper: None,
    }
}

fn opts() -> RequestOptions {
    RequestOptions::new(Duration::from_secs(10))
}

async fn echo_works(conn: &Connection) {
    let listing = conn.listed(&bounds(Duration::from_secs(10))).await.unwrap();
    assert!(listing.tools.iter().any(|t| t["name"] == "echo"));
    let result = conn
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "hi there"}}),
            opts(),
        )
        .await
        .unwrap();
    assert!(result.to_string().contains("hi there"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http() {
    let served = Served::start().await;
    let (pool, _notices) = Pool::new();
    let url = format!("http://127.0.0.1:{}/mcp", served.port);
    let conn = pool.connect(remote(url, None)).await.unwrap();
    assert_eq!(conn.remote_kind(), Some(RemoteKind::StreamableHttp));
    assert_eq!(conn.pid(), None);
    echo_works(&conn).await;
    pool.close("remote").await;
    assert!(pool.get("remote").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sse_fallback_and_preference() {
    let served = Served::start().await;
    let (pool, _notices) = Pool::new();
    let url = format!("http://127.0.0.1:{}/sse", served.port);
    let conn = pool.connect(remote(url.clone(), None)).await.unwrap();
    assert_eq!(conn.remote_kind(), Some(RemoteKind::Sse));
    echo_works(&conn).await;
    pool.close("remote").await;

    let started = std::time::Instant::now();
    let conn = pool
        .connect(remote(url, Some(RemoteKind::Sse)))
        .await
        .unwrap();
    assert_eq!(conn.remote_kind(), Some(RemoteKind::Sse));
    echo_works(&conn).await;
    eprintln!(
        "sse connect with the remembered transport: {:?}",
        started.elapsed()
    );
    pool.close("remote").await;
}

#[tokio::test]
async fn unreachable_and_invalid_urls_fail_fast() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (pool, _notices) = Pool::new();
    let started = std::time::Instant::now();
    let err = pool
        .connect(remote(
            format!("http://127.0.0.1:{port}/mcp?key=s3cret"),
            None,
        ))
        .await
        .err()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let text = err.to_string();
    assert!(matches!(err, ConnectError::Failed(_)), "{err:?}");
    assert!(
        text.contains("cannot connect") && text.contains(&format!("127.0.0.1:{port}/mcp?…")),
        "{text}"
    );
    assert!(!text.contains("s3cret"), "{text}");
    let err = pool
        .connect(remote("ftp://example.org/x".into(), None))
        .await
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("is not an http:// or https:// URL"),
        "{err}"
    );
}

/// A TLS front for `backend` with a fresh self-signed certificate for `localhost`; returns its
/// port and the certificate's PEM.
async fn tls_front(backend: u16) -> (u16, String) {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(certified.cert.der().to_vec())],
            key,
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                if let Ok(mut plain) = tokio::net::TcpStream::connect(("127.0.0.1", backend)).await
                {
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                }
            });
        }
    });
    (port, certified.cert.pem())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_ca_file() {
    let served = Served::start().await;
    let (port, pem) = tls_front(served.port).await;
    let ca = std::env::temp_dir().join(format!("pi-mcp-native-ca-{}.pem", std::process::id()));
    std::fs::write(&ca, pem).unwrap();
    let (pool, _notices) = Pool::new();
    let url = format!("https://localhost:{port}/mcp");

    // Not trusted without the CA file: a clear TLS failure.
    let err = pool.connect(remote(url.clone(), None)).await.err().unwrap();
    assert!(
        err.to_string().to_lowercase().contains("certificate"),
        "{err}"
    );

    let mut spec = remote(url, None);
    if let TransportSpec::Remote(r) = &mut spec.transport {
        r.ca_file = Some(ca.clone());
    }
    let conn = pool.connect(spec).await.unwrap();
    echo_works(&conn).await;
    pool.close("remote").await;
    std::fs::remove_file(&ca).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_gets_a_new_session() {
    // Streamable HTTP: the next request gets 404 and initializes again; SSE: the dropped stream
    // is reopened and the new session initialized like the old one.
    for path in ["mcp", "sse"] {
        let served = Served::start().await;
        let port = served.port;
        let (pool, _notices) = Pool::new();
        let conn = pool
            .connect(remote(format!("http://127.0.0.1:{port}/{path}"), None))
            .await
            .unwrap();
        echo_works(&conn).await;
        drop(served);
        let _again = Served::on(port).await;
        // The same connection goes on, on a new session.
        echo_works(&conn).await;
        assert!(conn.is_alive(), "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_protocol_costs_legacy_servers_no_probe_wait() {
    for (mode, path, kind) in [
        ("streamable", "mcp", RemoteKind::StreamableHttp),
        ("sse", "sse", RemoteKind::Sse),
    ] {
        let served = Served::start().await;
        let (pool, _notices) = Pool::new();
        let mut spec = remote(format!("http://127.0.0.1:{}/{path}", served.port), None);
        spec.protocol = Protocol::Auto;
        let started = std::time::Instant::now();
        let conn = pool.connect(spec).await.unwrap();
        // rmcp's discover probe would wait 10 s for a silent server; an HTTP server answers.
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{mode}: {:?}",
            started.elapsed()
        );
        assert_eq!(conn.remote_kind(), Some(kind));
        echo_works(&conn).await;
        pool.close("remote").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_2026_protocol_does_not_fall_back_to_sse() {
    let served = Served::start().await;
    let (pool, _notices) = Pool::new();
    let mut spec = remote(format!("http://127.0.0.1:{}/sse", served.port), None);
    spec.protocol = Protocol::Modern;
    let err = pool.connect(spec).await.err().unwrap().to_string();
    assert!(err.contains("has no legacy SSE transport"), "{err}");
}
