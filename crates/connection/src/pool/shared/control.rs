//! `pi-mcp broker status|stop`: a connection to the broker that asks for its controls instead of
//! a server. It never starts a broker: with none running, there is nothing to report or stop.

use super::place::Place;
use super::wire::{self, BrokerStatus, Hello};
use super::{dial, Dial, Stream};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// How long the broker may take to answer a control request.
const ANSWER_LIMIT: Duration = Duration::from_secs(5);
/// How long a stopping broker may take to exit (its servers first).
const EXIT_LIMIT: Duration = Duration::from_secs(15);

/// The running broker's state; `None` when no broker runs at `place`.
pub async fn status(place: &Place) -> Result<Option<BrokerStatus>, String> {
    let Some(mut controls) = Controls::open(place).await? else {
        return Ok(None);
    };
    let status = controls.ask(wire::STATUS).await?;
    serde_json::from_value(status)
        .map(Some)
        .map_err(|e| format!("the broker's status is malformed: {e}"))
}

/// Stops the broker at `place` (its servers first) and waits until it has exited; `false` when
/// none was running.
pub async fn stop(place: &Place) -> Result<bool, String> {
    let Some(mut controls) = Controls::open(place).await? else {
        return Ok(false);
    };
    controls.ask(wire::STOP).await?;
    drop(controls);
    let until = Instant::now() + EXIT_LIMIT;
    while running(place).await {
        if Instant::now() >= until {
            return Err(format!(
                "the broker at {} was told to stop but still runs after {} s; see {}",
                place.endpoint(),
                EXIT_LIMIT.as_secs(),
                place.log().display()
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(true)
}

/// Whether a broker still holds `place`: its lock, held until the process is gone.
#[cfg(unix)]
async fn running(place: &Place) -> bool {
    place.held()
}

#[cfg(not(unix))]
async fn running(place: &Place) -> bool {
    dial(place).await.is_ok()
}

struct Controls {
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<Stream>>>,
    write: tokio::io::WriteHalf<Stream>,
    next: u64,
}

impl Controls {
    async fn open(place: &Place) -> Result<Option<Controls>, String> {
        let stream = match dial(place).await {
            Ok(stream) => stream,
            Err(Dial::Absent) => return Ok(None),
            Err(Dial::Refused(why)) => return Err(why),
        };
        let (read, write) = tokio::io::split(stream);
        let mut controls = Controls {
            lines: BufReader::new(read).lines(),
            write,
            next: 0,
        };
        let hello = serde_json::to_value(Hello::Control {}).unwrap_or(Value::Null);
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": { "experimental": { wire::CAPABILITY: hello } },
            "clientInfo": { "name": "pi-mcp", "version": env!("CARGO_PKG_VERSION") },
        });
        controls.request("initialize", params).await?;
        Ok(Some(controls))
    }

    async fn ask(&mut self, method: &str) -> Result<Value, String> {
        self.request(method, json!({})).await
    }

    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let exchange = async {
            self.write
                .write_all(format!("{line}\n").as_bytes())
                .await
                .map_err(|e| format!("cannot write to the broker: {e}"))?;
            loop {
                let Some(line) = self
                    .lines
                    .next_line()
                    .await
                    .map_err(|e| format!("cannot read from the broker: {e}"))?
                else {
                    return Err("the broker closed the connection".to_string());
                };
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if message.get("id") != Some(&json!(id)) {
                    continue; // a notification
                }
                if let Some(result) = message.get("result") {
                    return Ok(result.clone());
                }
                let error = message["error"]["message"]
                    .as_str()
                    .unwrap_or("no reason given");
                return Err(format!("the broker refused {method}: {error}"));
            }
        };
        tokio::time::timeout(ANSWER_LIMIT, exchange)
            .await
            .map_err(|_| {
                format!(
                    "the broker did not answer {method} within {} s",
                    ANSWER_LIMIT.as_secs()
                )
            })?
    }
}
