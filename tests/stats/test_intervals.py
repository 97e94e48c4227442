"""mean_estimate / macro_mean_estimate: every expected value is worked out in a comment
or recomputed with scipy (the reference implementation)."""

from __future__ import annotations

import inspect
import json
import math

import numpy as np
import pytest
import scipy.stats

from heritage_eval.stats import Estimate, macro_mean_estimate, mean_estimate
from heritage_eval.stats.intervals import stratified_distribution

RNG_KW = "rng" if "rng" in inspect.signature(scipy.stats.bootstrap).parameters else (
    "random_state"
)

# 30 scores in [0, 1], fixed here (a mix of 0/1 accuracies and partial NED-like scores).
SCORES = [0.0, 1.0, 0.5, 0.25, 1.0, 0.75, 0.0, 1.0, 0.9, 0.1, 0.6, 0.4, 1.0, 0.0, 0.8,
          0.3, 0.7, 1.0, 0.2, 0.55, 0.45, 0.95, 0.05, 1.0, 0.0, 0.65, 0.35, 0.85, 0.15, 0.5]


def test_unclustered_stderr_by_hand() -> None:
    # [1,0,1,1]: mean 0.75; deviations .25,-.75,.25,.25; squares sum .0625*3+.5625 = .75;
    # variance (ddof=1) .75/3 = .25; sd .5; se .5/sqrt(4) = .25.
    est = mean_estimate([1, 0, 1, 1])
    assert est.value == pytest.approx(0.75)
    assert est.stderr == pytest.approx(0.25)
    assert est.n == 4
    assert est.method == "bootstrap-percentile"
    assert est.n_resamples == 2000
    assert est.n_clusters is None


def test_interval_equals_scipy_percentile_bootstrap_and_contains_mean() -> None:
    # Reference: scipy.stats.bootstrap, percentile method, same seed and resample count.
    ref = scipy.stats.bootstrap(
        (np.asarray(SCORES),), np.mean, n_resamples=2000, vectorized=True,
        method="percentile", confidence_level=0.95, **{RNG_KW: np.random.default_rng(7)},
    )
    est = mean_estimate(SCORES, seed=7)
    assert est.ci_low == pytest.approx(float(ref.confidence_interval.low), abs=1e-12)
    assert est.ci_high == pytest.approx(float(ref.confidence_interval.high), abs=1e-12)
    assert est.value is not None and est.ci_low is not None and est.ci_high is not None
    assert est.ci_low < est.value < est.ci_high
    # 90 % interval (same reference, confidence_level=0.9) is narrower.
    est90 = mean_estimate(SCORES, seed=7, confidence=0.9)
    assert est90.ci_low is not None and est90.ci_high is not None
    assert est.ci_low <= est90.ci_low < est90.ci_high <= est.ci_high
    assert est90.confidence == 0.9


def test_interval_width_shrinks_with_n() -> None:
    # Same proportion 0.75 at n = 20 and n = 2000: width ~ 1/sqrt(n), so ~10x narrower.
    small = mean_estimate([1, 0, 1, 1] * 5)
    large = mean_estimate([1, 0, 1, 1] * 500)
    assert small.ci_low is not None and small.ci_high is not None
    assert large.ci_low is not None and large.ci_high is not None
    assert (small.ci_high - small.ci_low) > 5 * (large.ci_high - large.ci_low)
    assert large.ci_low < 0.75 < large.ci_high


def test_clustered_stderr_by_hand() -> None:
    # x = [1,0 | 1,1 | 0,0], clusters a, b, c. N = 6, m = 3/6 = .5.
    # T_a = .5 - .5 = 0; T_b = .5 + .5 = 1; T_c = -.5 - .5 = -1; sum T^2 = 2.
    # SE = sqrt(G/(G-1) * 2) / N = sqrt(3/2 * 2) / 6 = sqrt(3)/6 = 0.288675...
    est = mean_estimate([1, 0, 1, 1, 0, 0], clusters=["a", "a", "b", "b", "c", "c"])
    assert est.value == pytest.approx(0.5)
    assert est.stderr == pytest.approx(math.sqrt(3) / 6)
    assert est.n_clusters == 3
    assert est.method == "cluster-bootstrap-percentile"


