//! What a listener on the loopback interface needs (the sign-in's redirect, MCP Apps' pages):
//! unguessable values, an HTTP/1.1 request read with bounds, and a response written whole.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The most a request head may take.
pub const MAX_HEAD: usize = 16 * 1024;

/// 32 random bytes, base64url: 43 characters.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::getrandom(&mut bytes).expect("the operating system's random number generator");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Whether two secrets are equal, in a time that does not depend on where they differ.
pub fn same_secret(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

/// Reads an HTTP/1.1 request head (at most [`MAX_HEAD`]): its text, and the bytes read past it
/// (the start of a body). `None` when the peer sent nothing usable.
pub async fn read_head(
    stream: &mut (impl AsyncRead + Unpin),
) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 2048];
    let end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_HEAD {
            return Ok(None);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
    Ok(Some((head, buffer[end + 4..].to_vec())))
}

/// The method and target of a request head.
pub fn request_line(head: &str) -> Option<(&str, &str)> {
    let mut first = head.lines().next()?.split_whitespace();
    Some((first.next()?, first.next()?))
}

/// The value of the head's header `name` (case-insensitive), trimmed; `None` when absent or
/// given twice (a request that repeats `Host` or a token is not trusted with either).
pub fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    let mut values = head.lines().skip(1).filter_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    });
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

/// The rest of a body of `Content-Length` bytes after `started` (what [`read_head`] read past
/// the head); `None` when it is missing, not a number, over `max`, or the peer stops early.
pub async fn read_body(
    stream: &mut (impl AsyncRead + Unpin),
    head: &str,
    mut started: Vec<u8>,
    max: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    let Some(length) = header(head, "content-length").and_then(|l| l.parse::<usize>().ok()) else {
        return Ok(None);
    };
    if length > max || started.len() > length {
        return Ok(None);
    }
    let mut rest = vec![0u8; length - started.len()];
    match stream.read_exact(&mut rest).await {
        Ok(_) => {
            started.extend_from_slice(&rest);
            Ok(Some(started))
        }
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes a whole response (`headers`: extra lines, each `Name: value`) and closes the stream.
pub async fn respond(
    stream: &mut (impl AsyncWrite + Unpin),
    status: u16,
    content_type: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        410 => "Gone",
        413 => "Content Too Large",
        421 => "Misdirected Request",
        429 => "Too Many Requests",
        _ => "Error",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nCache-Control: no-store\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        let token = random_token();
        assert_eq!(token.len(), 43);
        assert_ne!(token, random_token());
        assert!(same_secret(&token, &token.clone()));
        assert!(!same_secret(&token, &token[..42]));
        assert!(!same_secret(&token, &format!("{}x", &token[..42])));
        assert!(!same_secret("", &token));
    }

    #[test]
    fn a_header_repeated_is_no_header() {
        let head = "GET / HTTP/1.1\r\nHost: 127.0.0.1:1\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 3";
        assert_eq!(header(head, "host"), Some("127.0.0.1:1"));
        assert_eq!(header(head, "x-a"), None);
        assert_eq!(header(head, "content-length"), Some("3"));
        assert_eq!(header(head, "missing"), None);
        assert_eq!(request_line(head), Some(("GET", "/")));
    }

    #[tokio::test]
    async fn a_body_is_read_to_its_length_and_no_further() {
        let head = "POST / HTTP/1.1\r\nContent-Length: 10";
        let mut rest: &[u8] = b"67890tail";
        let body = read_body(&mut rest, head, b"12345".to_vec(), 64)
            .await
            .unwrap();
        assert_eq!(body.as_deref(), Some(&b"1234567890"[..]));
        let mut rest: &[u8] = b"";
        assert_eq!(
            read_body(&mut rest, head, vec![], 9).await.unwrap(),
            None,
            "over the bound"
        );
        assert_eq!(
            read_body(&mut rest, head, vec![], 64).await.unwrap(),
            None,
            "cut short"
        );
        let no_length = "POST / HTTP/1.1\r\nHost: x";
        assert_eq!(
            read_body(&mut rest, no_length, vec![], 64).await.unwrap(),
            None
        );
    }
}
