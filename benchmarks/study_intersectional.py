"""Study of IntersectionalSmoothing: accuracy, intervals and the interaction test
on semi-synthetic intersectional groups with a known truth.

Usage (from the repository root)::

    python benchmarks/study_intersectional.py [--quick] [--n-replicates R]

Not registered in ``benchmarks/run.py``: a study, run by hand; its tables are in
``doc/user_guide/intersectional.rst``.

**Designs** (cells ``TP, FN, FP, TN``; each intersection's true cell
probabilities come from three logistic models of the real data -- prevalence,
TPR, FPR -- with main effects and all two- and three-way interactions, ridge 1
on the main effects and, on the interactions, the ridge of largest Laplace
marginal likelihood on the real data: large groups keep their observed
interactions, the smallest fall back on their main effects):

* ``compas-decile``: ProPublica's COMPAS two-year data
  (``../shared/data/compas-scores-two-years.csv``, ProPublica's row filter),
  intersections ``race x sex x age_cat`` (34 non-empty of 36), truth
  ``two_year_recid``, prediction ``decile_score > 4``;
* ``compas-high``: the same with prediction ``score_text == "High"``;
* ``compas-decile-stress``, ``german-stress``: the same data with the
  interactions' ridge of the truth fixed at 1 (see ``_truth``);
* ``german``: UCI German credit (``../shared/data/german.data``), ``sex`` (from
  the personal status) x age band (<= 25, 26-35, 36-50, > 50) x foreign
  worker, truth bad credit, prediction of a logistic regression (5-fold
  out-of-fold, threshold 1/2) fitted here;
* ``synthetic``: 4 x 3 x 3 attributes, additive logits for prevalence, TPR and
  FPR plus large interactions (+-1.5 on the TPR logit, +-1.2 on the FPR logit)
  on 4 of the 36 groups; "real" sizes log-uniform in [5, 400].

Each design is resampled (``Multinomial(n_g, p_g)``) at the real group sizes
and with every group at n = 5, 10, 20, 30, 50, 150. For the interaction
test's size, the truth is replaced by its main-effects (additive) fit.

**Estimators**: raw; ``CrossPriorSmoothing(lam=10)`` and ``(lam="auto")`` toward
the rest (every other group of the replicate); ``IntersectionalSmoothing()``
(``IS``) and ``IntersectionalSmoothing(lam="auto-lower")`` (``IS-low``);
and a plain implementation of the structured regression of Herlihy, Truong,
Chouldechova and Dudik (FAccT 2024, "A structured regression approach for
evaluating model performance across intersectional subgroups"), written here
from the paper's description: each group's observed metric regressed on main
effects plus all two- and three-way interactions, weighted by the inverse of a
pooled binomial variance ``pbar (1 - pbar) / m_g``, with a ridge penalty on the
interactions only (chosen by generalized cross-validation); intervals by a
residual bootstrap (standardized residuals resampled, 200 resamples, penalty
held fixed, percentile intervals).

**Metrics**: MSE of TPR, FPR and PPV against the truth over the replicates in
which the raw value is defined (every estimator on the same draws), averaged
over the intersections of a size band; coverage and mean width of 95 %
intervals: for the smoothers those ``group_metrics(counts=..., smoothing=...,
confidence_level=0.95, interval_method=...)`` gives, the default
``"posterior-hull"`` and ``"posterior"`` (computed through the same
``column_interval`` with the smoother's pseudo-counts, and checked against
``group_metrics`` itself on two replicates of every scenario, to 1e-12), the
raw value's ``"auto"`` (Clopper-Pearson) interval, the bootstrap for the
regression; size of
the exact binomial interaction test (per test, and family-wise with Holm's
correction over the groups, for each metric) and its power on the synthetic
design's interacting groups.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn_smallfair._column_intervals import column_interval
from sklearn_smallfair._draws import DEFAULT_N_RESAMPLES
from sklearn_smallfair.metrics import get_metric, group_metrics
from sklearn_smallfair.smoothing import (
    CrossPriorSmoothing,
    IntersectionalSmoothing,
)
from sklearn_smallfair.smoothing._attributes import _join_labels
from sklearn_smallfair.smoothing._auto import fit_lam

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SIZES = (5, 10, 20, 30, 50, 150)
METRICS = {"tpr": ((0,), (0, 1)), "fpr": ((2,), (2, 3)), "ppv": ((0,), (0, 2))}
ALPHA = 0.05
METRIC_OBJECTS = {name: get_metric(name) for name in METRICS}


# ----------------------------------------------------------------------------- data
def _compas(prediction):
    df = pd.read_csv(DATA / "compas-scores-two-years.csv")
    keep = (
        df["days_b_screening_arrest"].between(-30, 30)
        & (df["is_recid"] != -1)
        & (df["c_charge_degree"] != "O")
        & (df["score_text"] != "N/A")
        & df["score_text"].notna()
    )
    df = df.loc[keep]
    y = df["two_year_recid"].to_numpy() == 1
    if prediction == "decile":  # "Medium" or "High"
        yhat = df["decile_score"].to_numpy() > 4
    else:  # "High" only (deciles 8-10)
        yhat = df["score_text"].to_numpy() == "High"
    attrs = df[["race", "sex", "age_cat"]].reset_index(drop=True)
    return attrs, y, yhat


def _german():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_smallfair.datasets._realdata import _read_german

    X, good, _ = _read_german(DATA / "german.data")
    raw = pd.read_csv(DATA / "german.data", sep=r"\s+", header=None, dtype=str)
    y = good == 0  # positive: bad credit
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    proba = cross_val_predict(model, X, y, cv=5, method="predict_proba")[:, 1]
    yhat = proba > 0.5
    age = X["age"].to_numpy()
    band = np.select(
        [age <= 25, age <= 35, age <= 50], ["<=25", "26-35", "36-50"], ">50"
    )
    attrs = pd.DataFrame(
        {
            "sex": np.where(raw[8].isin(["A92", "A95"]), "female", "male"),
            "age": band,
            "foreign": np.where(raw[19] == "A201", "yes", "no"),
        }
    )
    return attrs, y, yhat


def _counts(attrs, y, yhat):
    cell = np.select([y & yhat, y & ~yhat, ~y & yhat], [0, 1, 2], 3)  # TP, FN, FP, TN
    frame = attrs.copy()
    frame["cell"] = cell
    table = frame.groupby([*list(attrs.columns), "cell"]).size().unstack(fill_value=0)
    table = table.reindex(columns=range(4), fill_value=0)
    return table.index.to_frame(index=False), table.to_numpy(np.float64)


def _penalized_logit(A, y, m, pen):
    """Penalized binomial logit of ``y`` successes in ``m`` trials; returns the
    fitted rates and the Laplace approximation of the log marginal likelihood
    of the penalty (coefficients ``N(0, 1 / pen)``, flat where ``pen == 0``)."""
    beta = np.zeros(A.shape[1])
    for _ in range(200):
        mu = 1 / (1 + np.exp(-(A @ beta)))
        grad = A.T @ (m * mu - y) + pen * beta
        hess = (A * (m * mu * (1 - mu))[:, None]).T @ A + np.diag(pen + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    eta = A @ beta
    mu = 1 / (1 + np.exp(-eta))
    hess = (A * (m * mu * (1 - mu))[:, None]).T @ A + np.diag(pen + 1e-9)
    evidence = (
        (y * eta - m * np.logaddexp(0.0, eta)).sum()
        - 0.5 * (pen * beta**2).sum()
        + 0.5 * np.log(pen[pen > 0]).sum()
        - 0.5 * np.linalg.slogdet(hess)[1]
    )
    return mu, evidence


#: Interaction penalties searched for the truth (the ridge on the two- and
#: three-way interaction coefficients; 1 / penalty is their prior variance).
TRUTH_PENALTIES = np.logspace(-1, 4, 21)


def _truth(attrs, counts, interaction_penalty="evidence"):
    """Three logits (prevalence, TPR, FPR) with main effects and all two- and
    three-way interactions, ridge 1 on the main effects and ``interaction_penalty``
    on the interactions, the intercept free. ``"evidence"`` (the designs of the
    study) takes, for each logit, the penalty of largest Laplace marginal
    likelihood on the real data: the spread of interactions the data support
    (prior sd 0.1-0.3 on the log-odds scale for these data sets). A number
    fixes it (``1``: the stress design, interactions of prior sd 1 on each of
    the four interaction terms of a three-attribute group, rejected by the data
    by 10-20 log-likelihood units)."""
    X, Z = _interaction_columns(attrs)
    A = np.hstack([X, Z])
    pos = counts[:, 0] + counts[:, 1]
    neg = counts[:, 2] + counts[:, 3]
    rates, chosen = [], []
    for y, m in ((pos, counts.sum(1)), (counts[:, 0], pos), (counts[:, 2], neg)):
        grid = (
            TRUTH_PENALTIES
            if interaction_penalty == "evidence"
            else [float(interaction_penalty)]
        )
        fits = [
            _penalized_logit(
                A, y, m, np.r_[0.0, np.ones(X.shape[1] - 1), np.full(Z.shape[1], r)]
            )
            for r in grid
        ]
        best = int(np.argmax([f[1] for f in fits]))
        rates.append(fits[best][0])
        chosen.append(float(grid[best]))
    pi, t, f = rates
    p = np.stack([pi * t, pi * (1 - t), (1 - pi) * f, (1 - pi) * (1 - f)], 1)
    return p, chosen


def _synthetic(seed=12345):
    rng = np.random.default_rng(seed)
    levels = {"A": 4, "B": 3, "C": 3}
    grid = pd.MultiIndex.from_product(
        [[f"{k}{i}" for i in range(L)] for k, L in levels.items()], names=list(levels)
    ).to_frame(index=False)
    codes = [pd.factorize(grid[k])[0] for k in levels]
    logits = {}
    for name, base in (("prev", -0.4), ("tpr", 0.8), ("fpr", -1.2)):
        eff = [rng.normal(0, 0.5, L) for L in levels.values()]
        logits[name] = base + sum(e[c] for e, c in zip(eff, codes))
    interacting = np.array([3, 11, 20, 33])
    signs = np.array([1.0, -1.0, 1.0, -1.0])
    logits["tpr"] = logits["tpr"].copy()
    logits["fpr"] = logits["fpr"].copy()
    logits["tpr"][interacting] += 1.5 * signs
    logits["fpr"][interacting] -= 1.2 * signs
    pi, t, f = (1 / (1 + np.exp(-logits[k])) for k in ("prev", "tpr", "fpr"))
    p = np.stack([pi * t, pi * (1 - t), (1 - pi) * f, (1 - pi) * (1 - f)], axis=1)
    sizes = np.round(np.exp(rng.uniform(np.log(5), np.log(400), len(grid))))
    return grid, p, sizes, interacting


def designs():
    out = {}
    for name, loader, penalty in (
        ("compas-decile", lambda: _compas("decile"), "evidence"),
        ("compas-high", lambda: _compas("high"), "evidence"),
        ("german", _german, "evidence"),
        ("compas-decile-stress", lambda: _compas("decile"), 1.0),
        ("german-stress", _german, 1.0),
    ):
        attrs, counts = _counts(*loader())
        p, chosen = _truth(attrs, counts, penalty)
        out[name] = {
            "attrs": attrs,
            "p": p,
            "sizes": counts.sum(axis=1),
            "counts": counts,
            "interacting": None,
            "penalties": chosen,
        }
    grid, p, sizes, interacting = _synthetic()
    out["synthetic"] = {
        "attrs": grid,
        "p": p,
        "sizes": sizes,
        "counts": None,
        "interacting": interacting,
        "penalties": None,
    }
    return out


def additive_truth(design):
    """The main-effects (no interaction) fit of a design's truth, at large n."""
    big = design["p"] * 1e5
    return IntersectionalSmoothing(lam=1.0).fit(big, attributes=design["attrs"])


