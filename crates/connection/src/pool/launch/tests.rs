use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn temp_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "pi-mcp-launch-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn npx_command_lines() {
    let parse = |cmd: &str, args: &[&str]| npx::parse(cmd, &strings(args));
    let inv = parse(
        "npx",
        &["-y", "@modelcontextprotocol/server-everything", "stdio"],
    )
    .unwrap();
    assert_eq!(
        (inv.name.as_str(), inv.version, inv.bin, inv.args),
        (
            "@modelcontextprotocol/server-everything",
            None,
            None,
            strings(&["stdio"])
        )
    );
    let inv = parse("/usr/bin/npx", &["--yes", "srv@1.2.3", "--port", "1"]).unwrap();
    assert_eq!(
        (inv.name.as_str(), inv.version.as_deref(), inv.args),
        ("srv", Some("1.2.3"), strings(&["--port", "1"]))
    );
    let inv = parse("npx", &["-p", "@s/pkg@latest", "pkg-cli", "x"]).unwrap();
    assert_eq!(
        (inv.name.as_str(), inv.version, inv.bin.as_deref()),
        ("@s/pkg", None, Some("pkg-cli"))
    );
    let inv = parse(
        "npm",
        &["exec", "--yes", "--package=srv", "--", "srv-bin", "-v"],
    )
    .unwrap();
    assert_eq!(
        (inv.name.as_str(), inv.bin.as_deref(), inv.args),
        ("srv", Some("srv-bin"), strings(&["-v"]))
    );
    for refused in [
        parse("npx", &["-c", "echo hi"]),
        parse("npx", &["github:user/repo"]),
        parse("npx", &["./local-dir"]),
        parse("npx", &["user/repo"]),
        parse("npx", &["-p", "a", "-p", "b", "bin"]),
        parse("npm", &["install", "x"]),
        parse("node", &["server.js"]),
        parse("npx", &[]),
    ] {
        assert!(refused.is_none(), "{refused:?}");
    }
}

#[test]
fn uvx_command_lines() {
    let parse = |cmd: &str, args: &[&str]| uvx::parse(cmd, &strings(args));
    let inv = parse("uvx", &["mcp-server-time", "--local-timezone", "UTC"]).unwrap();
    assert_eq!(
        (
            inv.package.as_str(),
            inv.tool.as_str(),
            inv.version,
            inv.args
        ),
        (
            "mcp-server-time",
            "mcp-server-time",
            None,
            strings(&["--local-timezone", "UTC"])
        )
    );
    let inv = parse(
        "uvx",
        &[
            "--from",
            "mcp-server-git==2026.10.19",
            "mcp-server-git",
            "-r",
            ".",
        ],
    )
    .unwrap();
    assert_eq!(
        (
            inv.package.as_str(),
            inv.version.as_deref(),
            inv.tool.as_str()
        ),
        ("mcp-server-git", Some("2026.10.19"), "mcp-server-git")
    );
    let inv = parse("/opt/uv", &["tool", "run", "--offline", "tool@1.0"]).unwrap();
    assert_eq!(
        (inv.tool.as_str(), inv.version.as_deref()),
        ("tool", Some("1.0"))
    );
    assert!(parse("uvx", &["--with", "extra", "tool"]).is_none());
    assert!(parse("uvx", &["git+https://x/y"]).is_none());
    assert!(parse("uv", &["run", "x.py"]).is_none());
}

/// An npm cache with two installs of `@s/srv` (1.0.0, then 2.0.0) and a project install of `local-srv`.
struct NpmTree {
    root: PathBuf,
}

impl NpmTree {
    fn new() -> NpmTree {
        let root = temp_dir();
        for (dir, version) in [("aaa", "1.0.0"), ("bbb", "2.0.0")] {
            let pkg = root.join(format!("npm-cache/_npx/{dir}/node_modules/@s/srv"));
            write(
                &pkg.join("package.json"),
                &format!(
                    r#"{{"name":"@s/srv","version":"{version}","bin":{{"srv":"dist/index.js"}}}}"#
                ),
            );
            write(&pkg.join("dist/index.js"), "console.log(1)");
            std::thread::sleep(std::time::Duration::from_millis(20)); // distinct mtimes
        }
        let local = root.join("project/node_modules/local-srv");
        write(
            &local.join("package.json"),
            r#"{"name":"local-srv","version":"0.1.0","bin":"bin/run"}"#,
        );
        write(&local.join("bin/run"), "#!/usr/bin/env node\nrequire('x')");
        let native = root.join("project/node_modules/native-srv");
        write(
            &native.join("package.json"),
            r#"{"name":"native-srv","version":"1.0.0","bin":{"native-srv":"srv"}}"#,
        );
        write(&native.join("srv"), "\x7fELF");
        std::fs::create_dir_all(root.join("project/sub")).unwrap();
        NpmTree { root }
    }

