//! The generalized log-likelihood ratio of a pentanomial sample between two
//! hypotheses, as Fishtest, OpenBench and fastchess compute it (Michel van
//! den Bergh, "Comments on normalized Elo", sections 1 and 4.1): for each
//! hypothesis, the distribution over the five pair scores that is most
//! likely to have produced the sample while meeting the hypothesis, and the
//! ratio of the sample's likelihood under the two.

/// What a game pair scores for PLAYER1, as a fraction of the pair's two
/// points: LL, LD, WL+DD, WD, WW.
pub(super) const SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Stands in for an empty bucket, so every likelihood stays positive (the
/// regularization Fishtest and fastchess use).
const EMPTY_BUCKET: f64 = 1e-3;

/// A five-point distribution.
type Pdf = [f64; 5];

/// The log-likelihood ratio for an expected pair score of `s1` against `s0`
/// (the logistic model: the scores come from logistic Elo). NaN when the
/// hypotheses cannot be fitted.
pub(super) fn logistic(counts: &[u64; 5], s0: f64, s1: f64) -> f64 {
    let (n, sample) = empirical(counts);
    match (most_likely_with_mean(&sample, s0), most_likely_with_mean(&sample, s1)) {
        (Some(p0), Some(p1)) => ratio(n, &sample, &p0, &p1),
        _ => f64::NAN,
    }
}

/// The log-likelihood ratio for a t-value ((mean − ½) / σ, σ the standard
/// deviation of a pair's score) of `t1` against `t0` (the normalized
/// model). NaN when the hypotheses cannot be fitted.
pub(super) fn normalized(counts: &[u64; 5], t0: f64, t1: f64) -> f64 {
    let (n, sample) = empirical(counts);
    match (most_likely_with_t(&sample, 0.5, t0), most_likely_with_t(&sample, 0.5, t1)) {
        (Some(p0), Some(p1)) => ratio(n, &sample, &p0, &p1),
        _ => f64::NAN,
    }
}

/// The number of pairs (empty buckets counted as `EMPTY_BUCKET`) and the
/// share of each bucket.
fn empirical(counts: &[u64; 5]) -> (f64, Pdf) {
    let regular = counts.map(|c| if c == 0 { EMPTY_BUCKET } else { c as f64 });
    let n: f64 = regular.iter().sum();
    (n, regular.map(|c| c / n))
}

/// `n` times the sample's mean log of p1/p0.
fn ratio(n: f64, sample: &Pdf, p0: &Pdf, p1: &Pdf) -> f64 {
    n * (0..5).map(|i| sample[i] * (p1[i].ln() - p0[i].ln())).sum::<f64>()
}

/// Mean and variance of the pair score under `p`.
fn moments(p: &Pdf) -> (f64, f64) {
    let mean: f64 = (0..5).map(|i| p[i] * SCORES[i]).sum();
    let variance = (0..5).map(|i| p[i] * (SCORES[i] - mean).powi(2)).sum();
    (mean, variance)
}

/// The distribution with mean `s` most likely to have produced `sample`
/// (van den Bergh, Proposition 1.1): `sample[i] / (1 + x (a_i − s))`.
fn most_likely_with_mean(sample: &Pdf, s: f64) -> Option<Pdf> {
    let shifted = SCORES.map(|a| a - s);
    let x = secular_root(&shifted, sample)?;
    Some(std::array::from_fn(|i| sample[i] / (1.0 + x * shifted[i])))
}

/// The distribution with t-value `t` against `reference` most likely to
/// have produced `sample` (van den Bergh, section 4.1), by the fixed-point
/// iteration of the paper started from the uniform distribution.
fn most_likely_with_t(sample: &Pdf, reference: f64, t: f64) -> Option<Pdf> {
    let mut p = [0.2; 5];
    for _ in 0..100 {
        let (mean, variance) = moments(&p);
        let sigma = variance.sqrt();
        let phi = SCORES.map(|a| a - reference - t * sigma * (1.0 + ((mean - a) / sigma).powi(2)) / 2.0);
        let x = secular_root(&phi, sample)?;
        let next: Pdf = std::array::from_fn(|i| sample[i] / (1.0 + x * phi[i]));
        let change = (0..5).map(|i| (next[i] - p[i]).abs()).fold(0.0, f64::max);
        p = next;
        if change < 1e-12 {
            break;
        }
    }
    Some(p)
}

/// The root x of Σ wᵢ aᵢ / (1 + x aᵢ) = 0 between the poles −1/max(a) and
/// −1/min(a), where the sum falls from +∞ to −∞; None unless the aᵢ have
/// both signs. Bisection to the last bit: the root of a lopsided sample
/// lies very near a pole, where a coarse root makes the likelihoods wrong.
fn secular_root(a: &Pdf, w: &Pdf) -> Option<f64> {
    let low = a.iter().copied().fold(f64::INFINITY, f64::min);
    let high = a.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(low < 0.0 && high > 0.0) {
        return None;
    }
    let (mut left, mut right) = (-1.0 / high, -1.0 / low);
    let sum = |x: f64| (0..5).map(|i| w[i] * a[i] / (1.0 + x * a[i])).sum::<f64>();
    for _ in 0..2000 {
        let mid = left + (right - left) / 2.0;
        if mid <= left || mid >= right {
            break;
        }
        if sum(mid) > 0.0 {
            left = mid;
        } else {
            right = mid;
        }
    }
    Some(left + (right - left) / 2.0)
}
