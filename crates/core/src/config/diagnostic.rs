//! A problem found in the configuration, with where it is and what to do about it.

use std::fmt;
use std::path::{Path, PathBuf};

crate::named_enum::named_enum! {
    /// How bad a problem of the config is.
    Level {
        Error = "error",
        Warning = "warning",
        /// Harmless (an unknown key): shown by `pi-mcp doctor`, not in the model's status.
        Note = "note",
    }
}

/// A problem found in the configuration, with where it is and what to do about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub level: Level,
    pub file: Option<PathBuf>,
    pub line: Option<usize>,
    pub server: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

impl Diagnostic {
    /// A problem with a whole file, or with one of its top-level fields.
    pub(super) fn in_file(
        level: Level,
        file: &Path,
        field: Option<&str>,
        message: String,
    ) -> Diagnostic {
        Diagnostic {
            level,
            file: Some(file.to_path_buf()),
            line: None,
            server: None,
            field: field.map(str::to_string),
            message,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.level)?;
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        }
        match (&self.server, &self.field) {
            (Some(s), Some(field)) => write!(f, "server \"{s}\", field `{field}`: ")?,
            (Some(s), None) => write!(f, "server \"{s}\": ")?,
            (None, Some(field)) => write!(f, "`{field}`: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)
    }
}
