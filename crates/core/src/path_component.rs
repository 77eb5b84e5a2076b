//! Server names in paths (`<agentDir>/mcp-oauth/<server>/tokens.json`). A name is whatever a
//! config says, `../../outside` and `/abs/dir` included, so it becomes a path component only when
//! it is one safe component (`[A-Za-z0-9_-]+`); any other name is encoded as
//! `sha256-<hex of its UTF-8 bytes>`, the form pi-mcp-adapter gives its token directories. Every
//! path built from a server name goes through [`component`].

use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// `name` as one path component: itself when it is safe, else [`hashed`].
pub fn component(name: &str) -> Cow<'_, str> {
    let safe = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if safe {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(hashed(name))
    }
}

/// `sha256-<hex>` of `name`: a component for any name.
pub fn hashed(name: &str) -> String {
    let digest = Sha256::digest(name.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_names_are_used_as_they_are() {
        for name in ["github", "my-server_2", "A"] {
            assert_eq!(component(name), name);
        }
        assert_eq!(
            component("../../../outside"),
            "sha256-e1a01a12d2ce52e7ebc44d5879e35c09f794475daa43c249c06f8bf998483d94"
        );
        assert_eq!(
            component("/abs/dir"),
            "sha256-00d65646c1db1bd0ece1518dd85f533923f16b77ffbd81c77594fca7243006f9"
        );
        for name in ["", ".", "..", "a/b", "a\\b", "c:", "my.server", "a b", "é"] {
            let encoded = component(name);
            assert!(
                encoded.starts_with("sha256-") && encoded.len() == 71,
                "{name}"
            );
        }
    }
}
