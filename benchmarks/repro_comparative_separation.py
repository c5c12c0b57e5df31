"""Reproduction of the comparative-separation study's real-data tables.

Usage (from the repository root)::

    python benchmarks/repro_comparative_separation.py [--n-repeats 1000]
        [--variant-repeats 200] [--n-pair-draws 1000] [--n-jobs 2]
        [--data-home DIR] [--json PATH] [--only table5|table8]

The data files are read from the package's data folder: ``--data-home``, else the
environment variable ``SMALLFAIR_DATA``, else ``~/smallfair_data`` (the rule of
:func:`sklearn_smallfair.datasets.fetch_compas`); nothing is downloaded.

**Table V** (detection rates of separation and comparative separation on COMPAS
and German credit, with no treatment, FairBalance and Reweighing). The published
protocol, as in the study's code (``real/src/exp.py``, ``load_data.py``,
``classification.py`` of https://github.com/hil-se/Comparative_Separation):

* cohort: COMPAS, all 7,214 rows of ``compas-scores-two-years.csv``, features
  sex, age, age_cat, race, juv_fel_count, juv_misd_count, juv_other_count,
  priors_count, c_charge_degree, c_charge_desc; ``race`` = Caucasian (1) against
  all others (0), ``sex`` = male (1); label ``two_year_recid == 0``. German: all
  1,000 rows, ``age`` replaced by ``age > 25`` and the personal status by sex
  (male A91, A93, A94), label good credit. The two attributes are features.
* split: 50/50, stratified on every (sex, race or age, label) cell, the test half
  of a cell being ``floor(size / 2)`` of its rows drawn without replacement;
* model: one-hot encoding of the text columns and standardization of the numeric
  ones (fitted on the training half), ``LogisticRegression(max_iter=100000)``,
  the treatment's weights computed on the training half with both attributes
  together (intersectional groups);
* tests, on the test half, for each attribute: the separation Wald test
  (``separation_test(method="wald")``) and the comparative Wald test on ``2 n``
  pairs drawn with replacement, tied labels dropped, predicted ties incorrect and
  independent-pairs variances (``comparative_separation_test(pairs=...,
  variance="independent")``); a violation when the smaller p-value is below
  0.05;
* 1,000 repeats.

The package's recommended variant is run on the same splits and models: the
separation test with ``method="auto"`` (exact test for small expected counts,
score test otherwise) and the comparative test on all pairs, stratified by the
label pair, with the U-statistic variance under separation (the defaults; the
earlier all-pairs default is ``stratify=False, variance="u_statistic"``). Both
keep their level (see the user guide's calibration page). The published
procedure's numbers (given pairs, ``variance="independent"``) do not depend on
these options.

To explain the distance between the published rates and those of the package's
earlier gallery example, variants change one element of the published protocol at
a time (``--variant-repeats`` repeats each): the study's COMPAS features on
the package's cohort, the package's loader cohort and features
(:func:`~sklearn_smallfair.datasets.fetch_compas` with
``races=("African-American", "Caucasian")``, ``target="no_recid"`` and
``sensitive_in_data=True``: 5,278 defendants, 9 numeric features;
:func:`~sklearn_smallfair.datasets.fetch_german_credit`, numeric age and the
one-hot personal status), and the weights computed for one attribute at a time.

Each repeat also records the study's equal-opportunity difference ``TPR_1 -
TPR_0`` and average-odds difference ``((TPR_1 - TPR_0) + (FPR_1 - FPR_0)) / 2``
of the test predictions (group 1 minus group 0, as in the study's
``Metrics.EOD`` and ``Metrics.AOD``): minus
:func:`~sklearn_smallfair.metrics.signed_equal_opportunity_difference` and
:func:`~sklearn_smallfair.metrics.average_odds_difference` with
``privileged_group=1``.

**Table VIII** (Jira story points, ``is_internal``). The published model, a
sentence embedding (all-MiniLM-L6-v2) followed by a linear layer trained with
Keras, cannot be obtained here (its weights are not on PyPI): the model is a
``TfidfVectorizer`` + ``Ridge`` fitted on the training and validation items,
without and with FairReweighing weights
(:func:`~sklearn_smallfair.preprocessing.fair_reweighing_weights`). On the 65
test items: MAE, Pearson and Spearman correlations, ``I_sep``
(:func:`~sklearn_smallfair.metrics.isep_score`) and the published comparative
detection rate over ``--n-pair-draws`` draws of ``n`` pairs (``regression.py``
draws ``n`` pairs, not ``2 n``), beside the all-pairs test and its permutation
test. The ridge fit is deterministic, so the published 10 trainings per
treatment collapse to one.

Results are printed as tables and written as JSON (default
``benchmarks/results/repro_comparative_separation.json``, written atomically).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

try:
    from . import _common
except ImportError:
    import _common

_common.ensure_package_importable()

from joblib import Parallel, delayed  # noqa: E402
from scipy import sparse  # noqa: E402
from scipy.stats import norm, pearsonr, spearmanr  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402
from sklearn.linear_model import LogisticRegression, Ridge  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sklearn_smallfair._output import write_atomic  # noqa: E402
from sklearn_smallfair._random import resolve_seed  # noqa: E402
from sklearn_smallfair.datasets import (  # noqa: E402
    fetch_compas,
    fetch_german_credit,
    get_data_home,
)
from sklearn_smallfair.metrics import (  # noqa: E402
    average_odds_difference,
    isep_score,
    signed_equal_opportunity_difference,
)
from sklearn_smallfair.preprocessing import (  # noqa: E402
    fair_reweighing_weights,
    fairbalance_weights,
    reweighing_weights,
)
from sklearn_smallfair.stats import (  # noqa: E402
    comparative_separation_test,
    make_comparative_pairs,
    separation_test,
)

NAME = "repro_comparative_separation"
DEFAULT_JSON = _common.BENCH_DIR / "results" / f"{NAME}.json"
ALPHA = 0.05
TREATMENTS = ("none", "fairbalance", "reweighing")

#: The published Table V: detection rates over 1,000 repeats (the study's
#: ``real/result/classification.csv``), keyed by (dataset, attribute, treatment)
#: and giving (separation, comparative separation).
PUBLISHED_TABLE_V = {
    ("compas", "sex", "none"): (1.0, 1.0),
    ("compas", "race", "none"): (1.0, 1.0),
    ("german", "age", "none"): (0.844, 0.676),
    ("german", "sex", "none"): (0.523, 0.613),
    ("compas", "sex", "fairbalance"): (0.245, 0.312),
    ("compas", "race", "fairbalance"): (0.37, 0.411),
    ("german", "age", "fairbalance"): (0.241, 0.323),
    ("german", "sex", "fairbalance"): (0.18, 0.313),
    ("compas", "sex", "reweighing"): (0.286, 0.38),
    ("compas", "race", "reweighing"): (0.642, 0.455),
    ("german", "age", "reweighing"): (0.223, 0.325),
    ("german", "sex", "reweighing"): (0.135, 0.35),
}

#: The published Table VIII: means of 10 trainings (the study's
#: ``real/result/regression.csv``): MAE, Pearson, Spearman, I_sep, comparative
#: separation detection rate.
PUBLISHED_TABLE_VIII = {
    "none": (1.548242248, 0.472675224, 0.436004965, 0.010695325, 0.3337),
    "fairreweighing": (1.565794487, 0.461648493, 0.420454018, 0.006272392, 0.3129),
}


# -------------------------------------------------------------------------------------
# data
# -------------------------------------------------------------------------------------
def data_home(arg=None):
    """The data folder: ``arg``, else ``$SMALLFAIR_DATA``, else ``~/smallfair_data``
    (:func:`sklearn_smallfair.datasets.get_data_home`)."""
    return get_data_home(arg)


_COMPAS_FEATURES = [
    "sex",
    "age",
    "age_cat",
    "race",
    "juv_fel_count",
    "juv_misd_count",
    "juv_other_count",
    "priors_count",
    "c_charge_degree",
    "c_charge_desc",
]
_GERMAN_COLUMNS = [
    "status",
    "month",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings",
    "employment",
    "investment_as_income_percentage",
    "sex",
    "other_debtors",
    "residence_since",
    "property",
    "age",
    "installment_plans",
    "housing",
    "number_of_credits",
    "skill_level",
    "people_liable_for",
    "telephone",
    "foreign_worker",
    "credit",
]


def published_compas(home):
    """``(X, y, A)`` of the published COMPAS cohort (7,214 rows).

    The file is located and checksum-verified by :func:`fetch_compas`
    (``download_if_missing=False``); its rows are then read unfiltered.
    """
    path = fetch_compas(home, download_if_missing=False).filename
    raw = pd.read_csv(path)
    X = raw[_COMPAS_FEATURES].copy()
    X["sex"] = (X["sex"] == "Male").astype(np.int64)
    X["race"] = (X["race"] == "Caucasian").astype(np.int64)
    # a missing charge description is its own category, as a one-hot encoder of
    # an object column treats NaN
    X["c_charge_desc"] = X["c_charge_desc"].fillna("(missing)")
    y = (raw["two_year_recid"].to_numpy() == 0).astype(np.int64)
    return X, y, X[["sex", "race"]].copy()


def published_compas_on_loader_cohort(home):
    """The published COMPAS features on the rows of :func:`fetch_compas`: the
    screening within 30 days, a known recidivism status, no ordinary traffic
    offence, a score, African-American and Caucasian defendants (5,278 rows)."""
    path = fetch_compas(home, download_if_missing=False).filename
    raw = pd.read_csv(path)
    keep = (
        raw["days_b_screening_arrest"].between(-30, 30)
        & (raw["is_recid"] != -1)
        & (raw["c_charge_degree"] != "O")
        & raw["score_text"].notna()
        & (raw["score_text"] != "N/A")
        & raw["race"].isin(["African-American", "Caucasian"])
    ).to_numpy()
    X, y, A = published_compas(home)
    return (
        X[keep].reset_index(drop=True),
        y[keep],
        A[keep].reset_index(drop=True),
    )


def published_german(home):
    """``(X, y, A)`` of German credit coded as in the study (binary age and sex)."""
    path = fetch_german_credit(home, download_if_missing=False).filename
    raw = pd.read_csv(path, sep=r"\s+", header=None, names=_GERMAN_COLUMNS)
    y = (raw.pop("credit").to_numpy() == 1).astype(np.int64)
    X = raw
    X["age"] = (X["age"] > 25).astype(np.int64)
    X["sex"] = X["sex"].isin(["A91", "A93", "A94"]).astype(np.int64)
    return X, y, X[["age", "sex"]].copy()


def loader_compas(home):
    """``(X, y, A)`` of the package's loader: 5,278 rows, 9 numeric features
    (sex and race among them, as in the study)."""
    bunch = fetch_compas(
        home,
        download_if_missing=False,
        races=("African-American", "Caucasian"),
        target="no_recid",
        sensitive_in_data=True,
    )
    A = bunch.data[["sex", "race"]].astype(np.int64)
    return bunch.data, bunch.target.to_numpy(), A


def loader_german(home):
    """``(X, y, A)`` of the package's loader, attribute ``age_gt_25`` as ``age``."""
    bunch = fetch_german_credit(home, download_if_missing=False)
    A = bunch.sensitive.rename(columns={"age_gt_25": "age"})[["age", "sex"]]
    return bunch.data, bunch.target.to_numpy(), A