def test_clustered_stderr_exceeds_unclustered_for_perfectly_correlated_clusters() -> None:
    # 5 clusters of 4 identical values, cluster values 1,0,1,1,0: N = 20, m = 12/20 = .6.
    # Unclustered: sum (x-m)^2 = 12*.16 + 8*.36 = 4.8; var 4.8/19; se = sqrt(4.8/19/20)
    #   = 0.112390...
    # Clustered: T_g = 4*.4 = 1.6 (x3), 4*(-.6) = -2.4 (x2); sum T^2 = 7.68 + 11.52 = 19.2;
    #   SE = sqrt(5/4 * 19.2) / 20 = sqrt(24)/20 = 0.244949... (= sd of the 5 cluster
    #   means, sqrt(.3), over sqrt(5)).
    x = [v for v in (1, 0, 1, 1, 0) for _ in range(4)]
    c = [g for g in range(5) for _ in range(4)]
    plain = mean_estimate(x)
    clustered = mean_estimate(x, clusters=c)
    assert plain.stderr == pytest.approx(math.sqrt(4.8 / 19 / 20))
    assert clustered.stderr == pytest.approx(math.sqrt(24) / 20)
    assert clustered.stderr is not None and plain.stderr is not None
    assert clustered.stderr > 2 * plain.stderr
    # The cluster bootstrap interval is wider than the observation bootstrap one too.
    assert clustered.ci_low is not None and clustered.ci_high is not None
    assert plain.ci_low is not None and plain.ci_high is not None
    assert clustered.ci_high - clustered.ci_low > plain.ci_high - plain.ci_low


def test_cluster_bootstrap_resamples_whole_clusters() -> None:
    # Same 5 clusters of 4 identical values (cluster values 1,0,1,1,0). Drawing 5 whole
    # clusters, the resampled mean is K/5 with K ~ Binomial(5, .6) the number of 1-clusters
    # drawn: only the values 0, .2, .4, .6, .8, 1 can occur. P(K=0) = .4^5 = .0102,
    # P(K<=1) = .0102 + 5*.6*.4^4 = .0870, so the 2.5 % quantile is .2; P(K=5) = .6^5 =
    # .0778 > .025, so the 97.5 % quantile is 1.0. Interval [.2, 1.0].
    x = np.repeat([1.0, 0.0, 1.0, 1.0, 0.0], 4)
    c = np.repeat(np.arange(5), 4)
    dist = stratified_distribution(x, np.zeros(20, dtype=np.intp), 1, c, 5, 2000,
                                   np.random.default_rng(0))
    k = dist * 5
    assert np.allclose(k, np.round(k))
    assert set(np.round(k).astype(int).tolist()) <= {0, 1, 2, 3, 4, 5}
    # Bootstrap SD of K/5 is sqrt(.6*.4/5) = 0.2191 (binomial); 2000 draws: within 5 %.
    assert float(np.std(dist)) == pytest.approx(math.sqrt(0.6 * 0.4 / 5), rel=0.05)
    est = mean_estimate(x, clusters=c.tolist())
    assert est.ci_low == pytest.approx(0.2)
    assert est.ci_high == pytest.approx(1.0)


def test_singleton_clusters_match_ordinary_bootstrap() -> None:
    # One observation per cluster: the CRVE reduces to sqrt(N/(N-1) sum (x-m)^2)/N =
    # sd/sqrt(N), and resampling clusters is resampling observations, so the interval is
    # the ordinary bootstrap's (loose tolerance: a fraction of the standard error).
    plain = mean_estimate(SCORES, seed=3)
    single = mean_estimate(SCORES, clusters=list(range(len(SCORES))), seed=3)
    assert single.stderr == pytest.approx(plain.stderr, rel=1e-12)
    assert plain.stderr is not None
    assert single.ci_low == pytest.approx(plain.ci_low, abs=0.25 * plain.stderr)
    assert single.ci_high == pytest.approx(plain.ci_high, abs=0.25 * plain.stderr)
    assert single.n_clusters == len(SCORES)


