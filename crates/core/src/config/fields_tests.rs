use super::*;
use pi_mcp_connection::server_log::LogLevel;

#[test]
fn known_adapter_only_misspelt_and_unknown_keys() {
    let server = |key| check(Place::Server, key);
    assert_eq!(server("command"), None);
    assert_eq!(server("caFile"), None);
    assert_eq!(server("sampling"), None, "a setting a server may set too");
    let (level, message) = server("bearerTokenStore").unwrap();
    assert_eq!(level, Level::Note);
    assert!(message.contains("use `bearerTokenEnv`"), "{message}");
    let (level, message) = server("comand").unwrap();
    assert_eq!(level, Level::Warning);
    assert!(message.contains("did you mean `command`?"), "{message}");
    assert!(server("envfile").unwrap().1.contains("`envFile`"));
    assert_eq!(
        server("x-vendor-extension").unwrap(),
        (Level::Note, "unknown key; ignored".to_string())
    );
    assert_eq!(check(Place::Settings, "outputGuard"), None);
    assert_eq!(
        check(Place::Settings, "freezeDirectTools").unwrap().0,
        Level::Note
    );
    assert_eq!(
        check(Place::Settings, "exposeResources").unwrap().0,
        Level::Note
    );
    assert_eq!(
        check(Place::Settings, "includeTools").unwrap(),
        (Level::Note, "not read here; a server's key: it belongs in a server entry (only these tools); ignored".to_string())
    );
    let (level, message) = server("autoAuth").unwrap();
    assert_eq!(level, Level::Note);
    assert!(
        message.starts_with("not read here; a setting: it belongs in `settings` (sign in"),
        "{message}"
    );
    assert!(server("scope").unwrap().1.contains("a server's `oauth`"));
    assert_eq!(closest("cursr", &["cursor", "codex"]), Some("cursor"));
    assert_eq!(closest("zed", &["cursor", "codex"]), None);
}

#[test]
fn each_key_once_at_each_place() {
    for place in [
        Place::Root,
        Place::Settings,
        Place::Server,
        Place::OAuth,
        Place::Trace,
    ] {
        let mut names = names(place, |_| true);
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "{place:?}");
    }
}

#[test]
fn messages_say_the_defaults_of_the_code() {
    let names: Vec<_> = LogLevel::ALL.iter().map(|l| l.name()).collect();
    assert_eq!(LOG_LEVELS, names);
    assert_eq!(REQUEST_TIMEOUT_MS.default.to_string(), "using 60000");
    assert_eq!(
        CALL_TIMEOUT_MS.default.to_string(),
        "using 1800000 (30 minutes)"
    );
    assert_eq!(REQUEST_TIMEOUT_MS.using(true), Using::TheDefault);
}

/// The README's tables of server fields and of pi-mcp-adapter's keys, and its paragraph on
/// settings, name the keys of the table.
#[test]
fn the_readme_names_the_keys_of_the_table() {
    let readme = readme();
    let server_table = table_after(&readme, "Server fields:");
    let documented: Vec<&str> = server_table.iter().flat_map(|row| codes(row.0)).collect();
    let mut want = names(Place::Server, |f| !matches!(f.kind, Kind::Unused(_)));
    let mut got = documented;
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "README's server fields against the table");
    let settings = paragraph_after(&readme, "Settings: `toolPrefix`");
    for field in at(Place::Settings).filter(|f| f.place == Place::Settings) {
        if !matches!(field.kind, Kind::Unused(_)) {
            assert!(
                settings.contains(&format!("`{}`", field.name)),
                "README's settings: {}",
                field.name
            );
        }
    }
    let unused = table_after(&readme, "names each one it finds with what to do instead:");
    let mut got: Vec<String> = unused
        .iter()
        .flat_map(|row| codes(row.0))
        .map(|key| key.trim_start_matches("settings.").to_string())
        .collect();
    let mut want: Vec<String> = ALL
        .iter()
        .filter(|f| {
            matches!(f.kind, Kind::Unused(_))
                && f.name != "exposeResources"
                && f.name != "projectServers"
        })
        .map(|f| f.name.to_string())
        .collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "README's pi-mcp-adapter keys against the table");
}

fn readme() -> String {
    let mut dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join("README.md")) {
            return text;
        }
        assert!(dir.pop(), "no README.md above the crate");
    }
}

/// The rows (first cell, rest) of the table that follows the line starting with `intro`.
fn table_after<'a>(text: &'a str, intro: &str) -> Vec<(&'a str, &'a str)> {
    let start = text
        .find(intro)
        .unwrap_or_else(|| panic!("README: {intro}"));
    text[start..]
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .filter_map(|line| line[1..].split_once(" | "))
        .collect()
}

fn paragraph_after<'a>(text: &'a str, start: &str) -> &'a str {
    let at = text
        .find(start)
        .unwrap_or_else(|| panic!("README: {start}"));
    let rest = &text[at..];
    &rest[..rest.find("\n\n").unwrap_or(rest.len())]
}

/// The `code` spans of a cell.
fn codes(cell: &str) -> impl Iterator<Item = &str> {
    cell.split('`').skip(1).step_by(2)
}