# -------------------------------------------------------------------------------------
# the published protocol
# -------------------------------------------------------------------------------------
def published_split(A, y, rng):
    """Boolean test mask: ``floor(size / 2)`` random rows of every (A..., y) cell."""
    keys = np.column_stack([A.to_numpy(), y])
    _, cell = np.unique(keys, axis=0, return_inverse=True)
    cell = cell.ravel()
    order = np.lexsort((rng.random(cell.shape[0]), cell))
    sizes = np.bincount(cell)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0]) - starts[cell[order]]
    return rank < sizes[cell] // 2


class PublishedDesign:
    """The published features: one-hot text columns, standardized numeric ones.

    The published code fits ``OneHotEncoder(handle_unknown="ignore")`` on the
    training half. Here the encoder is fitted once on all rows: a category absent
    from the training half then has a column of zeros there, whose coefficient
    the L2-penalized regression leaves at exactly 0, so the predictions are those
    of the published pipeline (and the text is encoded once, not 1,000 times).
    The scaler of the numeric columns is fitted on each training half.
    """

    def __init__(self, X):
        text = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        self.numeric = X.drop(columns=text).to_numpy(dtype=np.float64)
        if text:
            encoder = OneHotEncoder(handle_unknown="ignore").fit(X[text])
            self.onehot = encoder.transform(X[text]).tocsr()
        else:
            self.onehot = None

    def split(self, train):
        scaler = StandardScaler().fit(self.numeric[train])
        scaled = scaler.transform(self.numeric)
        if self.onehot is None:
            return scaled[train], scaled[~train]
        full = sparse.hstack([self.onehot, sparse.csr_matrix(scaled)]).tocsr()
        return full[train], full[~train]