def test_macro_mean_is_mean_of_group_means_with_analytic_stderr() -> None:
    # Group A [1,1,1,0] mean .75; B [0,1] mean .5; C [0,0,0,0,0,1] mean 1/6.
    # Macro = (9/12 + 6/12 + 2/12)/3 = 17/36 = .4722; pooled would be 5/12 = .4167.
    # se_A = .5/2 = .25; se_B = sqrt(.5)/sqrt(2) = .5; se_C: var = (5/36 + 25/36)/5 = 1/6,
    # se = sqrt(1/6)/sqrt(6) = 1/6. SE = sqrt(.0625 + .25 + 1/36)/3 = (7/12)/3 = 7/36.
    values = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1]
    groups = list("AAAABBCCCCCC")
    est = macro_mean_estimate(values, groups)
    assert est.value == pytest.approx(17 / 36)
    assert est.value != pytest.approx(5 / 12)
    assert est.stderr == pytest.approx(7 / 36)
    assert est.n == 12
    assert est.method == "stratified-bootstrap-percentile"
    assert est.ci_low is not None and est.ci_high is not None and est.value is not None
    assert est.ci_low < est.value < est.ci_high


def test_macro_with_clusters_counts_group_cluster_units() -> None:
    # Clusters are nested in groups: label "p" in A and in B counts as two units -> 3.
    # Group A: [1,1 | 0] clusters p,p,q: mean 2/3; B: [1,0] cluster p: mean .5.
    # Macro = (2/3 + 1/2)/2 = 7/12. B has one cluster: its se is undefined -> stderr None.
    est = macro_mean_estimate([1, 1, 0, 1, 0], ["A", "A", "A", "B", "B"],
                              ["p", "p", "q", "p", "p"])
    assert est.value == pytest.approx(7 / 12)
    assert est.n_clusters == 3
    assert est.stderr is None
    assert est.method == "stratified-cluster-bootstrap-percentile"
    assert est.ci_low is not None and est.ci_high is not None and est.value is not None
    assert est.ci_low <= est.value <= est.ci_high


@pytest.mark.filterwarnings("error")
def test_degenerate_inputs_never_nan_never_warn() -> None:
    const = mean_estimate([0.1, 0.1, 0.1])  # constant: [v, v], stderr exactly 0
    assert (const.value, const.stderr, const.ci_low, const.ci_high) == (0.1, 0.0, 0.1, 0.1)
    one = mean_estimate([1])  # n == 1: value set, stderr None, interval [1, 1]
    assert (one.value, one.stderr, one.ci_low, one.ci_high) == (1.0, None, 1.0, 1.0)
    empty = mean_estimate([])
    assert empty == Estimate(None, 0, None, None, None, "none", 0.95, 0, None)
    assert macro_mean_estimate([], []).method == "none"
    single_cluster = mean_estimate([1, 0, 1], clusters=["x", "x", "x"])
    assert single_cluster.stderr is None and single_cluster.ci_low is None
    assert mean_estimate([1, 1], clusters=["x", "x"]).stderr == 0.0
    for est in (const, one, empty, single_cluster):
        json.dumps(est.to_dict(), allow_nan=False)


def test_to_dict_is_json_ready() -> None:
    d = mean_estimate([1, 0, 1, 1]).to_dict()
    assert list(d) == ["value", "n", "stderr", "ci_low", "ci_high", "method", "confidence",
                       "n_resamples", "n_clusters"]
    assert all(type(d[k]) is float for k in ("value", "stderr", "ci_low", "ci_high"))
    json.dumps(d, allow_nan=False)


