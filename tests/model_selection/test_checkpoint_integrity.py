"""Integrity of the downsampling checkpoints: checksums, fingerprint, corrupt,
duplicated, non-finite, empty and truncated files."""

import hashlib
import json
import os
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config

from sklearn_smallfair.exceptions import CheckpointWarning
from sklearn_smallfair.metrics import metric_names
from sklearn_smallfair.model_selection import _checkpoint, downsampling_experiment
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing

# group "b" has FN = 0 and a whole-group FNR of 0 but TPR 1; group "c" has no
# positive at all, so its TPR target is undefined (mse and bias null)
COUNTS = {"a": (6, 3, 4, 12), "b": (2, 0, 5, 20), "c": (0, 0, 7, 9)}
KW = dict(
    counts=COUNTS,
    metrics=("tpr", "mcc"),
    estimators={"raw": None, "cps_5": CrossPriorSmoothing(5)},
    sizes=[1, 2, 5, 8],
)


@pytest.fixture(scope="module")
def full():
    return downsampling_experiment(**KW)


@pytest.fixture
def written(tmp_path):
    """A complete checkpoint of ``KW``: its path and its lines."""
    path = tmp_path / "run.ckpt"
    downsampling_experiment(**KW, checkpoint=path)
    return path, path.read_text().splitlines()


def _write(path, lines, end="\n"):
    path.write_text("\n".join(lines) + end)


def _resume(path, **kw):
    return downsampling_experiment(**{**KW, **kw}, checkpoint=path)


def _forge(fingerprint, record):
    """A record carrying a valid checksum, whatever its content."""
    record = dict(record)
    record["sha256"] = _checkpoint._checksum(fingerprint, record["n"], record["stats"])
    return json.dumps(record)


# ---------------------------------------------------------------------------
# what the file holds
# ---------------------------------------------------------------------------


def test_header_has_fingerprint_and_each_record_a_checksum(written):
    path, lines = written
    header = json.loads(lines[0])
    assert header["format"] == 2
    assert header["checkpoint"] == "sklearn_smallfair.downsampling_experiment"
    assert re.fullmatch("[0-9a-f]{64}", header["fingerprint"])
    assert len(lines) == 1 + len(KW["sizes"])
    for line in lines[1:]:
        record = json.loads(line)
        assert list(record) == ["n", "stats", "sha256"]
        body = json.dumps(
            {"n": record["n"], "stats": record["stats"]}, separators=(",", ":")
        )
        expected = hashlib.sha256(f"{header['fingerprint']}\n{body}".encode())
        assert record["sha256"] == expected.hexdigest()
        # standard JSON: undefined statistics are null, never NaN
        assert "NaN" not in line and "Infinity" not in line
    assert "null" in "".join(lines[1:])
    # no temporary file is left beside it
    assert os.listdir(path.parent) == [path.name]


def test_fingerprint_covers_the_arguments(written):
    path, _ = written
    for other in (
        {"metrics": ("tpr",)},
        {"estimators": {"raw": None, "cps_5": CrossPriorSmoothing(6)}},
        {"counts": {**COUNTS, "a": (6, 3, 4, 13)}},
        {"sampling": "hypergeometric", "sizes": [1, 2, 5]},
    ):
        with pytest.raises(ValueError, match="written by a run with other arguments"):
            _resume(path, **other)


# ---------------------------------------------------------------------------
# corrupt, duplicated and non-finite records: errors naming file and record
# ---------------------------------------------------------------------------


def test_edited_record_is_a_checksum_error(written, full):
    path, lines = written
    record = json.loads(lines[2])  # size 2
    record["stats"][0][0][0][0] += 0.125
    _write(path, [*lines[:2], json.dumps(record), *lines[3:]])
    with pytest.raises(ValueError) as exc:
        _resume(path)
    message = str(exc.value)
    assert f"checkpoint={str(path)!r}" in message
    assert "line 3 (size 2)" in message and "checksum mismatch" in message
    # deleting the line, as the message says, recomputes that size
    _write(path, [*lines[:2], *lines[3:]])
    pd.testing.assert_frame_equal(_resume(path), full, check_exact=True)


def test_record_from_another_checkpoint_is_a_checksum_error(tmp_path, written):
    path, lines = written
    other = tmp_path / "other.ckpt"
    # same groups, metrics and estimators (same shape), other data
    downsampling_experiment(
        **{**KW, "counts": {**COUNTS, "a": (7, 3, 4, 12)}}, checkpoint=other
    )
    foreign = other.read_text().splitlines()[1]
    _write(path, [lines[0], foreign, *lines[2:]])
    with pytest.raises(ValueError, match=r"line 2 \(size 1\).*checksum mismatch"):
        _resume(path)