def published_model():
    """The published classifier."""
    return LogisticRegression(max_iter=100000)


def treatment_weights(treatment, y, A):
    if treatment == "none":
        return None
    if treatment == "fairbalance":
        return fairbalance_weights(y, sensitive_features=A)
    return reweighing_weights(y, sensitive_features=A)


def _p(result, which):
    """A result's p-value, ``p_value_<which>``."""
    return getattr(result, f"p_value_{which}")


def _wald_p(x1, n1, x0, n0):
    """Two-sided p-values of the unpooled Wald test of ``x1 / n1 = x0 / n0``
    (NaN where both variances are 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        m1, m0 = x1 / n1, x0 / n0
        z = (m1 - m0) / np.sqrt(m1 * (1 - m1) / n1 + m0 * (1 - m0) / n0)
    return 2 * norm.sf(np.abs(z))


def published_tests(y, pred, a, pairs):
    """The published separation and comparative p-values and the study's
    EOD and AOD, from counts (binary labels, predictions and groups).

    The same numbers as ``separation_test(method="wald")``,
    ``comparative_separation_test(pairs=pairs, variance="independent")``,
    ``-signed_equal_opportunity_difference`` and ``-average_odds_difference`` (checked
    against them on the first repeats of every run), without their per-call
    validation and result tables, which would dominate 1,000 repeats.
    """
    c = np.bincount(a * 4 + y * 2 + pred, minlength=8).reshape(2, 2, 2)
    pos, neg = c[:, 1].sum(axis=1), c[:, 0].sum(axis=1)
    p_tpr = _wald_p(c[1, 1, 1], pos[1], c[0, 1, 1], pos[0])
    p_fpr = _wald_p(c[1, 0, 1], neg[1], c[0, 0, 1], neg[0])
    tpr, fpr = c[:, 1, 1] / pos, c[:, 0, 1] / neg
    # pairs: orient each from its truly higher to its truly lower item
    i, j = pairs[:, 0], pairs[:, 1]
    hi = np.where(y[i] > y[j], i, j)
    lo = np.where(y[i] > y[j], j, i)
    correct = pred[hi] > pred[lo]
    cell = a[hi] * 2 + a[lo]
    n_ab = np.bincount(cell, minlength=4)
    k_ab = np.bincount(cell, weights=correct, minlength=4)
    p_cross = _wald_p(k_ab[2], n_ab[2], k_ab[1], n_ab[1])  # (1, 0) vs (0, 1)
    p_within = _wald_p(k_ab[3], n_ab[3], k_ab[0], n_ab[0])  # (1, 1) vs (0, 0)
    return {
        "p_tpr": p_tpr,
        "p_fpr": p_fpr,
        "p_cross": p_cross,
        "p_within": p_within,
        "eod": tpr[1] - tpr[0],
        "aod": ((tpr[1] - tpr[0]) + (fpr[1] - fpr[0])) / 2,
    }


def check_published_tests(y, pred, a, pairs):
    """Raise unless :func:`published_tests` equals the package's functions."""
    ours = published_tests(y, pred, a, pairs)
    sep = separation_test(y, pred, sensitive_features=a, method="wald")
    comp = comparative_separation_test(
        y, pred, sensitive_features=a, pairs=pairs, variance="independent"
    )
    theirs = {
        "p_tpr": _p(sep, "tpr"),
        "p_fpr": _p(sep, "fpr"),
        "p_cross": _p(comp, "cross"),
        "p_within": _p(comp, "within"),
        "eod": -signed_equal_opportunity_difference(
            y, pred, sensitive_features=a, privileged_group=1
        ),
        "aod": -average_odds_difference(
            y, pred, sensitive_features=a, privileged_group=1
        ),
    }
    for key, value in theirs.items():
        _common.check(
            np.isclose(ours[key], value, rtol=1e-9, atol=1e-12, equal_nan=True),
            f"{key}: counts give {ours[key]!r}, the package {value!r}",
        )


