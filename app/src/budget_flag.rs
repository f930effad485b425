//! The `--budget SPEC` flag shared by every command that replays a trace (`render`, `trace info`,
//! `trace check`, `bench replay`, the viewer): work budgets per command-list submission, frame
//! and trace, read by one parser ([`gpu_core::budget::WorkBudget::apply_spec`]).

use clap::Args;
use gpu_core::budget::WorkBudget;

/// `--budget` as a flattened argument group.
#[derive(Args, Debug, Default, Clone)]
pub struct BudgetArgs {
    /// Work budgets: comma-separated RESOURCE-per-SCOPE=N entries (repeatable; later entries
    /// win). RESOURCE: writes, draws, vertices, shader-instructions, fragments, transfer-pixels
    /// (display transfers / texture copies; frame and trace only); SCOPE: submission, frame,
    /// trace; N: decimal, 0x hex, 2^K or `unlimited`. When one runs out the rest of that
    /// submission/frame/trace is skipped with a diagnostic naming what ran out and where.
    /// Defaults: per submission writes 2^24, draws 2^16, vertices 2^24, shader-instructions
    /// 2^30, fragments 2^28; per frame the same and transfer-pixels 2^26; per trace writes 2^26,
    /// draws 2^19, vertices 2^25, shader-instructions 2^30, fragments 2^28, transfer-pixels
    /// 2^27 (inputs up to 16 MiB; per-trace defaults grow in proportion for larger inputs).
    /// Example: --budget draws-per-frame=500,vertices-per-trace=2^24
    #[arg(long = "budget", value_name = "SPEC", value_parser = check_spec, action = clap::ArgAction::Append)]
    pub budget: Vec<String>,
}

fn check_spec(s: &str) -> Result<String, String> {
    WorkBudget::parse(s).map_err(|e| e.to_string())?;
    Ok(s.to_string())
}

impl BudgetArgs {
    /// The budgets: the defaults with every `--budget` applied in order.
    pub fn budget(&self) -> WorkBudget {
        let mut b = WorkBudget::default();
        for spec in &self.budget {
            // Checked by the value parser already; a failure here leaves the defaults.
            if b.apply_spec(spec).is_err() {
                return WorkBudget::default();
            }
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_core::budget::{DEFAULT_FRAME_BUDGET, DEFAULT_SUBMISSION_BUDGET, DEFAULT_TRACE_BUDGET};

    /// The help text states the defaults the library uses.
    #[test]
    fn help_lists_the_real_defaults() {
        let pow = |v: u64| format!("2^{}", v.trailing_zeros());
        for (c, scope) in [
            (DEFAULT_SUBMISSION_BUDGET, "submission"),
            (DEFAULT_FRAME_BUDGET, "frame"),
            (DEFAULT_TRACE_BUDGET, "trace"),
        ] {
            for v in [
                c.writes,
                c.draws,
                c.vertices,
                c.shader_instructions,
                c.fragments,
                c.transfer_pixels,
            ] {
                assert!(v.is_power_of_two(), "{scope}");
            }
        }
        assert_eq!(DEFAULT_FRAME_BUDGET, DEFAULT_SUBMISSION_BUDGET);
        let t = DEFAULT_TRACE_BUDGET;
        let f = DEFAULT_FRAME_BUDGET;
        let help = "per submission writes 2^24, draws 2^16, vertices 2^24, shader-instructions 2^30, fragments 2^28; per frame the same and transfer-pixels 2^26; per trace writes 2^26, draws 2^19, vertices 2^25, shader-instructions 2^30, fragments 2^28, transfer-pixels 2^27";
        let expect = format!(
            "per submission writes {}, draws {}, vertices {}, shader-instructions {}, fragments {}; per frame the same and transfer-pixels {}; per trace writes {}, draws {}, vertices {}, shader-instructions {}, fragments {}, transfer-pixels {}",
            pow(f.writes),
            pow(f.draws),
            pow(f.vertices),
            pow(f.shader_instructions),
            pow(f.fragments),
            pow(f.transfer_pixels),
            pow(t.writes),
            pow(t.draws),
            pow(t.vertices),
            pow(t.shader_instructions),
            pow(t.fragments),
            pow(t.transfer_pixels)
        );
        assert_eq!(help, expect);
    }

    #[test]
    fn later_specs_win() {
        let a = BudgetArgs {
            budget: vec![
                "draws-per-frame=5".into(),
                "draws-per-frame=7,writes-per-trace=9".into(),
            ],
        };
        let b = a.budget();
        assert_eq!(b.frame.draws, 7);
        assert_eq!(b.trace.writes, 9);
        assert!(check_spec("draws-per-fortnight=1").is_err());
    }
}