    fn resolve(&self, args: &[&str]) -> Option<Direct> {
        let env = vec![(
            "NPM_CONFIG_CACHE".to_string(),
            self.root.join("npm-cache").display().to_string(),
        )];
        let cwd = self.root.join("project/sub");
        let lookup = Lookup {
            cwd: &cwd,
            env: &env,
        };
        resolve(
            "npx",
            &strings(args),
            &lookup,
            &self.root.join("agent/mcp-npx-cache.json"),
        )
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).display().to_string()
    }
}

impl Drop for NpmTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[test]
fn npx_packages_resolve_to_their_binaries() {
    let tree = NpmTree::new();
    let newest = tree.resolve(&["-y", "@s/srv", "stdio"]).unwrap();
    assert_eq!(
        newest,
        Direct {
            command: "node".into(),
            args: vec![
                tree.path("npm-cache/_npx/bbb/node_modules/@s/srv/dist/index.js"),
                "stdio".into()
            ],
            runner: "npx"
        }
    );
    let pinned = tree.resolve(&["-y", "@s/srv@1.0.0"]).unwrap();
    assert_eq!(
        pinned.args[0],
        tree.path("npm-cache/_npx/aaa/node_modules/@s/srv/dist/index.js")
    );
    assert!(
        tree.resolve(&["-y", "@s/srv@3.0.0"]).is_none(),
        "a version nobody installed runs through npx"
    );
    let local = tree.resolve(&["local-srv", "--flag"]).unwrap();
    assert_eq!(
        (local.command.as_str(), local.args.clone()),
        (
            "node",
            vec![
                tree.path("project/node_modules/local-srv/bin/run"),
                "--flag".into()
            ]
        )
    );
    let native = tree.resolve(&["native-srv"]).unwrap();
    assert_eq!(
        (native.command, native.args),
        (tree.path("project/node_modules/native-srv/srv"), vec![])
    );
    assert!(tree.resolve(&["not-installed"]).is_none());
}

#[test]
fn resolutions_are_remembered_while_their_binary_exists() {
    let tree = NpmTree::new();
    let first = tree.resolve(&["@s/srv@1.0.0"]).unwrap();
    let memo: Value =
        serde_json::from_slice(&std::fs::read(tree.root.join("agent/mcp-npx-cache.json")).unwrap())
            .unwrap();
    assert_eq!(memo["version"], 2);
    let entry = memo["entries"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert_eq!(
        (entry["packageVersion"].as_str(), entry["isJs"].as_bool()),
        (Some("1.0.0"), Some(true))
    );
    // The memo answers even when the cache directory listing would not (package.json gone).
    std::fs::remove_file(
        tree.root
            .join("npm-cache/_npx/aaa/node_modules/@s/srv/package.json"),
    )
    .unwrap();
    assert_eq!(tree.resolve(&["@s/srv@1.0.0"]), Some(first));
    // A binary that disappeared is not trusted.
    std::fs::remove_dir_all(tree.root.join("npm-cache/_npx/aaa")).unwrap();
    assert!(tree.resolve(&["@s/srv@1.0.0"]).is_none());
}

#[cfg(unix)]
#[test]
fn uvx_tools_resolve_to_their_environment() {
    let root = temp_dir();
    let env_dir = root.join("uv/archive-v0/abc");
    write(&env_dir.join("bin/mcp-server-time"), "#!/bin/sh\n");
    std::fs::create_dir_all(
        env_dir.join("lib/python3.11/site-packages/mcp_server_time-2026.10.19.dist-info"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("uv/environments-v2/h1")).unwrap();
    std::os::unix::fs::symlink(&env_dir, root.join("uv/environments-v2/h1/h2")).unwrap();
    std::fs::write(root.join("uv/environments-v2/h1/h2.lock"), "").unwrap();
    let env = vec![(
        "UV_CACHE_DIR".to_string(),
        root.join("uv").display().to_string(),
    )];
    let lookup = Lookup {
        cwd: &root,
        env: &env,
    };
    let memo = root.join("memo.json");
    let direct = resolve(
        "uvx",
        &strings(&["mcp-server-time", "--local-timezone", "UTC"]),
        &lookup,
        &memo,
    )
    .unwrap();
    let script = std::fs::canonicalize(&env_dir)
        .unwrap()
        .join("bin/mcp-server-time");
    assert_eq!(
        direct,
        Direct {
            command: script.display().to_string(),
            args: strings(&["--local-timezone", "UTC"]),
            runner: "uvx"
        }
    );
    assert!(resolve("uvx", &strings(&["mcp-server-time@1.0"]), &lookup, &memo).is_none());
    assert!(resolve("uvx", &strings(&["other-tool"]), &lookup, &memo).is_none());
    let _ = std::fs::remove_dir_all(root);
}
