"""Does Cross-Prior Smoothing lower the MSE of multiclass scores of small groups?

Usage (from the repository root)::

    python benchmarks/repro_multiclass_cps.py [--n-resamples 10000] [--n-jobs 1]
        [--data-home DIR] [--json PATH]

The Cross-Prior Smoothing study reports, for binary confusion matrices, that
smoothing a small group's matrix toward its reference lowers the mean squared
error of its metrics. This script tests the claim on real multiclass groups with
:func:`~sklearn_smallfair.model_selection.multiclass_downsampling_experiment`:
for each group, subgroups of ``n = 5, 10, ..., 150`` are drawn from
``Multinomial(n, C_group / N_group)`` (``--n-resamples`` draws per group and size),
each metric is computed raw and smoothed toward the rest of the population
(``(c + lam p_rest) / (n + lam) n``, ``lam = 5, 10, 20``) and compared with the
whole group's raw value.

Three settings, each skipped with one sentence when its file is absent:

* **COMPAS, K = 3.** Prediction: the COMPAS ``score_text`` (Low, Medium, High).
  Truth: the severity of what happened within the two years the score is meant
  to predict, in three ordered levels: no new offence (``two_year_recid == 0``),
  a non-violent new offence (``two_year_recid == 1`` and ``is_violent_recid ==
  0``) and a violent one (``two_year_recid == 1`` and ``is_violent_recid ==
  1``). Rows filtered as in ProPublica's analysis (the filters of
  :func:`~sklearn_smallfair.datasets.fetch_compas`, whose data hold neither the
  score nor ``is_violent_recid``, so the file is read here with the same
  filters);
  groups: the races with at least 100 defendants (African-American, Caucasian,
  Hispanic, Other).
* **Jira story points, K = 3 and K = 4.** ``jirasoftware_filtered.csv`` (no
  loader in the package): story points binned into ordered classes, K = 3:
  {1, 2}, {3, 4, 5}, {8, 13, 20}; K = 4: {1, 2}, {3}, {4, 5}, {8, 13, 20}.
  Predictions: out-of-fold (5-fold, stratified) predictions of a TF-IDF +
  logistic regression model of the item's text. Groups: ``is_internal``
  (user-story format 157 items, defect request 127).

Printed: the MSE ratio smoothed / raw per metric, K and n (the groups' MSEs
averaged with equal weights before the ratio), the share of (group, n) cells
where smoothing lowers the MSE, and the raw score's share of undefined draws.
Results are written as JSON (default
``benchmarks/results/repro_multiclass_cps.json``, written atomically).
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

from sklearn_smallfair._output import write_atomic  # noqa: E402
from sklearn_smallfair.datasets import get_data_home  # noqa: E402
from sklearn_smallfair.metrics import multiclass_confusion_counts  # noqa: E402
from sklearn_smallfair.model_selection import (  # noqa: E402
    multiclass_downsampling_experiment,
)

DEFAULT_JSON = _common.BENCH_DIR / "results" / "repro_multiclass_cps.json"
SIZES = range(5, 151, 5)
SHOWN_SIZES = [5, 10, 20, 50, 100, 150]
LAMS = (0, 5, 10, 20)
METRICS = ("tpr", "ppv", "f1", "accuracy", "balanced_accuracy", "mcc", "kappa")
JIRA_BINS = {
    3: ([0, 2, 5, np.inf], ["1-2", "3-5", "8+"]),
    4: ([0, 2, 3, 5, np.inf], ["1-2", "3", "4-5", "8+"]),
}


def _find(name, data_home):
    for folder in (
        Path(get_data_home(data_home)),
        _common.REPO_ROOT.parent / "shared" / "data",
    ):
        if (folder / name).is_file():
            return folder / name
    return None


def compas_counts(data_home):
    path = _find("compas-scores-two-years.csv", data_home)
    if path is None:
        print("COMPAS skipped: compas-scores-two-years.csv is not in the data folder.")
        return None
    raw = pd.read_csv(path)
    keep = (
        raw["days_b_screening_arrest"].between(-30, 30)
        & (raw["is_recid"] != -1)
        & (raw["c_charge_degree"] != "O")
        & (raw["score_text"] != "N/A")
        & raw["score_text"].notna()
    )
    df = raw.loc[keep]
    truth = np.where(
        df["two_year_recid"] == 0,
        "Low",
        np.where(df["is_violent_recid"] == 1, "High", "Medium"),
    )
    sizes = df["race"].value_counts()
    big = df["race"].isin(sizes.index[sizes >= 100]).to_numpy()
    return multiclass_confusion_counts(
        truth[big],
        df["score_text"].to_numpy()[big],
        sensitive_features=df["race"].to_numpy()[big],
        labels=["Low", "Medium", "High"],
    )


def jira_counts(data_home, k):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline

    path = _find("jirasoftware_filtered.csv", data_home)
    if path is None:
        print("Jira skipped: jirasoftware_filtered.csv is not in the data folder.")
        return None
    df = pd.read_csv(path)
    edges, names = JIRA_BINS[k]
    y = pd.cut(df["storypoint"], edges, labels=names).astype(str).to_numpy()
    model = make_pipeline(
        TfidfVectorizer(min_df=2, sublinear_tf=True),
        LogisticRegression(C=10.0, max_iter=2000),
    )
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    pred = cross_val_predict(model, df["text"].fillna(""), y, cv=cv)
    groups = np.where(df["is_internal"] == 1, "defect", "user story")
    return multiclass_confusion_counts(y, pred, sensitive_features=groups, labels=names)


def run_setting(name, counts, n_resamples, n_jobs):
    res = multiclass_downsampling_experiment(
        counts,
        sizes=SIZES,
        metrics=METRICS,
        average="macro",
        lam=LAMS,
        method="montecarlo",
        n_resamples=n_resamples,
        random_state=0,
        n_jobs=n_jobs,
    )
    res.insert(0, "setting", name)
    res.insert(1, "K", counts.counts.shape[-1])
    return res


def summarize(res):
    """MSE ratio smoothed / raw (groups' MSEs averaged first), and the share of
    (group, n) cells where smoothing lowers the MSE."""
    pooled = res.groupby(["setting", "K", "metric", "n", "estimator"])["mse"].mean()
    pooled = pooled.unstack("estimator")
    ratio = pooled[[f"cps_{lam}" for lam in LAMS[1:]]].div(pooled["raw"], axis=0)
    wide = res.pivot_table(
        index=["setting", "K", "metric", "group", "n"],
        columns="estimator",
        values="mse",
    )
    lower = (
        pd.DataFrame(
            {f"cps_{lam}": wide[f"cps_{lam}"] < wide["raw"] for lam in LAMS[1:]}
        )
        .groupby(["setting", "K", "metric"])
        .mean()
    )
    undefined = (
        res[res["estimator"] == "raw"]
        .groupby(["setting", "K", "metric", "n"])["p_undefined"]
        .mean()
        .unstack("n")
    )
    return ratio, lower, undefined


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-resamples", type=int, default=10_000)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    results = {"command": " ".join(sys.argv), "n_resamples": args.n_resamples}
    settings = []
    compas = compas_counts(args.data_home)
    if compas is not None:
        settings.append(("COMPAS score_text, race", compas))
    for k in (3, 4):
        jira = jira_counts(args.data_home, k)
        if jira is not None:
            settings.append((f"Jira story points, is_internal, K={k}", jira))
    if not settings:
        print("No data: nothing to run.")
        return
    frames = []
    for name, counts in settings:
        sizes = dict(
            zip(counts.groups.tolist(), counts.counts.sum(axis=(1, 2)).tolist())
        )
        print(f"{name}: groups {sizes}")
        results.setdefault("groups", {})[name] = {
            str(g): counts.counts[i].tolist() for i, g in enumerate(counts.groups)
        }
        start = time.perf_counter()
        frames.append(run_setting(name, counts, args.n_resamples, args.n_jobs))
        print(f"  ({time.perf_counter() - start:.0f} s)")
    res = pd.concat(frames, ignore_index=True)
    ratio, lower, undefined = summarize(res)
    shown = ratio[ratio.index.get_level_values("n").isin(SHOWN_SIZES)]
    print("\nMSE ratio smoothed / raw (groups' MSEs averaged with equal weights)")
    print(shown.round(3).to_string())
    print("\nShare of (group, n = 5..150) cells where smoothing lowers the MSE")
    print(lower.round(3).to_string())
    print("\nRaw score: share of undefined draws (mean over groups)")
    print(undefined[SHOWN_SIZES].round(3).to_string())
    results["mse_ratio"] = ratio.reset_index().to_dict(orient="records")
    results["share_lower"] = lower.reset_index().to_dict(orient="records")
    results["raw_undefined"] = undefined.reset_index().to_dict(orient="records")
    results["table"] = res.to_dict(orient="records")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(
        args.json, json.dumps(results, indent=1, default=float), what="results"
    )
    print(f"\nwritten: {args.json}")


if __name__ == "__main__":
    main()