# ---------------------------------------------------------------- estimators
def metric(c, name):
    num, den = METRICS[name]
    k = c[..., list(num)].sum(-1)
    m = c[..., list(den)].sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return k / m, k, m


def _interaction_columns(attrs):
    """One-hot main effects and all two- and three-way interaction columns."""
    cols = [pd.get_dummies(attrs[a]).to_numpy(float) for a in attrs.columns]
    main = np.hstack([np.ones((len(attrs), 1)), *cols])
    inter = []
    k = len(cols)
    for i in range(k):
        for j in range(i + 1, k):
            inter.append(
                (cols[i][:, :, None] * cols[j][:, None, :]).reshape(len(attrs), -1)
            )
    if k >= 3:
        for i in range(k):
            for j in range(i + 1, k):
                for h in range(j + 1, k):
                    prod = (
                        cols[i][:, :, None, None]
                        * cols[j][:, None, :, None]
                        * cols[h][:, None, None, :]
                    )
                    inter.append(prod.reshape(len(attrs), -1))
    inter = np.hstack(inter)
    inter = inter[:, inter.any(axis=0)]
    return main, inter


class StructuredRegression:
    """Herlihy et al. (FAccT 2024) structured regression, plain implementation.

    ``y_g ~ N(x_g b + z_g u, pbar (1 - pbar) / m_g)`` with ``u ~ N(0, tau2 I)``:
    main effects ``b`` free, the two- and three-way interactions ``u`` shrunk
    (ridge ``1 / tau2``); ``tau2`` by maximum likelihood on a grid, ``b`` by
    generalized least squares, the estimate the fitted mean plus the shrunk
    interactions (a linear smoother ``H`` of ``y``). Intervals: residual
    bootstrap through ``H`` (standardized residuals resampled).
    """

    TAU2 = np.r_[0.0, np.logspace(-6, 0, 25)]

    def __init__(self, attrs, n_boot=200, seed=0):
        self.X, self.Z = _interaction_columns(attrs)
        self.ZZ = self.Z @ self.Z.T
        self.n_boot = n_boot
        self.rng = np.random.default_rng(seed)

    def fit(self, k, m, alpha=0.05):
        """Estimates (G,) and bootstrap intervals for one replicate."""
        d = m > 0
        y = k[d] / m[d]
        pbar = k.sum() / max(m.sum(), 1)
        s2 = max(pbar * (1 - pbar), 1e-4)
        w = m[d] / s2
        X, Xd = self.X, self.X[d]
        ZZd = self.ZZ[np.ix_(d, d)]
        best = None
        for tau2 in self.TAU2:
            V = np.diag(1.0 / w) + tau2 * ZZd
            Vi = np.linalg.inv(V)
            B = np.linalg.pinv(Xd.T @ Vi @ Xd) @ Xd.T @ Vi
            r = y - Xd @ (B @ y)
            ll = -0.5 * (np.linalg.slogdet(V)[1] + r @ Vi @ r)
            if best is None or ll > best[0]:
                best = (ll, tau2, Vi, B)
        _, tau2, Vi, B = best
        H = X @ B + tau2 * self.ZZ[:, d] @ Vi @ (np.eye(d.sum()) - Xd @ B)
        fit = H @ y
        resid = np.sqrt(w) * (y - fit[d])
        resid = resid - resid.mean()
        draws = self.rng.choice(resid, size=(self.n_boot, d.sum()))
        boot = (fit[d] + draws / np.sqrt(w)) @ H.T
        low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
        return np.clip(fit, 0, 1), np.clip(low, 0, 1), np.clip(high, 0, 1)