def _verdicts(y, pred, a, pairs, *, calibrated, check):
    """The published verdicts (and, with ``calibrated``, the package's)."""
    if check:
        check_published_tests(y, pred, a, pairs)
    t = published_tests(y, pred, a, pairs)
    row = {
        # the published rule: the smaller p-value below alpha
        "sep_published": bool(np.fmin(t["p_tpr"], t["p_fpr"]) < ALPHA),
        "comp_published": bool(np.fmin(t["p_cross"], t["p_within"]) < ALPHA),
        "sep_calibrated": np.nan,
        "comp_calibrated": np.nan,
        "eod": t["eod"],
        "aod": t["aod"],
        "accuracy": float(np.mean(pred == y)),
    }
    if calibrated:
        kw = {"sensitive_features": a}
        row["sep_calibrated"] = bool(separation_test(y, pred, **kw).violated)
        row["comp_calibrated"] = bool(
            comparative_separation_test(y, pred, **kw).violated
        )
    return row


def one_repeat(
    design,
    y,
    A,
    seed,
    *,
    treatments=TREATMENTS,
    joint_weights=True,
    calibrated=True,
    check=False,
):
    """All rows of one split: one per (treatment, attribute)."""
    rng = np.random.default_rng(seed)
    test = published_split(A, y, rng)
    train = ~test
    Xtr, Xte = design.split(train)
    ytr, yte = y[train], y[test]
    Atr, Ate = A[train], A[test]
    pairs = make_comparative_pairs(yte, n_pairs=2 * yte.shape[0], random_state=rng)
    rows = []
    for treatment in treatments:
        if joint_weights or treatment == "none":
            w = treatment_weights(treatment, ytr, Atr)
            pred = published_model().fit(Xtr, ytr, sample_weight=w).predict(Xte)
            preds = {attr: pred for attr in A.columns}
        else:
            preds = {}
            for attr in A.columns:
                w = treatment_weights(treatment, ytr, Atr[attr])
                model = published_model().fit(Xtr, ytr, sample_weight=w)
                preds[attr] = model.predict(Xte)
        for attr in A.columns:
            a = Ate[attr].to_numpy().astype(np.int64)
            row = _verdicts(
                yte,
                preds[attr].astype(np.int64),
                a,
                pairs,
                calibrated=calibrated,
                check=check,
            )
            rows.append({"treatment": treatment, "attribute": attr, **row})
    return rows


