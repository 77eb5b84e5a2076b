//! Private directory trees for config tests: a home (with `.pi/agent`) and a project in it.
//! Never the real home.

use super::{agent_dir, load, Config, Env, LoadOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Tree {
    pub root: PathBuf,
    pub home: PathBuf,
    pub project: PathBuf,
    pub env: Env,
}

impl Tree {
    pub fn new() -> Tree {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "pi-mcp-config-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let home = root.join("home");
        let project = home.join("project");
        std::fs::create_dir_all(home.join(".pi/agent")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let env: Env = [
            ("HOME", home.display().to_string()),
            ("TOKEN", "t0k".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        Tree {
            root,
            home,
            project,
            env,
        }
    }

    /// A home holding the files of `__test__/fixtures/homes/<name>`, with `@HOME@` and
    /// `@PROJECT@` replaced by this tree's paths.
    pub fn fixture(name: &str) -> Tree {
        let tree = Tree::new();
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../__test__/fixtures/homes")
            .join(name);
        tree.copy(&from, &tree.home);
        tree
    }

    fn copy(&self, from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                std::fs::create_dir_all(&target).unwrap();
                self.copy(&entry.path(), &target);
            } else {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                let text = text
                    .replace("@HOME@", &self.home.display().to_string())
                    .replace("@PROJECT@", &self.project.display().to_string());
                std::fs::write(target, text).unwrap();
            }
        }
    }

    /// Writes `text` at `rel` (relative to the home).
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Pi's global config (`~/.pi/agent/mcp.json`).
    pub fn pi_config(&self, value: serde_json::Value) -> PathBuf {
        self.write(".pi/agent/mcp.json", &value.to_string())
    }

    pub fn opts(&self) -> LoadOptions {
        LoadOptions {
            cwd: self.project.clone(),
            agent_dir: agent_dir(&self.env),
            config_path: None,
            env: self.env.clone(),
            project_trusted: None,
            limits: Default::default(),
            registered: vec![],
        }
    }

    pub fn load(&self) -> Config {
        load(&self.opts())
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The diagnostics as the user reads them, with the tree's home shown as `~`.
pub fn messages(config: &Config, tree: &Tree) -> Vec<String> {
    config
        .diagnostics
        .iter()
        .map(|d| d.to_string().replace(&tree.home.display().to_string(), "~"))
        .collect()
}

pub fn names(config: &Config) -> Vec<&str> {
    config.servers.iter().map(|s| s.name.as_str()).collect()
}