def test_validation_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match=r"values\[2\] is None"):
        mean_estimate([1.0, 0.0, None, 1.0])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"values\[1\] is nan"):
        mean_estimate([1.0, float("nan")])
    with pytest.raises(ValueError, match=r"values\[0\] is inf"):
        mean_estimate(np.array([np.inf, 1.0]))
    with pytest.raises(ValueError, match="clusters has 2 entries but there are 3"):
        mean_estimate([1, 0, 1], clusters=["a", "b"])
    with pytest.raises(ValueError, match="groups has 1 entries"):
        macro_mean_estimate([1, 0], ["a"])
    with pytest.raises(ValueError, match="confidence"):
        mean_estimate([1, 0], confidence=95)
    with pytest.raises(ValueError, match="n_resamples"):
        mean_estimate([1, 0], n_resamples=100)


def test_deterministic_for_a_seed_and_sensitive_to_it() -> None:
    a = mean_estimate(SCORES, seed=11)
    b = mean_estimate(SCORES, seed=11)
    assert a == b
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    c = mean_estimate(SCORES, seed=12)
    assert (c.ci_low, c.ci_high) != (a.ci_low, a.ci_high)
    assert c.ci_low == pytest.approx(a.ci_low, abs=0.05)
    assert c.ci_high == pytest.approx(a.ci_high, abs=0.05)
    groups = ["g1"] * 10 + ["g2"] * 20
    clusters = [i // 3 for i in range(30)]
    m1 = macro_mean_estimate(SCORES, groups, clusters, seed=5)
    assert m1 == macro_mean_estimate(SCORES, groups, clusters, seed=5)
    assert m1 != macro_mean_estimate(SCORES, groups, clusters, seed=6)


def test_performance_sanity_10000_observations_500_clusters() -> None:
    # Not a timing assertion: 10,000 observations in 500 clusters, 2000 resamples, runs.
    rng = np.random.default_rng(2024)
    x = (rng.random(10_000) < 0.6).astype(float)
    clusters = np.repeat(np.arange(500), 20).tolist()
    groups = [c % 9 for c in clusters]
    for est in (mean_estimate(x, clusters), macro_mean_estimate(x, groups, clusters)):
        assert est.n == 10_000 and est.n_clusters == 500
        assert est.ci_low is not None and est.ci_high is not None and est.value is not None
        assert est.ci_low < est.value < est.ci_high


@pytest.mark.parametrize("chunk", [1_000_000, 7_777, 1])
def test_intervals_do_not_depend_on_the_draw_chunk(chunk: int, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    # The bootstrap draws its indices a chunk of rows at a time (memory bound); a
    # Generator's stream is the same however it is split, so the intervals must be
    # equal (==) to those drawn with the default chunk: plain, stratified and clustered.
    import heritage_eval.stats.intervals as iv

    rng = np.random.default_rng(11)
    x = rng.random(3000)
    groups = rng.integers(0, 9, 3000)
    clusters = rng.integers(0, 400, 3000)

    def all_three() -> list[Estimate]:
        return [mean_estimate(x, seed=2), macro_mean_estimate(x, groups, seed=2),
                mean_estimate(x, clusters, seed=2)]

    default = all_three()
    monkeypatch.setattr(iv, "_CHUNK", chunk)
    assert all_three() == default


def test_integer_labels_get_the_codes_of_their_first_appearance() -> None:
    # as_codes numbers labels in order of first appearance; an integer array takes a
    # vectorised path that must give the same codes: 7, 3, 7, 9, 3 -> 0, 1, 0, 2, 1.
    from heritage_eval.stats.intervals import as_codes

    codes, n = as_codes(np.array([7, 3, 7, 9, 3]), "groups", 5)
    assert codes.tolist() == [0, 1, 0, 2, 1] and n == 3
    assert as_codes([7, 3, 7, 9, 3], "groups", 5)[0].tolist() == [0, 1, 0, 2, 1]
    with pytest.raises(ValueError, match="groups has 2 entries but there are 5"):
        as_codes(np.array([1, 2]), "groups", 5)
