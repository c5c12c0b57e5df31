"""Readers of two real fairness datasets: COMPAS two-year recidivism and UCI German
credit.

The row-level files are third-party data and are not shipped with the package;
these readers parse a local copy. Each returns ``(X, y, attrs)``:

- ``X``: a DataFrame of numeric model features (float64), ready for a
  ``StandardScaler`` and ``LogisticRegression``;
- ``y``: the 0/1 label (int64), ``1`` for the favourable outcome;
- ``attrs``: a DataFrame of binary (0/1, int64) sensitive attributes.
"""

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = []

# -------------------------------------------------------------------------------------
# COMPAS
# -------------------------------------------------------------------------------------
_COMPAS_COLUMNS = (
    "sex",
    "race",
    "age",
    "juv_fel_count",
    "juv_misd_count",
    "juv_other_count",
    "priors_count",
    "days_b_screening_arrest",
    "c_charge_degree",
    "is_recid",
    "score_text",
    "two_year_recid",
    "age_cat",
)
_COMPAS_RACES = ("African-American", "Caucasian")
_COMPAS_NUMERIC = (
    "age",
    "priors_count",
    "juv_fel_count",
    "juv_misd_count",
    "juv_other_count",
)


def _compas_rows(path, races=_COMPAS_RACES):
    """The rows of ProPublica's ``compas-scores-two-years.csv`` that its analysis
    keeps, of the given ``races``, with the columns of ``_COMPAS_COLUMNS``.

    ProPublica's filter of the two-year data: the COMPAS screening within 30
    days of the arrest (``-30 <= days_b_screening_arrest <= 30``), a known
    recidivism status (``is_recid != -1``), no ordinary traffic offence
    (``c_charge_degree != "O"``) and a score (``score_text != "N/A"``): 6,172
    rows of all races, 5,278 of African-American and Caucasian defendants.
    """
    raw = pd.read_csv(path, usecols=lambda c: c in _COMPAS_COLUMNS)
    missing = sorted(set(_COMPAS_COLUMNS) - set(raw.columns))
    if missing:
        raise ValueError(
            f"{Path(path).name} is not ProPublica's compas-scores-two-years.csv: "
            f"columns {missing} are missing."
        )
    keep = (
        raw["days_b_screening_arrest"].between(-30, 30)
        & (raw["is_recid"] != -1)
        & (raw["c_charge_degree"] != "O")
        & (raw["score_text"] != "N/A")
        & raw["score_text"].notna()
        & raw["race"].isin(races)
    )
    return raw.loc[keep].reset_index(drop=True)


def _compas_features(df):
    """The numeric model features of the rows ``df`` (float64): the counts, the
    age and the one-hot charge degree."""
    X = df[list(_COMPAS_NUMERIC)].astype(np.float64)
    for degree in ("F", "M"):
        X[f"c_charge_degree_{degree}"] = (df["c_charge_degree"] == degree).astype(
            np.float64
        )
    return X


def _read_compas(path):
    """Read ProPublica's ``compas-scores-two-years.csv`` as the
    comparative-separation study uses it.

    The rows kept by ProPublica's analysis (:func:`_compas_rows`); of the
    6,172 remaining rows, only the African-American and Caucasian defendants
    (5,278 rows), so that ``race`` is a binary attribute of two well-defined
    groups.

    Parameters
    ----------
    path : str or path-like
        Path of ``compas-scores-two-years.csv``.

    Returns
    -------
    X : pandas.DataFrame of float64
        ``age``, ``priors_count``, ``juv_fel_count``, ``juv_misd_count``,
        ``juv_other_count``, the one-hot charge degree ``c_charge_degree_F``
        (felony) and ``c_charge_degree_M`` (misdemeanour), ``sex`` and ``race``
        (coded as in ``attrs``).
    y : ndarray of int64, shape (n_samples,)
        ``1`` when the defendant did **not** reoffend within two years
        (``two_year_recid == 0``, the favourable outcome), else ``0``.
    attrs : pandas.DataFrame of int64
        ``sex``: ``1`` for female, ``0`` for male; ``race``: ``1`` for Caucasian,
        ``0`` for African-American.
    """
    df = _compas_rows(path)
    attrs = pd.DataFrame(
        {
            "sex": (df["sex"] == "Female").astype(np.int64),
            "race": (df["race"] == "Caucasian").astype(np.int64),
        }
    )
    X = _compas_features(df)
    X["sex"] = attrs["sex"].astype(np.float64)
    X["race"] = attrs["race"].astype(np.float64)
    y = (df["two_year_recid"].to_numpy() == 0).astype(np.int64)
    return X, y, attrs