def _labelled(c, attrs):
    """Counts as ``group_metrics(counts=...)`` takes them: indexed by the joined
    ``"a|b|c"`` labels, the index named ``"attr1|attr2|attr3"``."""
    index = pd.Index(
        _join_labels(attrs), dtype=object, name="|".join(map(str, attrs.columns))
    )
    return pd.DataFrame(c, index=index, columns=["TP", "FN", "FP", "TN"])


def intervals(name, c, prior, method, value_prior=None):
    """``(low, high)`` of the 95 % interval of metric ``name`` for counts ``c``
    (..., G, 4), through the function ``group_metrics`` calls for a column
    (``column_interval``): ``prior`` the smoother's pseudo-counts (None for a
    raw value), ``method`` ``"posterior-hull"`` (the default of a smoothed
    column), ``"posterior"`` or ``"clopper-pearson"`` (the default of a raw
    one). NaN where the column's value is undefined, as ``group_metrics``.
    ``value_prior``: the pseudo-counts of the smoothed value when the interval's
    are others (``IntersectionalSmoothing``'s ``interval_pseudo_counts``); the
    interval is then widened to hold the value, as ``group_metrics`` does."""
    shape = c.shape[:-1]
    flat = c.reshape(-1, 4)
    low, high = column_interval(
        METRIC_OBJECTS[name],
        flat,
        method=method,
        alpha=ALPHA,
        n_resamples=DEFAULT_N_RESAMPLES,
        seed=0,
        labels=np.arange(len(flat)),
        prior=None if prior is None else prior.reshape(-1, 4),
    )
    value = metric(flat if prior is None else flat + prior.reshape(-1, 4), name)[0]
    if value_prior is not None:
        value = metric(flat + value_prior.reshape(-1, 4), name)[0]
        ok = np.isfinite(low) & np.isfinite(value)
        low = np.where(ok, np.fmin(low, value), low)
        high = np.where(ok, np.fmax(high, value), high)
    undefined = ~np.isfinite(value)
    low = np.where(undefined, np.nan, low).reshape(shape)
    high = np.where(undefined, np.nan, high).reshape(shape)
    return low, high


