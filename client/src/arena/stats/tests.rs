//! The statistics against values published by others, to the printed
//! precision: fastchess's own unit tests, blocks fastchess printed in real
//! engine matches, and (marked as such) numbers from an independent Python
//! transcription of Fishtest's `LLRcalc.py`.

use super::*;

/// Pentanomial counts in fastchess's test order `Stats(ll, ld, wl, dd, wd,
/// ww)`, merged into our `[LL, LD, WL+DD, WD, WW]`.
fn fastchess(ll: u64, ld: u64, wl: u64, dd: u64, wd: u64, ww: u64) -> Pentanomial {
    Pentanomial([ll, ld, wl + dd, wd, ww])
}

fn sprt(elo0: f64, elo1: f64, model: Model) -> Sprt {
    Sprt { elo0, elo1, alpha: 0.05, beta: 0.05, model }
}

/// Elo, nElo and LOS as fastchess prints them.
fn printed(p: &Pentanomial) -> (String, String, String) {
    let e = p.estimates();
    (
        format!("{:.2} +/- {:.2}", e.elo, e.elo_error),
        format!("{:.2} +/- {:.2}", e.nelo, e.nelo_error),
        format!("{:.2} %", e.los * 100.0),
    )
}

// fastchess, app/tests/elo_test.cpp ("EloPentanomial 1..3"),
// https://github.com/Disservin/fastchess/blob/master/app/tests/elo_test.cpp
// (the values also in fastchess issue #243).
#[test]
fn elo_nelo_and_los_match_fastchess_elo_tests() {
    let (elo, nelo, los) = printed(&fastchess(34, 54, 31, 32, 64, 75));
    assert_eq!(
        (elo.as_str(), nelo.as_str(), los.as_str()),
        ("55.58 +/- 27.65", "57.94 +/- 28.28", "100.00 %")
    );
    let (elo, nelo, los) = printed(&fastchess(332, 433, 457, 41, 333, 334));
    assert_eq!((elo.as_str(), nelo.as_str(), los.as_str()), ("-8.64 +/- 10.33", "-9.17 +/- 10.96", "5.05 %"));
    let (elo, nelo, _) = printed(&fastchess(7895, 8757, 5485, 200, 568, 9999));
    assert_eq!((elo.as_str(), nelo.as_str()), ("-21.04 +/- 2.95", "-19.01 +/- 2.65"));
}

// fastchess, app/tests/sprt_test.cpp ("normalized pentanomial 1, 2",
// "logistic pentanomial 1, 2"),
// https://github.com/Disservin/fastchess/blob/master/app/tests/sprt_test.cpp
#[test]
fn llr_matches_fastchess_sprt_tests_in_both_models() {
    let cases = [
        (fastchess(365, 16618, 36029, 200, 16974, 390), sprt(0.0, 2.0, Model::Normalized), "2.25"),
        (fastchess(127, 4883, 10311, 401, 5150, 104), sprt(-1.75, 0.25, Model::Normalized), "3.01"),
        (fastchess(223, 9863, 20279, 1000, 10037, 246), sprt(0.5, 2.5, Model::Logistic), "-3.07"),
        (fastchess(871, 26175, 55003, 980, 26678, 821), sprt(0.0, 2.0, Model::Logistic), "-4.98"),
    ];
    for (p, test, expected) in cases {
        assert_eq!(format!("{:.2}", test.llr(&p)), expected, "{p:?} {test:?}");
    }
}

// Not published: computed once with an independent Python transcription of
// Fishtest's server/fishtest/stats/LLRcalc.py (LLR_normalized and
// LLR_logistic; scipy's brentq replaced by bisection), run on these counts.
#[test]
fn llr_matches_fishtests_llrcalc_on_other_samples() {
    let cases = [
        ([3, 18, 40, 30, 9], 0.0, 10.0, Model::Normalized, "0.92"),
        ([3, 18, 40, 30, 9], 0.0, 10.0, Model::Logistic, "1.28"),
        ([61, 47, 167, 68, 104], 0.0, 10.0, Model::Logistic, "3.13"),
        ([1, 5, 45, 54, 252], 0.0, 5.0, Model::Normalized, "6.29"),
        ([1, 5, 45, 54, 252], 0.0, 5.0, Model::Logistic, "5.06"),
        ([104, 0, 0, 0, 0], 0.0, 5.0, Model::Normalized, "-2.14"),
        ([0, 0, 100, 0, 0], 0.0, 5.0, Model::Logistic, "-1.44"),
    ];
    for (counts, elo0, elo1, model, expected) in cases {
        let llr = sprt(elo0, elo1, model).llr(&Pentanomial(counts));
        assert_eq!(format!("{llr:.2}"), expected, "{counts:?} [{elo0}, {elo1}] {model:?}");
    }
}