def run_protocol(
    X,
    y,
    A,
    *,
    n_repeats,
    seed,
    n_jobs,
    n_calibrated=0,
    n_checked=20,
    chunk=100,
    on_chunk=None,
    **kwargs,
):
    """Rows of ``n_repeats`` repeats; the same seeds whatever ``n_jobs``.

    The package's calibrated tests run on the first ``n_calibrated`` repeats, and
    the counts-based published tests are checked against the package's functions
    on the first ``n_checked``. The repeats run in chunks of ``chunk``;
    ``on_chunk(frame)`` is called with the rows so far after each chunk (the
    script writes its results there, so a long run interrupted keeps what it
    finished).
    """
    seeds = resolve_seed(seed).spawn(n_repeats)
    design = PublishedDesign(X)
    frames = []
    with Parallel(n_jobs=n_jobs) as parallel:
        for start in range(0, n_repeats, chunk):
            stop = min(start + chunk, n_repeats)
            chunks = parallel(
                delayed(one_repeat)(
                    design,
                    y,
                    A,
                    seeds[i],
                    calibrated=i < n_calibrated,
                    check=i < n_checked,
                    **kwargs,
                )
                for i in range(start, stop)
            )
            frames.append(
                pd.DataFrame(
                    [
                        dict(row, repeat=start + k)
                        for k, rows in enumerate(chunks)
                        for row in rows
                    ]
                )
            )
            if on_chunk is not None:
                on_chunk(pd.concat(frames, ignore_index=True))
    return pd.concat(frames, ignore_index=True)