def check_against_group_metrics(c, attrs, lam, mine):
    """The study's intervals of one replicate equal ``group_metrics``' own (to
    1e-12): ``mine[(method, metric)] = (low, high)`` for the smoother ``lam``."""
    frame = _labelled(c, attrs)
    worst = 0.0
    for method, gm_method in (("posterior-hull", "auto"), ("posterior", "posterior")):
        table = group_metrics(
            counts=frame,
            metrics=list(METRICS),
            smoothing=IntersectionalSmoothing(lam=lam),
            confidence_level=1.0 - ALPHA,
            interval_method=gm_method,
            zero_division=np.nan,
        ).reindex(frame.index)
        for name in METRICS:
            col = f"{name}_smoothed"
            assert table.attrs["interval_method"][col] == method
            for got, ours in zip(
                (table[f"{col}_low"], table[f"{col}_high"]), mine[(method, name)]
            ):
                got = got.to_numpy(float)
                assert np.array_equal(np.isnan(got), np.isnan(ours)), (method, name)
                ok = ~np.isnan(got)
                worst = max(worst, float(np.max(np.abs(got[ok] - ours[ok]), initial=0)))
    assert worst <= 1e-12, worst
    return worst


#: Interval estimators: (name, smoother key or None for raw, method).
INTERVALS = (
    ("raw", None, "clopper-pearson"),
    ("cps_auto", "cps_auto", "posterior"),
    ("is_hull", "intersectional", "posterior-hull"),
    ("is_post", "intersectional", "posterior"),
    ("isl_hull", "is_lower", "posterior-hull"),
    ("isl_post", "is_lower", "posterior"),
)
CHECKED = []