@pytest.mark.parametrize("where", [1, 3])
def test_duplicated_size_is_an_error(written, where):
    path, lines = written
    # the same record again, or the same size with other (validly signed) stats:
    # neither silently wins
    copy = lines[2]
    if where == 3:
        record = json.loads(lines[2])
        record["stats"][0][0][0][1] = 0.5
        copy = _forge(json.loads(lines[0])["fingerprint"], record)
    _write(path, [*lines, copy])
    with pytest.raises(ValueError) as exc:
        _resume(path)
    message = str(exc.value)
    assert f"checkpoint={str(path)!r}" in message
    assert "records size 2 twice, on lines 3 and 6" in message


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_value_is_an_error(written, literal):
    path, lines = written
    # hand-edited, or written with a valid checksum: both refused
    fingerprint = json.loads(lines[0])["fingerprint"]
    for signed in (False, True):
        record = json.loads(lines[3])
        record["stats"][0][0][0][0] = float(literal.lower())
        line = _forge(fingerprint, record) if signed else json.dumps(record)
        assert literal in line
        _write(path, [*lines[:3], line, *lines[4:]])
        with pytest.raises(ValueError) as exc:
            _resume(path)
        message = str(exc.value)
        assert f"checkpoint={str(path)!r}" in message
        assert "line 4 (size 5)" in message
        assert "mse of group 'a', metric 'tpr', estimator 'raw'" in message
        assert "non-finite" in message


def test_null_where_a_run_writes_a_number_is_an_error(written):
    path, lines = written
    fingerprint = json.loads(lines[0])["fingerprint"]
    record = json.loads(lines[4])  # size 8
    # p_undefined of group b, estimator cps_5, metric mcc: a run always writes it
    record["stats"][1][1][1][3] = None
    _write(path, [*lines[:4], _forge(fingerprint, record), *lines[5:]])
    with pytest.raises(ValueError) as exc:
        _resume(path)
    message = str(exc.value)
    assert "line 5 (size 8)" in message
    assert "p_undefined of group 'b', metric 'mcc', estimator 'cps_5'" in message
    assert "undefined (null)" in message


def test_number_where_a_run_writes_null_is_an_error(written):
    path, lines = written
    fingerprint = json.loads(lines[0])["fingerprint"]
    record = json.loads(lines[4])
    # group c has no positive: its whole-group TPR, the target, is undefined
    assert record["stats"][2][0][0][0] is None
    record["stats"][2][0][0][0] = 0.25
    _write(path, [*lines[:4], _forge(fingerprint, record), *lines[5:]])
    with pytest.raises(ValueError, match=r"mse of group 'c', metric 'tpr'.*a number"):
        _resume(path)


@pytest.mark.parametrize(
    "line, reason",
    [
        ("{", "not a JSON record"),
        ("[1, 2]", "not a checkpoint record"),
        ('{"n": 5, "stats": []}', "not a checkpoint record"),
        ('{"n": 0, "stats": [], "sha256": ""}', "not an integer >= 1"),
        ('{"n": 2.5, "stats": [], "sha256": ""}', "not an integer >= 1"),
        ('{"n": 5, "stats": [[1.0]], "sha256": ""}', "not numbers of shape"),
        ('{"n": 5, "stats": [[[[1, 2], [3]]]], "sha256": ""}', "not numbers of shape"),
        ("", "an empty line"),
        ("\udcff\udcfe", "not a JSON record"),
    ],
)
def test_unparsable_record_is_an_error(written, line, reason):
    path, lines = written
    text = "\n".join([*lines[:2], line, *lines[2:]]) + "\n"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(ValueError) as exc:
        _resume(path)
    message = str(exc.value)
    assert f"checkpoint={str(path)!r}" in message
    assert "corrupt record on line 3" in message and reason in message


def test_record_with_strings_for_numbers_is_refused(written):
    path, lines = written
    fingerprint = json.loads(lines[0])["fingerprint"]
    record = json.loads(lines[1])
    record["stats"][0][0][0][0] = "0.5"
    _write(path, [lines[0], _forge(fingerprint, record), *lines[2:]])
    with pytest.raises(ValueError, match=r"line 2 \(size 1\).*not numbers"):
        _resume(path)


# ---------------------------------------------------------------------------
# files that are not checkpoints, empty files, truncated headers and records
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes_are_a_clear_error(tmp_path, seed):
    rng = np.random.default_rng(seed)
    path = tmp_path / "random.ckpt"
    path.write_bytes(rng.bytes(4096))
    with pytest.raises(ValueError) as exc:  # not a UnicodeDecodeError
        _resume(path)
    assert not isinstance(exc.value, UnicodeDecodeError)
    assert f"checkpoint={str(path)!r} is not a downsampling checkpoint" in str(
        exc.value
    )


def test_random_bytes_after_a_valid_header_are_a_corrupt_record(written):
    path, lines = written
    junk = np.random.default_rng(0).bytes(300).replace(b"\n", b"")
    path.write_bytes((lines[0] + "\n").encode() + junk + b"\n")
    with pytest.raises(ValueError, match="corrupt record on line 2: it is not a JSON"):
        _resume(path)


def test_incomplete_last_line_that_is_not_a_cut_record_is_an_error(written):
    path, lines = written
    _write(path, [*lines, "garbage"], end="")
    with pytest.raises(ValueError, match="corrupt record on line 6: an incomplete"):
        _resume(path)