def summarize(frame):
    cols = ["sep_published", "comp_published", "sep_calibrated", "comp_calibrated"]
    out = frame.groupby(["attribute", "treatment"], sort=False)[cols].mean()
    out["n_calibrated"] = frame.groupby(["attribute", "treatment"], sort=False)[
        "sep_calibrated"
    ].count()
    out["eod"] = frame.groupby(["attribute", "treatment"], sort=False)["eod"].mean()
    out["aod"] = frame.groupby(["attribute", "treatment"], sort=False)["aod"].mean()
    out["n_repeats"] = frame.groupby(["attribute", "treatment"], sort=False).size()
    return out


def table5(
    home,
    n_repeats,
    variant_repeats,
    n_jobs,
    n_calibrated,
    protocols=None,
    datasets=None,
    save=None,
):
    all_protocols = {
        "published": (dict(compas=published_compas, german=published_german), {}),
        "published, weights per attribute": (
            dict(compas=published_compas, german=published_german),
            {"joint_weights": False},
        ),
        "published features, package cohort": (
            dict(compas=published_compas_on_loader_cohort),
            {},
        ),
        "package loaders": (dict(compas=loader_compas, german=loader_german), {}),
        "package loaders, weights per attribute": (
            dict(compas=loader_compas, german=loader_german),
            {"joint_weights": False},
        ),
    }
    results = {}
    for name, (loaders, kwargs) in all_protocols.items():
        repeats = n_repeats if name == "published" else variant_repeats
        if repeats == 0 or (protocols and name not in protocols):
            continue
        for dataset, load in loaders.items():
            if datasets and dataset not in datasets:
                continue
            X, y, A = load(home)
            start = time.perf_counter()
            key = f"{name} / {dataset}"

            def report(
                frame,
                final=False,
                name=name,
                dataset=dataset,
                key=key,
                X=X,
                start=start,
            ):
                summary = summarize(frame)
                done = int(frame["repeat"].max()) + 1
                shown = summary.copy()
                if name == "published":
                    pub = [PUBLISHED_TABLE_V[(dataset, a, t)] for a, t in summary.index]
                    shown.insert(0, "paper_sep", [p[0] for p in pub])
                    shown.insert(1, "paper_comp", [p[1] for p in pub])
                elapsed = time.perf_counter() - start
                print(
                    f"\n{key}: {X.shape[0]} rows, {done} repeats"
                    f"{'' if final else ' so far'}, {elapsed:.0f} s",
                    flush=True,
                )
                print(shown.round(3).to_string(), flush=True)
                results[key] = {
                    "n_rows": int(X.shape[0]),
                    "n_repeats": done,
                    "seconds": elapsed,
                    "rows": shown.reset_index().to_dict(orient="records"),
                }
                if save is not None:
                    save(results)

            frame = run_protocol(
                X,
                y,
                A,
                n_repeats=repeats,
                seed=0,
                n_jobs=n_jobs,
                n_calibrated=n_calibrated if name == "published" else 0,
                on_chunk=report,
                **kwargs,
            )
            report(frame, final=True)
    return results


# -------------------------------------------------------------------------------------
# Table VIII
# -------------------------------------------------------------------------------------
def jira_items(home):
    path = home / "jirasoftware_filtered.csv"
    if not path.is_file():
        raise OSError(
            f"jirasoftware_filtered.csv was not found in {home}; place the study's "
            f"file there (or pass --data-home)."
        )
    return pd.read_csv(path)