def run_scenario(design, sizes, n_rep, seed, with_reg=True, n_check=2):
    """Per group and metric: squared errors, coverage and width indicators."""
    rng = np.random.default_rng(seed)
    p, attrs = design["p"], design["attrs"]
    G = len(p)
    sizes = np.broadcast_to(np.asarray(sizes, float), (G,))
    counts = rng.multinomial(sizes.astype(np.int64), p, size=(n_rep, G)).astype(float)
    reg = StructuredRegression(attrs, seed=seed) if with_reg else None
    est = ["raw", "cps10", "cps_auto", "intersectional", "is_lower", "herlihy"]
    se = {m: {e: np.full((n_rep, G), np.nan) for e in est} for m in METRICS}
    cover = {m: {} for m in METRICS}
    width = {m: {} for m in METRICS}
    reg_low = {m: np.full((n_rep, G), np.nan) for m in METRICS}
    reg_high = {m: np.full((n_rep, G), np.nan) for m in METRICS}
    # pseudo-counts per replicate: the Cross-Prior one, and each metric's own
    # for the intersectional smoothers (``metric_pseudo_counts``)
    priors = {"cps_auto": np.empty((n_rep, G, 4))}
    for key in ("intersectional", "is_lower", "intersectional_ci", "is_lower_ci"):
        priors[key] = {name: np.empty((n_rep, G, 4)) for name in METRICS}
    lams = np.empty(n_rep)
    lams_low = np.empty(n_rep)
    true_metric = {name: metric(p, name)[0] for name in METRICS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(n_rep):
            c = counts[r]
            frame = _labelled(c, attrs)
            rest = c.sum(axis=0) - c
            cps10 = CrossPriorSmoothing(10).transform(c, rest)
            try:
                lam_auto = fit_lam(c, rest)[0]
            except ValueError:
                lam_auto = 0.0
            cpsa = CrossPriorSmoothing(lam_auto).transform(c, rest)
            priors["cps_auto"][r] = lam_auto * rest / rest.sum(axis=1, keepdims=True)
            # fitted as group_metrics fits it: on the labelled counts
            smoother = IntersectionalSmoothing().fit(frame)
            lams[r] = smoother.lam_
            lower = IntersectionalSmoothing(lam="auto-lower").fit(frame)
            lams_low[r] = lower.lam_
            for name in METRICS:
                for key, fitted in (("intersectional", smoother), ("is_lower", lower)):
                    priors[key][name][r] = fitted.metric_pseudo_counts(
                        METRIC_OBJECTS[name]
                    )
                    priors[f"{key}_ci"][name][r] = fitted.interval_pseudo_counts(
                        METRIC_OBJECTS[name]
                    )
            for name in METRICS:
                _raw, k, m = metric(c, name)
                defined = m > 0
                truth = true_metric[name]
                for e, cc in (
                    ("raw", c),
                    ("cps10", cps10),
                    ("cps_auto", cpsa),
                    ("intersectional", c + priors["intersectional"][name][r]),
                    ("is_lower", c + priors["is_lower"][name][r]),
                ):
                    v = metric(cc, name)[0]
                    se[name][e][r] = np.where(defined, (v - truth) ** 2, np.nan)
                if reg is not None:
                    fit, low, high = reg.fit(k, m)
                    se[name]["herlihy"][r] = np.where(
                        defined, (fit - truth) ** 2, np.nan
                    )
                    reg_low[name][r], reg_high[name][r] = low, high
            if r < n_check:
                for key, lam in (
                    ("intersectional", "auto"),
                    ("is_lower", "auto-lower"),
                ):
                    mine = {
                        (method, name): intervals(
                            name,
                            c,
                            priors[f"{key}_ci"][name][r],
                            method,
                            priors[key][name][r],
                        )
                        for method in ("posterior-hull", "posterior")
                        for name in METRICS
                    }
                    CHECKED.append(check_against_group_metrics(c, attrs, lam, mine))
    for name in METRICS:
        truth = true_metric[name]
        defined = metric(counts, name)[2] > 0
        los = {}
        for e, key, method in INTERVALS:
            if key in ("intersectional", "is_lower"):
                low, high = intervals(
                    name,
                    counts,
                    priors[f"{key}_ci"][name],
                    method,
                    priors[key][name],
                )
            else:
                prior = None if key is None else priors[key]
                low, high = intervals(name, counts, prior, method)
            los[e] = (low, high)
        if reg is not None:
            los["herlihy"] = (reg_low[name], reg_high[name])
        for e, (low, high) in los.items():
            # coverage over every draw with an interval (a smoothed value has
            # one where the raw value is undefined); width over the draws in
            # which the raw value is defined, the same for every estimator
            has = ~np.isnan(low)
            cover[name][e] = np.where(has, (low <= truth) & (truth <= high), np.nan)
            width[name][e] = np.where(defined & has, high - low, np.nan)
    return se, cover, width, lams, lams_low, sizes


def run_test_scenario(attrs, q, sizes, n_rep, seed, flagged=None):
    """Interaction test: per-test rejection rates and family-wise rates."""
    rng = np.random.default_rng(seed)
    G = len(q)
    sizes = np.broadcast_to(np.asarray(sizes, float), (G,))
    counts = rng.multinomial(sizes.astype(np.int64), q, size=(n_rep, G)).astype(float)
    out = {}
    for name in METRICS:
        out[name] = {
            "per_test": [],
            "fwer": [],
            "per_test_flagged": [],
            "holm_flagged": [],
        }
    for r in range(n_rep):
        sm = IntersectionalSmoothing().fit(counts[r], attributes=attrs)
        for name in METRICS:
            t = sm.interaction_test(name, alpha=ALPHA, correction="holm")
            pv = t["pvalue"].to_numpy()
            mask = (
                np.ones(G, bool) if flagged is None else ~np.isin(np.arange(G), flagged)
            )
            ok = ~np.isnan(pv) & mask
            out[name]["per_test"].append(
                (pv[ok] <= ALPHA).mean() if ok.any() else np.nan
            )
            out[name]["fwer"].append(bool(t["reject"].to_numpy()[mask].any()))
            if flagged is not None:
                out[name]["per_test_flagged"].append(
                    np.nanmean(np.where(np.isnan(pv[flagged]), 0, pv[flagged] <= ALPHA))
                )
                out[name]["holm_flagged"].append(t["reject"].to_numpy()[flagged].mean())
    return {
        name: {k: float(np.nanmean(v)) if len(v) else np.nan for k, v in d.items()}
        for name, d in out.items()
    }


# --------------------------------------------------------------------- tables
def mse_rows(design_name, scenario, se, sizes, bands):
    rows = []
    for label, mask in bands:
        if not mask.any():
            continue
        row = {
            "design": design_name,
            "sizes": scenario,
            "band": label,
            "groups": int(mask.sum()),
        }
        for name in METRICS:
            vals = {
                e: np.nanmean(np.nanmean(se[name][e][:, mask], axis=0))
                for e in se[name]
            }
            for e, v in vals.items():
                row[f"{name}_{e}"] = v
            best = min(vals["raw"], vals["cps_auto"])
            row[f"{name}_IS/best"] = vals["intersectional"] / best
            row[f"{name}_IS/raw"] = vals["intersectional"] / vals["raw"]
            row[f"{name}_IS/cps"] = vals["intersectional"] / vals["cps_auto"]
            row[f"{name}_ISL/best"] = vals["is_lower"] / best
            row[f"{name}_ISL/raw"] = vals["is_lower"] / vals["raw"]
        rows.append(row)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few replicates (~1 min)")
    parser.add_argument("--n-replicates", type=int, default=None)
    args = parser.parse_args(argv)
    n_rep = args.n_replicates or (25 if args.quick else 400)
    n_rep_test = max(n_rep // 2, 10) if args.quick else n_rep
    start = time.perf_counter()
    pd.set_option("display.width", 250, "display.max_columns", 60)
    all_designs = designs()
    for name, d in all_designs.items():
        print(
            f"{name}: {len(d['p'])} intersections, sizes {int(d['sizes'].min())}-"
            f"{int(d['sizes'].max())}, total {int(d['sizes'].sum())}"
        )

    mse, coverage, lam_rows = [], [], []
    for di, (name, d) in enumerate(all_designs.items()):
        scenarios = [("real", d["sizes"])] + [(f"n={s}", s) for s in SIZES]
        for si, (scen, sizes) in enumerate(scenarios):
            se, cover, width, lams, lams_low, sz = run_scenario(
                d, sizes, n_rep, seed=1000 * di + si
            )
            lam_rows.append(
                {
                    "design": name,
                    "sizes": scen,
                    "lam_median": np.median(lams),
                    "auto-lower lam_median": np.median(lams_low),
                }
            )
            if scen == "real":
                bands = [
                    ("n<=30", sz <= 30),
                    ("30<n<150", (sz > 30) & (sz < 150)),
                    ("n>=150", sz >= 150),
                ]
            else:
                bands = [(scen, np.ones(len(sz), bool))]
            if d["interacting"] is not None:
                # the groups whose truth departs from the additive structure
                inter = np.isin(np.arange(len(sz)), d["interacting"])
                bands.append((f"interacting ({scen})", inter))
            mse.extend(mse_rows(name, scen, se, sz, bands))
            for label, mask in bands:
                row = {"design": name, "sizes": scen, "band": label}
                for m in METRICS:
                    for e in cover[m]:
                        per_group = np.nanmean(cover[m][e][:, mask], axis=0)
                        row[f"{m}_{e}"] = float(np.nanmean(per_group))
                        row[f"{m}_{e}_worst"] = float(np.nanmin(per_group))
                        row[f"{m}_{e}_width"] = float(
                            np.nanmean(np.nanmean(width[m][e][:, mask], axis=0))
                        )
                coverage.append(row)
        print(f"  {name} done ({time.perf_counter() - start:.0f} s)")
    print(
        f"intervals checked against group_metrics on {len(CHECKED)} replicates: "
        f"largest difference {max(CHECKED):.1e}"
    )

    mse = pd.DataFrame(mse)
    cov = pd.DataFrame(coverage)

    print(
        "\n## MSE (x 1e3), averaged over the intersections of the band; "
        "IS/best = IntersectionalSmoothing / min(raw, CPS auto)"
    )
    for m in METRICS:
        cols = ["design", "sizes", "band", "groups"] + [
            f"{m}_{e}"
            for e in (
                "raw",
                "cps10",
                "cps_auto",
                "intersectional",
                "is_lower",
                "herlihy",
            )
        ]
        t = mse[cols].copy()
        for c in cols[4:]:
            t[c] = (t[c] * 1e3).round(2)
        t.columns = [*cols[:4], "raw", "CPS10", "CPSauto", "IS", "IS-low", "HTCD"]
        for key in ("IS/best", "IS/raw", "ISL/best", "ISL/raw"):
            t[key] = mse[f"{m}_{key}"].round(2)
        print(f"\n### {m.upper()}")
        print(t.to_string(index=False))

    labels = {
        "is_hull": "IS hull",
        "is_post": "IS post",
        "isl_hull": "ISL hull",
        "isl_post": "ISL post",
        "cps_auto": "CPSauto post",
        "herlihy": "HTCD",
    }
    print(
        "\n## Coverage of 95 % intervals from group_metrics(..., smoothing=..., "
        "confidence_level=0.95): 'hull' = the default interval_method "
        "('posterior-hull'), 'post' = interval_method='posterior'; IS = "
        "IntersectionalSmoothing(), ISL = (lam='auto-lower'); mean over the "
        "intersections of the band (worst intersection for IS hull and IS post)"
    )
    for m in METRICS:
        cols = ["design", "sizes", "band"] + [f"{m}_{e}" for e in labels]
        cols += [f"{m}_is_hull_worst", f"{m}_is_post_worst"]
        t = cov[cols].copy()
        t.columns = [
            "design",
            "sizes",
            "band",
            *labels.values(),
            "IS hull worst",
            "IS post worst",
        ]
        print(f"\n### {m.upper()}")
        print(t.round(3).to_string(index=False))

    print(
        "\n## Mean width of the 95 % intervals (over the draws in which the raw "
        "value is defined); raw = the raw value's 'auto' (Clopper-Pearson) interval"
    )
    wlabels = {"raw": "raw CP", **labels}
    for m in METRICS:
        cols = ["design", "sizes", "band"] + [f"{m}_{e}_width" for e in wlabels]
        t = cov[cols].copy()
        t.columns = ["design", "sizes", "band", *wlabels.values()]
        print(f"\n### {m.upper()}")
        print(t.round(3).to_string(index=False))

    print("\n## Summary per design (worst case over TPR, FPR, PPV and scenarios)")
    real_small = mse["band"] == "n<=30"
    small = mse["band"].isin(["n=5", "n=10", "n=20", "n=30"])
    interacting = mse["band"].str.startswith("interacting")
    large = mse["band"].isin(["n>=150", "n=150"])
    cov_small = cov["band"].isin(["n=5", "n=10", "n=20"])
    rows = []
    for name in all_designs:
        row = {"design": name}
        for tag, key, hull, post in (
            ("IS", "IS", "is_hull", "is_post"),
            ("IS-low", "ISL", "isl_hull", "isl_post"),
        ):
            for m in METRICS:
                sel = mse["design"] == name
                row[f"{tag} {m} MSE/best real n<=30"] = mse.loc[
                    sel & real_small, f"{m}_{key}/best"
                ].max()
                row[f"{tag} {m} max MSE/best all n=5-30"] = mse.loc[
                    sel & small, f"{m}_{key}/best"
                ].max()
                if tag == "IS" and (sel & interacting).any():
                    row[f"{tag} {m} max MSE/CPSauto interacting"] = mse.loc[
                        sel & interacting, f"{m}_IS/cps"
                    ].max()
                row[f"{tag} {m} max MSE/raw n>=150"] = mse.loc[
                    sel & large, f"{m}_{key}/raw"
                ].max()
                at = (cov["design"] == name) & cov_small
                row[f"{tag} {m} min cover hull n=5-20"] = cov.loc[
                    at, f"{m}_{hull}"
                ].min()
                row[f"{tag} {m} min cover post n=5-20"] = cov.loc[
                    at, f"{m}_{post}"
                ].min()
        rows.append(row)
    summary = pd.DataFrame(rows).set_index("design").T
    print(summary.round(3).to_string())
    for tag, hull in (("auto", "is_hull"), ("auto-lower", "isl_hull")):
        worst = min(cov.loc[cov_small, f"{m}_{hull}"].min() for m in METRICS)
        print(
            f"lam={tag!r}: smallest mean coverage of the default interval at "
            f"n = 5, 10, 20 over designs and metrics: {worst:.3f} "
            f"({'meets' if worst >= 0.93 else 'misses'} 0.93)"
        )

    print("\n## Median lam_ of IntersectionalSmoothing")
    print(pd.DataFrame(lam_rows).round(1).to_string(index=False))

    # ---------------------------------------------------------- interaction test
    print(
        f"\n## Interaction test, alpha = {ALPHA}: size under the additive truth "
        "(per test; family-wise with Holm over the groups)"
    )
    rows = []
    for di, (name, d) in enumerate(all_designs.items()):
        q = additive_truth(d).prior_mean_
        for si, (scen, sizes) in enumerate(
            [("real", d["sizes"])] + [(f"n={s}", s) for s in SIZES]
        ):
            res = run_test_scenario(
                d["attrs"], q, sizes, n_rep_test, seed=77 + 100 * di + si
            )
            row = {"design": name, "sizes": scen}
            for m in METRICS:
                row[f"{m} per-test"] = res[m]["per_test"]
                row[f"{m} FWER"] = res[m]["fwer"]
            rows.append(row)
    size_table = pd.DataFrame(rows)
    print(size_table.round(4).to_string(index=False))

    print(
        "\n## Power on the synthetic design's 4 interacting groups "
        "(per test unadjusted; Holm-adjusted; FWER over the 32 others)"
    )
    d = all_designs["synthetic"]
    rows = []
    for si, (scen, sizes) in enumerate(
        [("real", d["sizes"])] + [(f"n={s}", s) for s in SIZES]
    ):
        res = run_test_scenario(
            d["attrs"],
            d["p"],
            sizes,
            n_rep_test,
            seed=999 + si,
            flagged=d["interacting"],
        )
        row = {"sizes": scen}
        for m in METRICS:
            row[f"{m} power"] = res[m]["per_test_flagged"]
            row[f"{m} power Holm"] = res[m]["holm_flagged"]
            row[f"{m} FWER others"] = res[m]["fwer"]
        rows.append(row)
    print(pd.DataFrame(rows).round(3).to_string(index=False))

    # --------------------------------------------------------------------- speed
    print("\n## Speed: 1,000 intersections of 3 attributes (10 x 10 x 10)")
    rng = np.random.default_rng(5)
    grid = pd.MultiIndex.from_product(
        [
            [f"a{i}" for i in range(10)],
            [f"b{i}" for i in range(10)],
            [f"c{i}" for i in range(10)],
        ],
        names=["a", "b", "c"],
    ).to_frame(index=False)
    sizes = 1 + rng.poisson(40, len(grid))
    logit = rng.normal(0, 0.4, (3, 3, 10))
    codes = [pd.factorize(grid[k])[0] for k in "abc"]
    lp = [sum(logit[j, i][codes[i]] for i in range(3)) for j in range(3)]
    pi, t, f = (1 / (1 + np.exp(-(x + b))) for x, b in zip(lp, (-0.5, 0.8, -1.2)))
    q = np.stack([pi * t, pi * (1 - t), (1 - pi) * f, (1 - pi) * (1 - f)], 1)
    counts = rng.multinomial(sizes, q).astype(float)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        sm = IntersectionalSmoothing().fit(counts, attributes=grid)
        sm.transform(counts)
        sm.interaction_test("tpr")
        times.append(time.perf_counter() - t0)
    frame = _labelled(counts, grid)
    gm_times = []
    for _ in range(5):
        t0 = time.perf_counter()
        group_metrics(
            counts=frame,
            metrics=list(METRICS),
            smoothing=IntersectionalSmoothing(),
            confidence_level=0.95,
        )
        gm_times.append(time.perf_counter() - t0)
    print(
        f"group_metrics(counts, 3 metrics, smoothing=IntersectionalSmoothing(), "
        f"confidence_level=0.95): best {min(gm_times):.3f} s, median "
        f"{np.median(gm_times):.3f} s"
    )
    print(
        f"fit + transform + test: best {min(times):.3f} s, "
        f"median {np.median(times):.3f} s (lam_ = {sm.lam_:.1f})"
    )
    print(
        f"\ntotal {time.perf_counter() - start:.0f} s, {n_rep} replicates "
        f"({n_rep_test} for the test)"
    )


if __name__ == "__main__":
    main()
