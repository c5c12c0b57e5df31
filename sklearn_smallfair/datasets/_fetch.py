"""Fetchers of two real fairness datasets: COMPAS two-year recidivism and UCI
German credit, and the data folder they share.

The row-level files are third-party data and are not shipped with the package:
on first use they are downloaded from their public source into a local cache
folder (``data_home``), their SHA-256 checksum is verified, and they are parsed
by the readers of :mod:`sklearn_smallfair.datasets._realdata`. Later calls read
the cached copy (after verifying its checksum again) and never use the network.

One rule locates every data file of the package, its examples and its tests:
the ``data_home`` argument, else the environment variable ``SMALLFAIR_DATA``,
else ``~/smallfair_data`` (:func:`get_data_home`).
"""

import hashlib
import os
import shutil
import tempfile
from collections import namedtuple
from pathlib import Path
from urllib.request import Request, urlopen

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from .._params import BOOLEAN, StrOptions, validate_params
from ._realdata import _compas_features, _compas_rows, _read_german

__all__ = ["fetch_compas", "fetch_german_credit", "get_data_home"]

_ENV_VAR = "SMALLFAIR_DATA"
_DEFAULT_HOME = Path("~") / "smallfair_data"
_TIMEOUT = 60  # seconds
_CHUNK = 1 << 20

_RemoteFile = namedtuple("_RemoteFile", ["filename", "url", "checksum"])

#: Constraints of the fetchers' parameters.
_FETCH_PARAMS = {
    "data_home": [None, str, os.PathLike],
    "download_if_missing": BOOLEAN,
    "return_X_y": BOOLEAN,
    "as_frame": BOOLEAN,
}

_COMPAS_FILE = _RemoteFile(
    filename="compas-scores-two-years.csv",
    url=(
        "https://raw.githubusercontent.com/propublica/compas-analysis/master/"
        "compas-scores-two-years.csv"
    ),
    checksum="d180e410066da845eceb452417fbf8b119633f05526bcb29ef2c5b546d8946c5",
)
_GERMAN_FILE = _RemoteFile(
    filename="german.data",
    url=(
        "https://archive.ics.uci.edu/ml/machine-learning-databases/statlog/german/"
        "german.data"
    ),
    checksum="b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
)


# -------------------------------------------------------------------------------------
# cache folder, checksum, download
# -------------------------------------------------------------------------------------
def _get_data_home(data_home=None):
    """The cache folder: ``data_home``, else ``$SMALLFAIR_DATA``, else
    ``~/smallfair_data`` (``~`` expanded). It is not created here."""
    if data_home is None:
        data_home = os.environ.get(_ENV_VAR) or _DEFAULT_HOME
    return Path(data_home).expanduser()


@validate_params({"data_home": [None, str, os.PathLike]})
def get_data_home(data_home=None):
    """The folder of the package's data files (it is not created).

    :func:`fetch_compas` and :func:`fetch_german_credit` cache their files there,
    and the examples and tests of the project look for their data files there.
    The folder is ``data_home`` when given, else the one named by the
    environment variable ``SMALLFAIR_DATA``, else ``~/smallfair_data``.

    To use files you already have (for instance on a machine without network
    access), copy them into that folder under their original names
    (``compas-scores-two-years.csv``, ``german.data``), or point
    ``SMALLFAIR_DATA`` at the folder that holds them. The fetchers verify their
    checksums.

    Parameters
    ----------
    data_home : str or path-like, default=None
        An explicit folder; ``~`` is expanded.

    Returns
    -------
    data_home : pathlib.Path
        The folder.

    See Also
    --------
    fetch_compas : The ProPublica COMPAS two-year recidivism data.
    fetch_german_credit : The UCI German credit data.

    Examples
    --------
    >>> from sklearn_smallfair.datasets import get_data_home
    >>> get_data_home("/srv/fairness-data").as_posix()
    '/srv/fairness-data'
    >>> get_data_home("~/fairness-data").is_absolute()  # ~ expanded
    True
    """
    return _get_data_home(data_home)


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _download(url, path):
    """Write the resource at ``url`` to the file ``path``."""
    request = Request(url, headers={"User-Agent": "sklearn-smallfair"})
    with urlopen(request, timeout=_TIMEOUT) as response, open(path, "wb") as out:
        shutil.copyfileobj(response, out, _CHUNK)