def table8(home, n_pair_draws, seed=1):
    items = jira_items(home)
    train = items[items["split_mark"] != "test"]
    test = items[items["split_mark"] == "test"]
    y = test["storypoint"].to_numpy()
    s = test["is_internal"].to_numpy()
    results = {}
    rows = {}
    for treatment in ("none", "fairreweighing"):
        w = None
        if treatment == "fairreweighing":
            w = fair_reweighing_weights(
                train["storypoint"].to_numpy(),
                sensitive_features=train["is_internal"].to_numpy(),
            )
        model = make_pipeline(TfidfVectorizer(), Ridge(alpha=1.0))
        model.fit(train["text"], train["storypoint"], ridge__sample_weight=w)
        pred = model.predict(test["text"])
        rng = np.random.default_rng(resolve_seed(seed).spawn(1)[0])
        n = y.shape[0]
        # the published draws: n pairs with replacement, ties dropped, the
        # independent-pairs Wald test
        hits = 0
        for _ in range(n_pair_draws):
            pairs = make_comparative_pairs(y, n_pairs=n, random_state=rng)
            res = comparative_separation_test(
                y, pred, sensitive_features=s, pairs=pairs, variance="independent"
            )
            hits += min(_p(res, "cross"), _p(res, "within")) < ALPHA
        all_pairs = comparative_separation_test(y, pred, sensitive_features=s)
        perm = comparative_separation_test(
            y, pred, sensitive_features=s, method="permutation", random_state=seed
        )
        ours = {
            "mae": float(np.mean(np.abs(pred - y))),
            "pearson": float(pearsonr(pred, y).statistic),
            "spearman": float(spearmanr(pred, y).statistic),
            "isep": isep_score(y, pred, sensitive_features=s),
            "comp_published_rate": hits / n_pair_draws,
            "comp_all_pairs_p": float(
                min(_p(all_pairs, "cross"), _p(all_pairs, "within"))
            ),
            "comp_permutation_p": float(min(_p(perm, "cross"), _p(perm, "within"))),
        }
        pub = PUBLISHED_TABLE_VIII[treatment]
        rows[treatment] = {
            **ours,
            "paper_mae": pub[0],
            "paper_spearman": pub[2],
            "paper_isep": pub[3],
            "paper_comp_rate": pub[4],
        }
    frame = pd.DataFrame(rows).T
    print(f"\nTable VIII (Jira, TF-IDF + Ridge, {n_pair_draws} pair draws)")
    print(frame.round(4).to_string())
    results["table8"] = {"n_pair_draws": n_pair_draws, "rows": rows}
    return results


def _save(path, results):
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(results, indent=1, default=float), what="results")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-repeats", type=int, default=1000)
    parser.add_argument("--variant-repeats", type=int, default=200)
    parser.add_argument("--n-pair-draws", type=int, default=1000)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--only", choices=["table5", "table8"], default=None)
    parser.add_argument(
        "--n-calibrated",
        type=int,
        default=200,
        help="repeats of the published protocol that also run the calibrated tests",
    )
    parser.add_argument("--protocols", nargs="*", default=None)
    parser.add_argument("--datasets", nargs="*", default=None)
    args = parser.parse_args(argv)
    home = data_home(args.data_home)
    results = {"command": " ".join(sys.argv)}
    # one BLAS thread: the regressions are small, and several threads per process
    # on a shared machine make each fit tens of times slower
    with threadpool_limits(limits=1):
        if args.only in (None, "table8"):
            results.update(table8(home, args.n_pair_draws))
        if args.only in (None, "table5"):
            results.update(
                table5(
                    home,
                    args.n_repeats,
                    args.variant_repeats,
                    args.n_jobs,
                    args.n_calibrated,
                    args.protocols,
                    args.datasets,
                    save=lambda partial: _save(args.json, {**results, **partial}),
                )
            )
    _save(args.json, results)
    print(f"\nwritten: {args.json}")


if __name__ == "__main__":
    main()