/// `report` without its title line.
fn body(p: [u64; 5], wdl: (u64, u64, u64), sprt: Option<&Sprt>) -> String {
    let wdl = Wdl { wins: wdl.0, draws: wdl.1, losses: wdl.2 };
    let block = report("A vs B", &Pentanomial(p), &wdl, sprt);
    let (title, rest) = block.split_once('\n').expect("a title line");
    assert_eq!(title, "Results of A vs B:");
    rest.to_owned()
}

// Blocks fastchess printed at the end of real SPRT runs (normalized model),
// published in the changelog of the Artemis chess engine; fastchess prints
// the LLR's share of the bound, "(101.6%)", between the LLR and the bounds,
// which compete.md's block leaves out.
#[test]
fn report_prints_fastchess_blocks_from_real_matches() {
    let test = Sprt { alpha: 0.05, beta: 0.1, ..sprt(0.0, 10.0, Model::Normalized) };
    assert_eq!(
        body([61, 47, 167, 68, 104], (435, 131, 328), Some(&test)),
        "Elo: 41.78 +/- 21.18, nElo: 45.42 +/- 22.77\n\
         LOS: 100.00 %, DrawRatio: 37.36 %, PairsRatio: 1.59\n\
         Games: 894, Wins: 435, Losses: 328, Draws: 131, Points: 500.5 (55.98 %)\n\
         Ptnml(0-2): [61, 47, 167, 68, 104], WL/DD Ratio: 19.88\n\
         LLR: 2.94 (-2.25, 2.89) [0.00, 10.00]\n"
    );
    assert_eq!(
        body([0, 2, 165, 51, 2], (55, 383, 2), Some(&sprt(0.0, 10.0, Model::Normalized))),
        "Elo: 42.05 +/- 10.91, nElo: 126.40 +/- 32.46\n\
         LOS: 100.00 %, DrawRatio: 75.00 %, PairsRatio: 26.50\n\
         Games: 440, Wins: 55, Losses: 2, Draws: 383, Points: 246.5 (56.02 %)\n\
         Ptnml(0-2): [0, 2, 165, 51, 2], WL/DD Ratio: 0.00\n\
         LLR: 2.95 (-2.94, 2.94) [0.00, 10.00]\n"
    );
}

// A clean sweep, as fastchess printed it (same changelog): infinite Elo,
// NaN errors printed "-nan", and the LLR still finite.
#[test]
fn a_clean_sweep_prints_inf_and_nan_as_fastchess_does() {
    let test = sprt(0.0, 10.0, Model::Normalized);
    assert_eq!(
        body([0, 0, 0, 0, 74], (148, 0, 0), Some(&test)),
        "Elo: inf +/- -nan, nElo: inf +/- -nan\n\
         LOS: 100.00 %, DrawRatio: 0.00 %, PairsRatio: inf\n\
         Games: 148, Wins: 148, Losses: 0, Draws: 0, Points: 148.0 (100.00 %)\n\
         Ptnml(0-2): [0, 0, 0, 0, 74], WL/DD Ratio: -nan\n\
         LLR: 2.95 (-2.94, 2.94) [0.00, 10.00]\n"
    );
    assert_eq!(test.decision(&Pentanomial([0, 0, 0, 0, 74])), Some(Decision::H1));
    assert_eq!(test.decision(&Pentanomial([0, 0, 0, 0, 70])), None);
}

// A block fastchess printed in another engine's history (t-veor/hardfiskur,
// elo_history.md, commit 0a8f348); its LLR came from an older fastchess, so
// only the statistics are compared.
#[test]
fn report_matches_a_block_with_a_low_wl_dd_ratio() {
    assert_eq!(
        body([261, 844, 1263, 897, 292], (2053, 3123, 1938), None),
        "Elo: 5.62 +/- 6.02, nElo: 7.54 +/- 8.07\n\
         LOS: 96.64 %, DrawRatio: 35.51 %, PairsRatio: 1.08\n\
         Games: 7114, Wins: 2053, Losses: 1938, Draws: 3123, Points: 3614.5 (50.81 %)\n\
         Ptnml(0-2): [261, 844, 1263, 897, 292], WL/DD Ratio: 0.83\n"
    );
}