def _fetch_remote(remote, data_home):
    """Download ``remote`` into ``data_home``, verify it, and move it in place.

    The file is written to a temporary file of the same folder and renamed only
    once complete and verified, so an interrupted download never leaves a
    partial file under the final name.
    """
    target = data_home / remote.filename
    try:
        data_home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(
            f"Cannot create the data folder {data_home} ({exc}). Pass a writable "
            f"folder as data_home or set the environment variable {_ENV_VAR}."
        ) from exc
    fd, tmp = tempfile.mkstemp(
        dir=data_home, prefix=f".{remote.filename}.", suffix=".part"
    )
    os.close(fd)
    tmp = Path(tmp)
    try:
        try:
            _download(remote.url, tmp)
        except (OSError, ValueError) as exc:
            raise OSError(
                f"Could not download {remote.url} ({exc}). Check the network "
                f"connection, or download the file by other means and place it "
                f"at {target}."
            ) from exc
        checksum = _sha256(tmp)
        if checksum != remote.checksum:
            raise OSError(
                f"The file downloaded from {remote.url} has the SHA-256 checksum "
                f"{checksum}, expected {remote.checksum}: the download was "
                f"corrupted or the remote file has changed. Try again, or place a "
                f"copy of the original file at {target}."
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _fetch_file(remote, data_home, download_if_missing):
    """The verified local path of ``remote``, downloading it when missing."""
    data_home = _get_data_home(data_home)
    path = data_home / remote.filename
    if path.is_file():
        checksum = _sha256(path)
        if checksum != remote.checksum:
            raise OSError(
                f"The cached file {path} has the SHA-256 checksum {checksum}, "
                f"expected {remote.checksum}: it is corrupted or not the original "
                f"file. Delete it to download it again from {remote.url}, or "
                f"replace it with a copy of the original file."
            )
        return path
    if not download_if_missing:
        raise OSError(
            f"{remote.filename} was not found in the data folder {data_home} and "
            f"download_if_missing=False. Call again with download_if_missing=True "
            f"to download it from {remote.url}, or place a copy of that file at "
            f"{path}."
        )
    return _fetch_remote(remote, data_home)


def _bunch(X, y, attrs, *, target_name, target_names, descr, path, as_frame, X_y):
    """The Bunch (or ``(X, y)``) returned by the fetchers."""
    feature_names = list(X.columns)
    if as_frame:
        target = pd.Series(y, name=target_name)
        sensitive = attrs
        extra = attrs.drop(columns=[c for c in attrs.columns if c in X.columns])
        frame = pd.concat([X, extra, target], axis=1)
    else:
        X = X.to_numpy()
        target = np.asarray(y)
        sensitive = attrs.to_numpy()
        frame = None
    if X_y:
        return X, target
    return Bunch(
        data=X,
        target=target,
        sensitive=sensitive,
        frame=frame,
        feature_names=feature_names,
        target_names=np.asarray(target_names, dtype=object),
        sensitive_names=list(attrs.columns),
        DESCR=descr,
        filename=str(path),
    )


# -------------------------------------------------------------------------------------
# COMPAS
# -------------------------------------------------------------------------------------
_COMPAS_DESCR = f"""\
COMPAS two-year recidivism (ProPublica)
=======================================

Source: ProPublica's compas-analysis repository, file
compas-scores-two-years.csv ({_COMPAS_FILE.url}): 7,214 defendants screened with
the COMPAS risk assessment in Broward County, Florida, in 2013-2014, followed
for two years.

Filtering (as in ProPublica's analysis): COMPAS screening within 30 days of the
arrest (-30 <= days_b_screening_arrest <= 30), a known recidivism status
(is_recid != -1), no ordinary traffic offence (c_charge_degree != "O") and a
score (score_text != "N/A"); this leaves 6,172 rows of all six races
(African-American, Caucasian, Hispanic, Other, Asian, Native American). With
races=("African-American", "Caucasian") only those two are kept: 5,278 rows.

Features (float64, 7): age, priors_count, juv_fel_count, juv_misd_count,
juv_other_count and the one-hot charge degree c_charge_degree_F (felony) and
c_charge_degree_M (misdemeanour). With sensitive_in_data=True two more: sex
(1 female, 0 male) and race (1 Caucasian, 0 any other race). The COMPAS scores
themselves are not features.

Target: ProPublica's two_year_recid by default, 1 when the defendant
reoffended within two years. With target="no_recid" the opposite coding: 1 when
the defendant did NOT reoffend (the favourable outcome).

Sensitive attributes (strings, in sensitive, not in data by default): race with
ProPublica's labels, sex ("Female", "Male") and age_cat ("Less than 25",
"25 - 45", "Greater than 45").

Terms: ProPublica publishes the data without a licence file. Treat it as
third-party data: it is downloaded at run time into your data folder and is not
part of this package; do not redistribute it.
"""

#: ProPublica's race labels, in the order of their frequency in the filtered rows.
_COMPAS_RACE_LABELS = (
    "African-American",
    "Caucasian",
    "Hispanic",
    "Other",
    "Asian",
    "Native American",
)
_COMPAS_TARGETS = {
    "two_year_recid": ["did_not_reoffend", "reoffended"],
    "no_recid": ["reoffended", "did_not_reoffend"],
}


def _check_races(races):
    """The tuple of race labels to keep, or a ``ValueError`` naming the fix."""
    if isinstance(races, str):
        if races == "all":
            return _COMPAS_RACE_LABELS
        races = (races,)
    races = tuple(races)
    unknown = [r for r in races if r not in _COMPAS_RACE_LABELS]
    if unknown or not races:
        raise ValueError(
            f"The 'races' parameter of fetch_compas must be 'all' or a non-empty "
            f"sequence of ProPublica's race labels {list(_COMPAS_RACE_LABELS)}; "
            f"got the unknown labels {unknown or races}. For the two-race subset "
            f"pass races=('African-American', 'Caucasian')."
        )
    return races


def _read_compas_labels(path, races):
    """``(X, two_year_recid, sensitive)`` of the rows kept by ProPublica's filter
    and of the given races; ``sensitive`` holds the original string labels."""
    df = _compas_rows(path, races)
    sensitive = df[["race", "sex", "age_cat"]].astype(object)
    return (
        _compas_features(df),
        df["two_year_recid"].to_numpy().astype(np.int64),
        (sensitive),
    )


@validate_params(
    {
        **_FETCH_PARAMS,
        "target": [StrOptions(set(_COMPAS_TARGETS))],
        "races": [StrOptions({"all"}), list, tuple],
        "sensitive_in_data": BOOLEAN,
    }
)
def fetch_compas(
    data_home=None,
    *,
    target="two_year_recid",
    races="all",
    sensitive_in_data=False,
    download_if_missing=True,
    return_X_y=False,
    as_frame=True,
):
    """Load the ProPublica COMPAS two-year recidivism data.

    The file ``compas-scores-two-years.csv`` is downloaded from ProPublica's
    public repository on first use into ``data_home`` and read from there
    afterwards; its SHA-256 checksum is verified both after download and every
    time the cached copy is read. The rows are filtered as in ProPublica's
    analysis (6,172 rows, all races); see ``DESCR`` for the details.

    ============== ==================================================
    Samples        6,172 (all races); 5,278 with
                   ``races=("African-American", "Caucasian")``
    Features       7, numeric (float64): age, prior counts, charge
                   degree; 9 with ``sensitive_in_data``
    Target         ``two_year_recid``: 1 = reoffended within two
                   years (ProPublica's coding); ``target="no_recid"``
                   for 1 = did NOT reoffend
    Sensitive      ``race`` (ProPublica's labels), ``sex``
                   (``"Female"``/``"Male"``), ``age_cat``: in
                   ``sensitive``, NOT in ``data`` by default
    ============== ==================================================

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder of the cached file. By default the environment variable
        ``SMALLFAIR_DATA`` if set, else ``~/smallfair_data``; see
        :func:`get_data_home`.
    target : {"two_year_recid", "no_recid"}, default="two_year_recid"
        Coding of the target. ``"two_year_recid"`` is ProPublica's: 1 when the
        defendant reoffended within two years. ``"no_recid"`` is its opposite,
        1 when the defendant did not reoffend (the favourable outcome), the
        coding of the comparative-separation study.
    races : "all" or sequence of str, default="all"
        The races kept, with ProPublica's labels ``"African-American"``,
        ``"Caucasian"``, ``"Hispanic"``, ``"Other"``, ``"Asian"`` and
        ``"Native American"``. ``("African-American", "Caucasian")`` gives the
        5,278-row two-race subset of the comparative-separation study.
    sensitive_in_data : bool, default=False
        Append ``sex`` (1 = female) and ``race`` (1 = Caucasian, 0 = any other
        race) as numeric features of ``data`` (9 features, as in the
        comparative-separation study, whose models use them). By default they
        are only in ``sensitive``, so that ``fit(bunch.data, bunch.target)``
        does not train on race and sex.
    download_if_missing : bool, default=True
        Download the file when it is not in ``data_home``. If False and the file
        is missing, an ``OSError`` is raised.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=True
        Return ``data`` and ``sensitive`` as pandas DataFrames, ``target`` as a
        Series named after ``target``, and ``frame``. If False, numpy arrays
        (``sensitive`` of dtype object) and ``frame=None``.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes:

        data : pandas.DataFrame of shape (n_samples, 7) or ndarray
            The features (float64); 9 columns with ``sensitive_in_data=True``.
        target : pandas.Series or ndarray of shape (n_samples,)
            The 0/1 label (int64) coded as ``target`` says.
        sensitive : pandas.DataFrame or ndarray of shape (n_samples, 3)
            The string labels of ``race``, ``sex`` and ``age_cat``.
        frame : pandas.DataFrame or None
            The features, the sensitive attributes not already among them, and
            the target. None when ``as_frame=False``.
        feature_names : list of str
            The names of the features.
        target_names : ndarray of str
            The meaning of the target values 0 and 1:
            ``["did_not_reoffend", "reoffended"]`` for ``"two_year_recid"``,
            the reverse for ``"no_recid"``.
        sensitive_names : list of str
            ``["race", "sex", "age_cat"]``.
        DESCR : str
            A description: source, filtering, coding and terms.
        filename : str
            The path of the cached file.

    (data, target) : tuple if ``return_X_y`` is True
        The features and the target, as in ``data.data`` and ``data.target``.

    Raises
    ------
    OSError
        When the file is missing and ``download_if_missing=False``, when the
        download fails (the message names the URL and where to place a copy of
        the file), or when the checksum of the downloaded or cached file differs
        from the expected one (the message names the file to delete).
    ValueError
        When ``races`` names a label that is not one of ProPublica's.

    See Also
    --------
    fetch_german_credit : The UCI German credit data.
    get_data_home : The folder of the cached file.

    Notes
    -----
    The data is third-party data published by ProPublica without a licence
    file; it is not shipped with this package.

    Traps to check before an audit:

    - The target coding: 1 is the unfavourable outcome (reoffended) by
      default, as in ProPublica's analysis. A true positive is then a correctly
      predicted reoffender and the false-positive rate is ProPublica's rate of
      non-reoffenders labelled high risk. ``target="no_recid"`` reverses every
      such statement.
    - The rows: all six races by default. The two-race subset (5,278 rows)
      drops 894 Hispanic, Other, Asian and Native American defendants; a
      statement about "race" on it is a statement about two groups only.
    - The features: race and sex are not in ``data`` unless
      ``sensitive_in_data=True``; then ``race`` is 1 for Caucasian and 0 for
      every other race, a coarser attribute than the labels of ``sensitive``.
    - ``age`` is a feature and ``age_cat`` a sensitive attribute derived from
      it: leaving ``race`` and ``sex`` out of ``data`` does not leave out age.
    - The recorded outcome is a new arrest, not a new offence; its rate differs
      by race for reasons beyond behaviour.

    Examples
    --------
    >>> from sklearn_smallfair.datasets import fetch_compas
    >>> compas = fetch_compas()  # doctest: +SKIP
    >>> compas.data.shape  # doctest: +SKIP
    (6172, 7)
    >>> "race" in compas.data  # doctest: +SKIP
    False
    >>> compas.target.name, int(compas.target.sum())  # doctest: +SKIP
    ('two_year_recid', 2809)
    >>> compas.sensitive["race"].value_counts()  # doctest: +SKIP
    race
    African-American    3175
    Caucasian           2103
    Hispanic             509
    Other                343
    Asian                 31
    Native American       11
    Name: count, dtype: int64

    The two-race subset in the coding of the comparative-separation study:

    >>> study = fetch_compas(
    ...     races=("African-American", "Caucasian"),
    ...     target="no_recid",
    ...     sensitive_in_data=True,
    ... )  # doctest: +SKIP
    >>> study.data.shape, int(study.target.sum())  # doctest: +SKIP
    ((5278, 9), 2795)
    """
    kept = _check_races(races)
    path = _fetch_file(_COMPAS_FILE, data_home, download_if_missing)
    X, recid, sensitive = _read_compas_labels(path, kept)
    if sensitive_in_data:
        X["sex"] = (sensitive["sex"] == "Female").astype(np.float64)
        X["race"] = (sensitive["race"] == "Caucasian").astype(np.float64)
    y = recid if target == "two_year_recid" else 1 - recid
    return _bunch(
        X,
        y,
        sensitive,
        target_name=target,
        target_names=_COMPAS_TARGETS[target],
        descr=_COMPAS_DESCR,
        path=path,
        as_frame=as_frame,
        X_y=return_X_y,
    )


# -------------------------------------------------------------------------------------
# German credit
# -------------------------------------------------------------------------------------
_GERMAN_DESCR = f"""\
German credit (UCI Statlog)
===========================

Source: UCI Machine Learning Repository, Statlog (German Credit Data), file
german.data ({_GERMAN_FILE.url}): 1,000 credit applicants, 20 attributes A1 to
A20 and the label (1 good, 2 bad credit risk), space separated. No rows are
removed.

Features (float64, 61): the 7 numeric attributes (duration, credit_amount,
installment_rate, residence_since, age, existing_credits, people_liable) and the
13 qualitative attributes one-hot encoded as <attribute>_<code>, for example
checking_status_A11; the personal status and sex attribute A9 is one of them.

Target: 1 for good credit (the favourable outcome, 700 rows), 0 for bad.

Sensitive attributes (0/1): age_gt_25, 1 when older than 25 years (A13 > 25);
sex, 1 female (A9 in A92, A95) and 0 male (A91, A93, A94).

Terms: the dataset is licensed by the UCI Machine Learning Repository under
CC BY 4.0 (Hofmann, H. (1994). Statlog (German Credit Data). UCI Machine Learning
Repository. https://doi.org/10.24432/C5NC77). It is downloaded at run time into
your data folder and is not part of this package.
"""


@validate_params(_FETCH_PARAMS)
def fetch_german_credit(
    data_home=None, *, download_if_missing=True, return_X_y=False, as_frame=True
):
    """Load the UCI Statlog German credit data (binary age and sex).

    The file ``german.data`` is downloaded from the UCI Machine Learning
    Repository on first use into ``data_home`` and read from there afterwards;
    its SHA-256 checksum is verified both after download and every time the
    cached copy is read. See ``DESCR`` for the coding.

    ============== ==========================================
    Samples        1,000
    Features       61, numeric (float64, one-hot qualitative)
    Target         1 = good credit (700)
    Sensitive      ``age_gt_25`` (1 = older than 25), ``sex`` (1 = female)
    ============== ==========================================

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder of the cached file. By default the environment variable
        ``SMALLFAIR_DATA`` if set, else ``~/smallfair_data``; see
        :func:`get_data_home`.
    download_if_missing : bool, default=True
        Download the file when it is not in ``data_home``. If False and the file
        is missing, an ``OSError`` is raised.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=True
        Return ``data`` and ``sensitive`` as pandas DataFrames, ``target`` as a
        Series named ``"good_credit"``, and ``frame``. If False, numpy arrays
        and ``frame=None``.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes:

        data : pandas.DataFrame of shape (1000, 61) or ndarray
            The features (float64).
        target : pandas.Series or ndarray of shape (1000,)
            The 0/1 label (int64), 1 for good credit.
        sensitive : pandas.DataFrame or ndarray of shape (1000, 2)
            The binary sensitive attributes ``age_gt_25`` and ``sex`` (int64).
        frame : pandas.DataFrame or None
            The features, the sensitive attributes and the target. None when
            ``as_frame=False``.
        feature_names : list of str
            The names of the features.
        target_names : ndarray of str
            The meaning of the target values 0 and 1: ``["bad", "good"]``.
        sensitive_names : list of str
            ``["age_gt_25", "sex"]``.
        DESCR : str
            A description: source, coding and licence.
        filename : str
            The path of the cached file.

    (data, target) : tuple if ``return_X_y`` is True
        The features and the target, as in ``data.data`` and ``data.target``.

    Raises
    ------
    OSError
        When the file is missing and ``download_if_missing=False``, when the
        download fails (the message names the URL and where to place a copy of
        the file), or when the checksum of the downloaded or cached file differs
        from the expected one (the message names the file to delete).

    See Also
    --------
    fetch_compas : The ProPublica COMPAS two-year recidivism data.
    get_data_home : The folder of the cached file.

    Notes
    -----
    The data is licensed under CC BY 4.0 by the UCI Machine Learning Repository;
    it is not shipped with this package.

    Examples
    --------
    >>> from sklearn_smallfair.datasets import fetch_german_credit
    >>> X, y = fetch_german_credit(return_X_y=True)  # doctest: +SKIP
    >>> X.shape, int(y.sum())  # doctest: +SKIP
    ((1000, 61), 700)
    """
    path = _fetch_file(_GERMAN_FILE, data_home, download_if_missing)
    X, y, attrs = _read_german(path)
    return _bunch(
        X,
        y,
        attrs,
        target_name="good_credit",
        target_names=["bad", "good"],
        descr=_GERMAN_DESCR,
        path=path,
        as_frame=as_frame,
        X_y=return_X_y,
    )
