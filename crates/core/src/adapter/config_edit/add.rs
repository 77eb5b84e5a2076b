//! `/mcp add` and `pi-mcp add`: a server in Pi's own `pi mcp add` syntax, tried before it is
//! saved. The URL is checked, the server is connected and listed by a gateway of its own that
//! reads nothing but the new entry (as if it were in the file it goes to), a sign-in starts when
//! the server asks for one, and only then is the entry written, in the shape `pi mcp add`
//! writes, with the rest of the file kept. A failure or a name taken saves nothing.

use crate::adapter::config_edit::ConfigEdits;
use crate::adapter::details::*;
use crate::adapter::Mode;
use crate::adapter::{Adapter, ErrorCode, Kernel, OpenOptions, Outcome};
use crate::config::{self, add::AddRequest, Only};
use crate::oauth::is_loopback;
use crate::render;
use serde_json::{json, Value};
use std::path::PathBuf;

impl ConfigEdits<'_> {
    /// `add` typed as one line (`/mcp add …`): split into words as a shell would.
    pub async fn add_typed(&self, text: &str, dry_run: bool) -> Outcome {
        match config::add::split_words(text) {
            Ok(words) => self.add_server(&words, dry_run).await,
            Err(why) => Outcome::error(
                Mode::Add,
                ErrorCode::BadUsage,
                render::add_usage(&why, self.kernel.cli),
            ),
        }
    }

    /// Adds the server `words` describe (the words after `add`), once it connected and listed
    /// its tools; `dry_run` tries it and saves nothing.
    pub async fn add_server(&self, words: &[String], dry_run: bool) -> Outcome {
        let usage = |why: String| {
            Outcome::error(
                Mode::Add,
                ErrorCode::BadUsage,
                render::add_usage(&why, self.kernel.cli),
            )
        };
        let request = match config::add::parse(words) {
            Ok(request) => request,
            Err(why) => return usage(why),
        };
        if let Some(url) = request.url() {
            if let Err(why) = check_url(url) {
                return usage(format!("server \"{}\": {why}", request.name));
            }
        }
        let file = match self.add_target(request.local) {
            Ok(file) => file,
            Err(outcome) => return outcome,
        };
        if let Some(outcome) = self.name_taken(&request.name, &file) {
            return outcome;
        }
        let tried = self.try_server(&request, &file).await;
        let tools = match tried {
            Ok(tools) => tools,
            Err(mut outcome) => {
                let text = render::add_failed(&request.name, &outcome.joined_text());
                outcome.content = vec![render::content::text_block(text)];
                outcome.set_mode(Mode::Add);
                return outcome;
            }
        };
        let entry = Value::Object(request.entry.clone());
        let done = |saved: bool| {
            Outcome::text(
                Mode::Add,
                render::added(&request.name, &file, &tools, saved, self.kernel.cli),
            )
            .with_server(request.name.as_str())
            .with_part(AddDetails {
                file: file.display().to_string(),
                entry: entry.clone(),
                tools: tools.len(),
                saved,
            })
        };
        if dry_run {
            return done(false);
        }
        match config::add_server(&file, &request.name, &entry) {
            Ok(()) => done(true),
            Err(e) => Outcome::error(
                Mode::Add,
                ErrorCode::ConfigError,
                format!("{e}; nothing was saved."),
            ),
        }
    }

    /// The file `add` writes to: the user's Pi config, or with `local` the project's
    /// `.pi/mcp.json`, which only a trusted project reads.
    pub fn add_target(&self, local: bool) -> Result<PathBuf, Outcome> {
        if !local {
            return Ok(self.user_file());
        }
        self.project_file().ok_or_else(|| {
            Outcome::error(
                Mode::Add,
                ErrorCode::ProjectUntrusted,
                render::project_untrusted(
                    &self.kernel.cwd.join(".pi").join("mcp.json"),
                    self.kernel.cli,
                ),
            )
        })
    }

    /// Why `name` cannot be added to `file`: a configured server has that name (Pi counts `-`
    /// and `_` as the same), or the file defines it already (even turned off or invalid).
    pub fn name_taken(&self, name: &str, file: &std::path::Path) -> Option<Outcome> {
        let namespace = |n: &str| n.replace('-', "_");
        let configured = self
            .kernel
            .config
            .servers
            .iter()
            .find(|s| namespace(&s.name) == namespace(name))
            .map(|s| (s.name.clone(), s.source.clone()));
        let in_file = std::fs::read_to_string(file)
            .ok()
            .filter(|text| config::defines(text, name))
            .map(|_| (name.to_string(), file.to_path_buf()));
        let (taken, source) = configured.or(in_file)?;
        let text = render::name_taken(name, &taken, &source);
        Some(Outcome::error(Mode::Add, ErrorCode::ServerExists, text).with_server(name))
    }

    /// Connects and lists the new server through a gateway that reads only its entry, signing
    /// in when it asks; its tools' names, or why it cannot be used.
    async fn try_server(
        &self,
        request: &AddRequest,
        file: &std::path::Path,
    ) -> Result<Vec<String>, Outcome> {
        let only = Only {
            file: file.to_path_buf(),
            root: json!({ "mcpServers": { request.name.as_str(): request.entry } }),
        };
        let trial = Adapter::open(OpenOptions {
            cwd: self.kernel.cwd.clone(),
            agent_dir: Some(self.kernel.agent_dir.clone()),
            env: Some(self.kernel.env.clone()),
            project_trusted: Some(true),
            file_limits: self.kernel.file_limits,
            cli: self.kernel.cli,
            only: Some(only),
            ..OpenOptions::default()
        });
        if let Some(problem) = trial
            .kernel
            .config
            .diagnostics
            .iter()
            .find(|d| d.level == config::Level::Error)
        {
            return Err(Outcome::error(
                Mode::Add,
                ErrorCode::ConfigError,
                problem.to_string(),
            ));
        }
        if let Some(sink) = self.kernel.events.sink() {
            trial.on_event(sink);
        }
        trial.set_interactive(self.kernel.sign_in.interactive());
        self.kernel.sign_in.through_trial(Some(trial.clone()));
        let name = request.name.as_str();
        let mut outcome = trial.connect(name).await;
        if outcome.details.error == Some(ErrorCode::AuthRequired) && trial.kernel.is_oauth(name) {
            outcome = trial.login(name).await;
        }
        let tools = trial
            .kernel
            .servers
            .view()
            .server_tools(name)
            .iter()
            .map(|t| t.name.clone())
            .collect();
        self.kernel.sign_in.through_trial(None);
        trial.shutdown().await;
        match outcome.is_error {
            true => Err(outcome),
            false => Ok(tools),
        }
    }
}

impl Kernel {
    /// Whether `name` signs in with OAuth (a remote server without other credentials).
    fn is_oauth(&self, name: &str) -> bool {
        self.server(name).is_some_and(|s| {
            matches!(
                &s.transport,
                config::Transport::Http {
                    auth: config::HttpAuth::OAuth(_),
                    ..
                }
            )
        })
    }
}

/// A remote server's URL must be https, or http to this machine.
fn check_url(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("url is not a URL ({e})"))?;
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&parsed) => Ok(()),
        "http" => Err(
            "url must use https (http only to this machine: localhost, 127.0.0.1, [::1])".into(),
        ),
        _ => Err("url must be an http or https URL".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::check_url;

    #[test]
    fn https_or_loopback_http() {
        assert!(check_url("https://mcp.example.com/mcp").is_ok());
        assert!(check_url("http://127.0.0.1:3000/mcp").is_ok());
        assert!(check_url("http://localhost:3000/mcp").is_ok());
        assert!(check_url("http://[::1]/mcp").is_ok());
        assert!(check_url("http://example.com/mcp")
            .unwrap_err()
            .contains("must use https"));
        assert!(check_url("ftp://x").unwrap_err().contains("http or https"));
        assert!(check_url("not a url").is_err());
    }
}
