//! Keeping every answer within the output guard: call results by the guard's settings (which a
//! user may turn off), and metadata (lists, descriptions, instructions, schemas) always, since no
//! server should be able to flood the model's context by what it lists.

use super::{Kernel, Outcome, Part};
use crate::output_guard::{guard, spill, Limits};
use serde_json::Value;

impl Kernel {
    /// The limits of call results: `settings.outputGuard`, unless `MCP_OUTPUT_GUARD=0` turns the
    /// guard off.
    fn output_limits(&self) -> Option<Limits> {
        let off = self
            .env
            .get("MCP_OUTPUT_GUARD")
            .is_some_and(|v| matches!(v.trim(), "0" | "false" | "off"));
        self.config.settings.output_guard.filter(|_| !off)
    }

    /// A call's or a read's `outcome` within the output guard, unless it is off (see
    /// [`Kernel::guarded`]).
    pub(super) fn within_guard(&self, outcome: Outcome, label: &str) -> Outcome {
        match self.output_limits() {
            Some(limits) => Self::guarded(outcome, limits, label),
            None => outcome,
        }
    }

    /// `outcome` with its text cut to `limits` (the whole text saved to a private file named
    /// after `label`, its path in `details.fullOutputPath`).
    fn guarded(outcome: Outcome, limits: Limits, label: &str) -> Outcome {
        let mut spilled = None;
        let Outcome {
            content,
            mut details,
            is_error,
            structured,
        } = outcome;
        let content = guard(content, limits, |full| {
            let path = spill(label, full)?;
            spilled = Some(path.display().to_string());
            Ok(path)
        });
        if spilled.is_some() {
            details.full_output_path = spilled;
        }
        Outcome {
            content,
            details,
            is_error,
            structured,
        }
    }

    /// A metadata answer within the metadata limits; a schema in `details.inputSchema` over the
    /// byte limit is left out there (it is in the saved text).
    pub(super) fn bounded(&self, mut outcome: Outcome) -> Outcome {
        let limits = self.metadata_limits();
        if let Some(Part::Describe(describe)) = &mut outcome.details.part {
            let over = |schema: &Value| schema.to_string().len() > limits.max_bytes;
            if describe.input_schema.as_ref().is_some_and(over) {
                describe.input_schema = None;
            }
        }
        let label = outcome.details.mode.as_str();
        Self::guarded(outcome, limits, label)
    }
}
