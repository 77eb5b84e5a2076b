//! "No strong match": whether a word search's first hits probably hold none of the tools the
//! request needs. A request of one need is weak when its best hit holds less than `WEAK_BELOW`
//! of its words. A request of several needs (a task, of `TASK_TERMS` terms or more) holds few of
//! its words in any one hit, so a small logistic model over four signals of its ranking says how
//! likely its first hits miss; its weights were fitted on the task eval's tuning split by
//! `scripts/fit-weak.mjs`, which prints `TASK`.

/// Below this strength (the share of the request the best hit holds itself) a request of one
/// need is a weak match. Chosen on the search eval's tuning set. The task's kind of model
/// fitted to these requests flags a third of the held-out ones (0.67 of the misses, with 0.38
/// of those flagged missing, against 0.28 and 0.52 for this threshold): a trade, not a gain.
pub const WEAK_BELOW: f64 = 0.40;
/// The fewest terms of a request the task's model judges: the fewest of any task it was fitted
/// on. A short request of two parts ("file size and when it was last changed") is judged as one
/// of one need.
const TASK_TERMS: usize = 6;

/// What the ranking says about how well a request was matched.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Signals {
    /// Of the request's words (weighted), the share the best hit holds itself, each counted by
    /// how closely (1 for the word, less for a word it stands for); 1 when its name is the
    /// query. For a request of several needs, that share for each need held by the best of the
    /// first five hits, averaged over the needs.
    pub strength: f64,
    /// The share of the request's words the first hit holds itself (`strength` for one need).
    pub first_share: f64,
    /// The first hit's relevance.
    pub first_score: f64,
    /// The fifth hit's relevance over the first's (the last's, with fewer hits).
    pub fifth_of_first: f64,
    /// The request's terms (its words that count, and the words they imply).
    pub terms: usize,
}

/// A logistic model: the chance of a miss is σ(bias + Σ weight × feature).
struct Model {
    bias: f64,
    /// Of `strength`, `first_share`, ln(1 + `first_score`) and `fifth_of_first`.
    weights: [f64; 4],
    /// The chance of a miss from which a match is weak: of those that flag at least 70 % of the
    /// tuning split's misses, the one whose flagged answers miss most often.
    flag_at: f64,
}

/// Fitted by scripts/fit-weak.mjs on the task eval's tuning split.
const TASK: Model = Model {
    bias: 6.020,
    weights: [-1.174, -2.548, -2.220, 2.072],
    flag_at: 0.177,
};

impl Signals {
    /// Whether a request of `needs` needs so matched is a weak match.
    pub fn weak(&self, needs: usize) -> bool {
        match needs > 1 && self.terms >= TASK_TERMS {
            false => self.strength < WEAK_BELOW,
            true => self.miss(&TASK) >= TASK.flag_at,
        }
    }

    /// The chance `model` gives that the first hits hold none of the tools needed.
    fn miss(&self, model: &Model) -> f64 {
        let features = [
            self.strength,
            self.first_share,
            self.first_score.ln_1p(),
            self.fifth_of_first,
        ];
        let z: f64 = model.bias
            + model
                .weights
                .iter()
                .zip(features)
                .map(|(w, x)| w * x)
                .sum::<f64>();
        1.0 / (1.0 + (-z).exp())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signals(strength: f64, first_share: f64, first_score: f64, terms: usize) -> Signals {
        Signals {
            strength,
            first_share,
            first_score,
            fifth_of_first: 0.5,
            terms,
        }
    }

    #[test]
    fn a_match_is_weak_by_the_rule_for_its_kind_of_request() {
        // One need: the share of the request the best hit holds.
        assert!(signals(0.3, 0.3, 10.0, 3).weak(1));
        assert!(!signals(0.5, 0.5, 10.0, 3).weak(1));
        // A short request of two parts is judged as one of one need.
        assert!(!signals(0.8, 0.4, 13.9, 5).weak(2));
        assert!(signals(0.3, 0.3, 13.9, 5).weak(2));
        // A task: first hits holding most of each need, the first clearly relevant, are strong;
        // holding little, with a first hit barely relevant, weak.
        assert!(!signals(0.8, 0.5, 30.0, 20).weak(3));
        assert!(signals(0.3, 0.1, 8.0, 20).weak(3));
    }
}