# -------------------------------------------------------------------------------------
# German credit
# -------------------------------------------------------------------------------------
# the 20 attributes A1..A20 of german.data, in file order, and the label
_GERMAN_COLUMNS = (
    "checking_status",  # A1
    "duration",  # A2, months
    "credit_history",  # A3
    "purpose",  # A4
    "credit_amount",  # A5
    "savings",  # A6
    "employment_since",  # A7
    "installment_rate",  # A8, % of disposable income
    "personal_status_sex",  # A9
    "other_debtors",  # A10
    "residence_since",  # A11
    "property",  # A12
    "age",  # A13, years
    "other_installment_plans",  # A14
    "housing",  # A15
    "existing_credits",  # A16
    "job",  # A17
    "people_liable",  # A18
    "telephone",  # A19
    "foreign_worker",  # A20
    "label",  # 1 good, 2 bad
)
_GERMAN_FEMALE = ("A92", "A95")
_GERMAN_MALE = ("A91", "A93", "A94")


def _read_german(path):
    """Read the UCI Statlog German credit data (``german.data``).

    The file has 1,000 rows of 20 space-separated attributes ``A1`` to ``A20``
    and the label (``1`` good, ``2`` bad credit), without header.

    Parameters
    ----------
    path : str or path-like
        Path of ``german.data``.

    Returns
    -------
    X : pandas.DataFrame of float64
        The 7 numeric attributes (``duration``, ``credit_amount``,
        ``installment_rate``, ``residence_since``, ``age``, ``existing_credits``,
        ``people_liable``) and the 13 qualitative ones one-hot encoded, named
        ``<attribute>_<code>`` (for example ``checking_status_A11``); the
        personal status and sex ``A9`` is one of them.
    y : ndarray of int64, shape (1000,)
        ``1`` for good credit (the favourable outcome), ``0`` for bad.
    attrs : pandas.DataFrame of int64
        ``age_gt_25``: ``1`` when older than 25 years (``A13 > 25``), else ``0``;
        ``sex``: ``1`` for female (``A9`` in A92, A95), ``0`` for male (A91, A93,
        A94).
    """
    df = pd.read_csv(path, sep=r"\s+", header=None, dtype=str)
    if df.shape[1] != len(_GERMAN_COLUMNS):
        raise ValueError(
            f"{Path(path).name} is not UCI's german.data: expected "
            f"{len(_GERMAN_COLUMNS)} space-separated columns (20 attributes and "
            f"the label), got {df.shape[1]}."
        )
    df.columns = list(_GERMAN_COLUMNS)
    label = df.pop("label")
    if not label.isin(["1", "2"]).all():
        raise ValueError(f"{Path(path).name}: the label column must be 1 or 2.")
    status = df["personal_status_sex"]
    if not status.isin(_GERMAN_FEMALE + _GERMAN_MALE).all():
        raise ValueError(
            f"{Path(path).name}: unknown personal status codes "
            f"{sorted(set(status) - set(_GERMAN_FEMALE + _GERMAN_MALE))}."
        )
    qualitative = [c for c in df.columns if df[c].str.startswith("A").all()]
    numeric = [c for c in df.columns if c not in qualitative]
    X = df[numeric].astype(np.float64)
    dummies = pd.get_dummies(df[qualitative], prefix_sep="_").astype(np.float64)
    X = pd.concat([X, dummies], axis=1)
    attrs = pd.DataFrame(
        {
            "age_gt_25": (X["age"] > 25).astype(np.int64),
            "sex": status.isin(_GERMAN_FEMALE).astype(np.int64),
        }
    )
    y = (label.to_numpy() == "1").astype(np.int64)
    return X, y, attrs