@pytest.mark.parametrize("cut", [1, 5, 6, 7, 40, -2])
def test_record_cut_short_by_a_kill_is_dropped(written, full, cut):
    path, lines = written
    _write(path, [*lines[:-1], lines[-1][:cut]], end="")
    resumed = _resume(path)
    pd.testing.assert_frame_equal(resumed, full, check_exact=True)
    # the cut record was replaced by a whole one
    assert path.read_text().splitlines()[:-1] == lines[:-1]
    assert path.read_text().endswith("\n")
    pd.testing.assert_frame_equal(_resume(path), full, check_exact=True)


def _header_cuts():
    line = _checkpoint._header("ab" * 32).rstrip("\n")
    old = json.dumps({"fingerprint": "cd" * 32})
    start = line.index('"fingerprint": "') + len('"fingerprint": "')
    return [
        "",
        "{",
        line[:20],
        line[: start - 1],
        line[:start],
        line[: start + 10],
        line[:-2],
        line,  # the whole header, without its newline
        old[:25],
    ]


@pytest.mark.parametrize("content", _header_cuts())
def test_empty_or_truncated_header_is_started_afresh(tmp_path, full, content):
    path = tmp_path / "cut.ckpt"
    path.write_text(content)
    with pytest.warns(CheckpointWarning, match=re.escape(f"checkpoint={str(path)!r}")):
        resumed = _resume(path)
    pd.testing.assert_frame_equal(resumed, full, check_exact=True)
    # the file is a valid checkpoint again: a second run computes nothing
    lines = path.read_text().splitlines()
    assert len(lines) == 1 + len(KW["sizes"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pd.testing.assert_frame_equal(_resume(path), full, check_exact=True)


def test_checkpoint_warning_is_a_user_warning():
    assert issubclass(CheckpointWarning, UserWarning)


def test_other_checkpoint_format_is_refused(tmp_path):
    path = tmp_path / "old.ckpt"
    path.write_text(json.dumps({"fingerprint": "ab" * 32}) + "\n")
    with pytest.raises(ValueError, match="another format"):
        _resume(path)


def test_header_that_is_not_json_or_lacks_a_fingerprint(tmp_path):
    path = tmp_path / "x.ckpt"
    for text in ("not a checkpoint\n", '{"format": 2}\n', "[]\n", "\n"):
        path.write_text(text)
        with pytest.raises(ValueError, match="is not a downsampling checkpoint"):
            _resume(path)


# ---------------------------------------------------------------------------
# valid checkpoints are never refused, and results are unchanged
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        dict(metrics=metric_names(n_groups=1)),
        dict(
            metrics=metric_names(n_groups=1),
            sampling="hypergeometric",
            sizes=[1, 3, 9, 16],
        ),
        dict(
            metrics=("tpr", "ppv", "mcc", "pt", "f1_original"),
            method="montecarlo",
            n_resamples=500,
            random_state=4,
            sizes=[1, 2, 30],
        ),
        dict(
            metrics=("tpr", "fnr", "mcc", "pt"),
            method="montecarlo",
            n_resamples=20,  # few draws: some scores never defined
            random_state=2,
            sizes=[1, 3, 40],
        ),
    ],
)
def test_valid_checkpoints_resume_to_the_same_table(tmp_path, kw):
    kw = {
        **KW,
        "estimators": {
            "raw": None,
            "eps_1": AdditiveSmoothing(1.0),
            "cps_5": CrossPriorSmoothing(5),
        },
        **kw,
    }
    full = downsampling_experiment(**kw)
    path = tmp_path / "ok.ckpt"
    first = downsampling_experiment(**kw, checkpoint=path)
    pd.testing.assert_frame_equal(first, full, check_exact=True)
    lines = path.read_text().splitlines()
    # keep half of the records: the resumed run loads them and computes the rest
    _write(path, lines[: 1 + len(lines[1:]) // 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resumed = downsampling_experiment(**kw, checkpoint=path)
        again = downsampling_experiment(**kw, checkpoint=path)
    pd.testing.assert_frame_equal(resumed, full, check_exact=True)
    pd.testing.assert_frame_equal(again, full, check_exact=True)


@pytest.mark.parametrize("method", ["exact", "montecarlo"])
def test_results_identical_for_any_n_jobs_and_backend(tmp_path, method):
    kw = {**KW, "sizes": range(1, 25), "method": method, "random_state": 1}
    kw["n_resamples"] = 2_000
    full = downsampling_experiment(**kw, n_jobs=1)
    for i, (backend, n_jobs) in enumerate(
        [("threading", 2), ("loky", 2), ("sequential", 1)]
    ):
        path = tmp_path / f"{i}.ckpt"
        with parallel_config(backend=backend):
            first = downsampling_experiment(**kw, n_jobs=n_jobs, checkpoint=path)
        lines = path.read_text().splitlines()
        _write(path, lines[:9])  # header and 8 records, in completion order
        with parallel_config(backend=backend):
            resumed = downsampling_experiment(**kw, n_jobs=n_jobs, checkpoint=path)
        pd.testing.assert_frame_equal(first, full, check_exact=True)
        pd.testing.assert_frame_equal(resumed, full, check_exact=True)