// fastchess's formulas in IEEE arithmetic, which it prints as is: all draws
// have no variance (nElo and LOS 0/0), no pairs make every share 0/0.
#[test]
fn all_draws_and_no_games_print_without_panicking() {
    assert_eq!(
        body([0, 0, 5, 0, 0], (0, 10, 0), None),
        "Elo: -0.00 +/- 0.00, nElo: -nan +/- -nan\n\
         LOS: -nan %, DrawRatio: 100.00 %, PairsRatio: -nan\n\
         Games: 10, Wins: 0, Losses: 0, Draws: 10, Points: 5.0 (50.00 %)\n\
         Ptnml(0-2): [0, 0, 5, 0, 0], WL/DD Ratio: 0.00\n"
    );
    let test = sprt(0.0, 10.0, Model::Logistic);
    let empty = body([0; 5], (0, 0, 0), Some(&test));
    assert!(empty.starts_with("Elo: -nan +/- -nan, nElo: -nan +/- -nan\n"), "{empty}");
    assert!(empty.contains("Games: 0, Wins: 0, Losses: 0, Draws: 0, Points: 0.0 (-nan %)\n"), "{empty}");
    assert_eq!(test.decision(&Pentanomial([0; 5])), None);
}

#[test]
fn bounds_and_decisions_follow_alpha_and_beta() {
    let (lower, upper) = sprt(0.0, 5.0, Model::Normalized).bounds();
    assert_eq!((format!("{lower:.2}"), format!("{upper:.2}")), ("-2.94".to_owned(), "2.94".to_owned()));
    let test = sprt(0.0, 2.0, Model::Logistic);
    assert_eq!(test.decision(&fastchess(871, 26175, 55003, 980, 26678, 821)), Some(Decision::H0));
    assert_eq!(Decision::H0.to_string(), "H0 was accepted");
    assert_eq!(Decision::H1.to_string(), "H1 was accepted");
}

#[test]
fn sprt_parameters_read_as_fastchess_takes_them() {
    let test: Sprt = "elo0=0,elo1=10".parse().expect("valid");
    assert_eq!(test, sprt(0.0, 10.0, Model::Normalized));
    let test: Sprt = "elo0=-1.5, elo1=0.5,alpha=0.1,beta=0.2".parse().expect("valid");
    assert_eq!((test.elo0, test.elo1, test.alpha, test.beta), (-1.5, 0.5, 0.1, 0.2));
    for bad in ["", "elo0=0", "elo1=5", "elo0=5,elo1=0", "elo0=0,elo1=5,alpha=0", "elo0=0,elo1=5,beta=1"] {
        assert!(bad.parse::<Sprt>().is_err(), "{bad:?} accepted");
    }
    for bad in
        ["elo0=0,elo1=5,alpha=0.6,beta=0.5", "elo0=0,elo1=5,gamma=1", "elo0=0,elo0=1,elo1=5", "elo0=x,elo1=5"]
    {
        assert!(bad.parse::<Sprt>().is_err(), "{bad:?} accepted");
    }
    assert_eq!("logistic".parse(), Ok(Model::Logistic));
    assert!("bayesian".parse::<Model>().is_err());
}

#[test]
fn the_games_tell_wl_pairs_from_dd_pairs() {
    // A WL pair, a DD pair and a WD pair: W, L; D, D; W, D.
    let p = Pentanomial([0, 0, 2, 1, 0]);
    let wdl = Wdl { wins: 2, draws: 3, losses: 1 };
    assert!(p.consistent_with(&wdl));
    assert!(report("A vs B", &p, &wdl, None).contains("WL/DD Ratio: 1.00\n"));
    let all_draws = p.wdl_counting_even_pairs_as_draws();
    assert_eq!(all_draws, Wdl { wins: 1, draws: 5, losses: 0 });
    assert!(p.consistent_with(&all_draws));
    for wrong in [(2, 3, 2), (3, 3, 0), (1, 4, 1), (0, 6, 0), (2, 1, 3)] {
        assert!(!p.consistent_with(&Wdl { wins: wrong.0, draws: wrong.1, losses: wrong.2 }), "{wrong:?}");
    }
}

// Reference values of erf from Abramowitz and Stegun, table 7.1 (and any
// libm): the LOS is built on it.
#[test]
fn erf_is_accurate_to_double_precision() {
    for (x, expected) in [
        (0.5, 0.520_499_877_813_046_5),
        (1.0, 0.842_700_792_949_714_9),
        (2.0, 0.995_322_265_018_952_7),
        (3.0, 0.999_977_909_503_001_4),
        (-1.0, -0.842_700_792_949_714_9),
        (0.0, 0.0),
    ] {
        assert!((erf(x) - expected).abs() < 1e-15, "erf({x}) = {} not {expected}", erf(x));
    }
    assert_eq!((erf(f64::INFINITY), erf(f64::NEG_INFINITY)), (1.0, -1.0));
    assert!(erf(f64::NAN).is_nan());
}
