//! A request of several needs (a task: "pull the build log, open an issue and tell the team")
//! gets first hits that cover as many needs as they can before one repeats. Each need ranks the
//! tools on its own words, as a short request would; each next hit is the tool worth most for
//! how well it answers its best need and for what it adds to the needs the hits before it left
//! uncovered (the greedy rule of xQuAD, Santos et al. 2010).

use super::request::Term;

/// How much what a hit adds to uncovered needs counts, against how well it answers one (0 to 1).
const COVER: f64 = 0.5;
/// The best tools of each need that may come forward.
const PER_NEED: usize = 12;

/// Each tool's score for each need of a request, need by need.
pub struct NeedScores {
    tools: usize,
    scores: Vec<f32>,
}

impl NeedScores {
    pub fn new(needs: usize, tools: usize) -> NeedScores {
        NeedScores {
            tools,
            scores: vec![0.0; needs * tools],
        }
    }

    /// Adds `score` to `tool` for each need whose bit `needs` has.
    pub fn add(&mut self, needs: u32, tool: usize, score: f64) {
        for need in each_need(needs) {
            self.scores[need * self.tools + tool] += score as f32;
        }
    }

    /// Multiplies `tool`'s score for each need whose bit `needs` has by `factor`.
    pub fn scale(&mut self, needs: u32, tool: usize, factor: f64) {
        for need in each_need(needs) {
            self.scores[need * self.tools + tool] *= factor as f32;
        }
    }

    fn get(&self, need: usize, tool: usize) -> f64 {
        f64::from(self.scores[need * self.tools + tool])
    }

    fn needs(&self) -> usize {
        self.scores.len() / self.tools.max(1)
    }

    /// For each need with words in `terms`, the best share of its words' weight one of `tools`
    /// holds; the mean over those needs.
    pub fn mean_best(&self, terms: &[Term], tools: &[usize]) -> f64 {
        let shares: Vec<f64> = (0..self.needs())
            .filter_map(|need| {
                let weight: f64 = terms
                    .iter()
                    .filter(|t| t.needs & (1 << need) != 0)
                    .map(|t| t.weight)
                    .sum();
                (weight > 0.0).then(|| {
                    tools
                        .iter()
                        .map(|&tool| (self.get(need, tool) / weight).min(1.0))
                        .fold(0.0, f64::max)
                })
            })
            .collect();
        shares.iter().sum::<f64>() / shares.len().max(1) as f64
    }
}

/// The needs whose bit `needs` has.
fn each_need(needs: u32) -> impl Iterator<Item = usize> {
    let mut bits = needs;
    std::iter::from_fn(move || {
        let need = (bits != 0).then(|| bits.trailing_zeros() as usize)?;
        bits &= bits - 1;
        Some(need)
    })
}

/// The first `want` of `hits` (tool, relevance; any order), chosen and ordered to cover the
/// needs from the best `PER_NEED` tools of each.
pub fn cover(hits: &[(usize, f64)], by_need: &NeedScores, want: usize) -> Vec<(usize, f64)> {
    let needs = by_need.needs();
    let mut pool: Vec<(usize, f64)> = Vec::new();
    let mut most = vec![0.0f64; needs];
    for (need, most) in most.iter_mut().enumerate() {
        let mut ranked: Vec<(usize, f64, f64)> = hits
            .iter()
            .map(|&(tool, relevance)| (tool, by_need.get(need, tool), relevance))
            .filter(|&(_, score, _)| score > 0.0)
            .collect();
        let best_first =
            |a: &(usize, f64, f64), b: &(usize, f64, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if ranked.len() > PER_NEED {
            ranked.select_nth_unstable_by(PER_NEED, best_first);
            ranked.truncate(PER_NEED);
        }
        *most = ranked.iter().map(|r| r.1).fold(0.0, f64::max);
        for (tool, _, relevance) in ranked {
            if !pool.iter().any(|p| p.0 == tool) {
                pool.push((tool, relevance));
            }
        }
    }
    // Each tool's part of each need: its score against the need's best.
    let part = |need: usize, tool: usize| match most[need] {
        m if m > 0.0 => (by_need.get(need, tool) / m).min(1.0),
        _ => 0.0,
    };
    let mut uncovered = vec![1.0; needs];
    let mut order: Vec<(usize, f64)> = Vec::with_capacity(want.min(pool.len()));
    // The best hit on the whole request comes first, as for any request.
    if let Some(&first) = hits
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
    {
        pool.retain(|p| p.0 != first.0);
        for (need, open) in uncovered.iter_mut().enumerate() {
            *open *= 1.0 - part(need, first.0);
        }
        order.push(first);
    }
    while order.len() < want && !pool.is_empty() {
        let worth = |&(tool, relevance): &(usize, f64)| {
            let answers = (0..needs).map(|need| part(need, tool)).fold(0.0, f64::max);
            let adds: f64 = (0..needs)
                .map(|need| part(need, tool) * uncovered[need])
                .sum();
            ((1.0 - COVER) * answers + COVER * adds, relevance)
        };
        let (pick, _) = pool
            .iter()
            .enumerate()
            .map(|(i, hit)| (i, worth(hit)))
            .fold((0, (f64::MIN, 0.0)), |a, b| {
                if b.1 .0 > a.1 .0 || (b.1 .0 == a.1 .0 && b.1 .1 > a.1 .1) {
                    b
                } else {
                    a
                }
            });
        let (tool, relevance) = pool.remove(pick);
        for (need, open) in uncovered.iter_mut().enumerate() {
            *open *= 1.0 - part(need, tool);
        }
        order.push((tool, relevance));
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_hits_cover_the_needs_before_one_repeats() {
        // Tools 0–2 answer need 0 best (the most relevant on the whole request), tool 3 need 1,
        // tool 4 need 2, more weakly.
        let mut by_need = NeedScores::new(3, 5);
        for (tool, score) in [(0, 9.0), (1, 8.5), (2, 8.0)] {
            by_need.add(0b001, tool, score);
        }
        by_need.add(0b010, 3, 4.0);
        by_need.add(0b100, 4, 3.0);
        let hits = [(0, 9.0), (1, 8.5), (2, 8.0), (3, 4.0), (4, 3.0)];
        let order: Vec<usize> = cover(&hits, &by_need, 5).iter().map(|h| h.0).collect();
        assert_eq!(order, [0, 3, 4, 1, 2]);
        let first_two: Vec<usize> = cover(&hits, &by_need, 2).iter().map(|h| h.0).collect();
        assert_eq!(first_two, [0, 3]);
    }
}
