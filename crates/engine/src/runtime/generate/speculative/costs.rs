//! What a row's verifying passes cost, and so how many tokens are worth proposing. On a GPU a
//! pass of a few positions costs about a decode step (reading the weights bounds both); on a
//! CPU each position adds about a quarter of one, so a long draft that the model mostly rejects
//! costs more than it saves. The row times its passes, fits time = fixed + per_position ×
//! width to them, and proposes the number of tokens that gives the most tokens per second at
//! its acceptance rate: long drafts where passes cost little or proposals are kept, short
//! ones (or none) where neither.

/// Exponentially weighted sums over the passes timed (width, seconds), for a least-squares line.
#[derive(Debug, Default, Clone)]
pub(super) struct PassCosts {
    weight: f64,
    width: f64,
    width_squared: f64,
    seconds: f64,
    width_seconds: f64,
}

/// How much the latest pass weighs: a machine getting busier shows within a few dozen passes.
const COST_WEIGHT: f64 = 0.1;

impl PassCosts {
    /// A pass that fed `width` positions (the row's token, its grammar's, its proposals and any
    /// padding) and took `seconds`, proposals included.
    pub fn observe(&mut self, width: usize, seconds: f64) {
        let w = width as f64;
        let keep = 1.0 - COST_WEIGHT;
        self.weight = keep * self.weight + COST_WEIGHT;
        self.width = keep * self.width + COST_WEIGHT * w;
        self.width_squared = keep * self.width_squared + COST_WEIGHT * w * w;
        self.seconds = keep * self.seconds + COST_WEIGHT * seconds;
        self.width_seconds = keep * self.width_seconds + COST_WEIGHT * w * seconds;
    }

    /// The fitted (fixed, per position) costs; `None` until passes of different widths were
    /// timed (a line needs two).
    fn line(&self) -> Option<(f64, f64)> {
        let spread = self.weight * self.width_squared - self.width * self.width;
        if self.weight <= 0.0 || spread <= 1e-9 * self.weight * self.weight {
            return None;
        }
        let per_position = ((self.weight * self.width_seconds - self.width * self.seconds) / spread).max(0.0);
        let fixed = ((self.seconds - per_position * self.width) / self.weight).max(0.0);
        Some((fixed, per_position))
    }

    /// The number of tokens (at most `most`) whose verifying pass yields the most tokens per
    /// second when each proposal is kept with probability `rate` (a pass keeps proposal i only
    /// if it keeps those before it, and always yields the model's own token). 0 where plain
    /// decoding yields more; `most` until the costs are known.
    pub fn paying_length(&self, most: usize, rate: f64) -> usize {
        let Some((fixed, per_position)) = self.line() else { return most };
        let cost = |proposals: usize| fixed + per_position * (proposals + 1) as f64;
        let (mut best, mut best_yield) = (0, 1.0 / cost(0));
        let mut expected = 1.0;
        let mut kept = 1.0;
        for proposals in 1..=most {
            kept *= rate;
            expected += kept;
            let tokens_per_second = expected / cost(proposals);
            if tokens_per_second > best_yield {
                (best, best_yield) = (proposals, tokens_per_second);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(fixed: f64, per_position: f64) -> PassCosts {
        let mut costs = PassCosts::default();
        for width in [2, 9, 5, 3, 7, 2, 9] {
            costs.observe(width, fixed + per_position * width as f64);
        }
        costs
    }

    #[test]
    fn the_line_is_fitted_to_the_passes_timed() {
        let (fixed, per_position) = timed(0.015, 0.005).line().unwrap();
        assert!((fixed - 0.015).abs() < 1e-9 && (per_position - 0.005).abs() < 1e-9, "{fixed} {per_position}");
        let mut one_width = PassCosts::default();
        one_width.observe(4, 0.02);
        one_width.observe(4, 0.03);
        assert!(one_width.line().is_none(), "one width gives no line");
        assert_eq!(one_width.paying_length(8, 0.5), 8, "unknown costs leave the draft length as it is");
    }

    #[test]
    fn cheap_positions_or_kept_proposals_pay_for_long_drafts() {
        // A GPU: a pass costs about a step whatever its width.
        assert_eq!(timed(0.020, 0.0001).paying_length(8, 0.6), 8);
        // A CPU, each position a quarter of a step: long drafts only while they are kept.
        let cpu = timed(0.015, 0.005);
        assert!(cpu.paying_length(8, 0.95) >= 6, "{}", cpu.paying_length(8, 0.95));
        assert!((1..=2).contains(&cpu.paying_length(8, 0.5)), "{}", cpu.paying_length(8, 0.5));
        assert_eq!(cpu.paying_length(8, 0.1), 0, "rarely kept: plain decoding yields more");
    }
}
