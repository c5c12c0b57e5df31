"""The checkpoint file of a downsampling experiment.

One JSON line per finished size, after a header with the fingerprint of the
arguments; each record carries the SHA-256 checksum of its content.
"""

import hashlib
import json
import math
import os
import warnings

import numpy as np

from .._validation import format_label
from ..exceptions import CheckpointWarning

_CHECKPOINT_FORMAT = 2


def _fingerprint(
    labels, counts, refs, metrics, estimators, method, sampling, n_resamples, base_seed
):
    spec = {
        "format": _CHECKPOINT_FORMAT,
        "groups": [format_label(g) for g in labels],
        "counts": np.asarray(counts).tolist(),
        "reference": None if refs is None else np.asarray(refs).tolist(),
        "metrics": [m.name for m in metrics],
        "estimators": [
            [
                name,
                None if est is None else type(est).__name__,
                None if est is None else repr(sorted(est.get_params().items())),
            ]
            for name, est in estimators.items()
        ],
        "method": method,
        "sampling": sampling,
    }
    if method == "montecarlo":
        spec["n_resamples"] = int(n_resamples)
        spec["seed"] = [
            str(base_seed.entropy),
            list(base_seed.spawn_key),
            base_seed.pool_size,
        ]
    blob = json.dumps(spec, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


_CHECKPOINT_KIND = "sklearn_smallfair.downsampling_experiment"
_HEX = frozenset(b"0123456789abcdef")


def _header(fingerprint):
    return (
        json.dumps(
            {
                "checkpoint": _CHECKPOINT_KIND,
                "format": _CHECKPOINT_FORMAT,
                "fingerprint": fingerprint,
            }
        )
        + "\n"
    )


#: Header lines that a run killed while creating the file may have cut short:
#: this format's and the previous one's (``{"fingerprint": ...}``).
_HEADER_TEMPLATES = (
    _header("0" * 64).encode(),
    (json.dumps({"fingerprint": "0" * 64}) + "\n").encode(),
)


def _is_cut_header(data):
    """Whether ``data`` (no newline) is empty or the start of a header line."""
    for template in _HEADER_TEMPLATES:
        start = template.index(b'"fingerprint": "') + len(b'"fingerprint": "')
        if len(data) < len(template) and all(
            (c in _HEX) if start <= i < start + 64 else c == template[i]
            for i, c in enumerate(data)
        ):
            return True
    return False


def _is_cut_record(data):
    """Whether ``data`` (no newline) can be the start of a record cut by a kill."""
    start = b'{"n": '
    return all(32 <= c < 127 for c in data) and (
        start.startswith(data) or data.startswith(start)
    )


def _nan_to_none(values):
    if isinstance(values, list):
        return [_nan_to_none(v) for v in values]
    return None if values != values else values


def _checksum(fingerprint, n, stats):
    """SHA-256 of a record's canonical content, bound to the run's fingerprint."""
    body = json.dumps({"n": n, "stats": stats}, separators=(",", ":"))
    return hashlib.sha256(f"{fingerprint}\n{body}".encode()).hexdigest()


class _CorruptRecord(Exception):
    def __init__(self, reason, n=None):
        super().__init__(reason)
        self.reason, self.n = reason, n


class _Checkpoint:
    """Append-only record of finished sizes; survives a kill at any point.

    Line 1 is a header with the fingerprint of the arguments; each further line
    records one size: ``{"n": n, "stats": [...], "sha256": checksum}`` with the
    statistics nested as ``(group, estimator, metric, statistic)``, ``null`` for
    an undefined one, and the SHA-256 of the canonical ``{"n", "stats"}`` content
    and of the fingerprint. Lines are appended whole and synced; the header is
    written to a temporary file renamed into place.
    """

    def __init__(self, path, fingerprint, shape, labels, finite_targets):
        self.path = os.fspath(path)
        self.fingerprint = fingerprint
        self.shape = shape
        self.labels = labels  # groups, estimators, metrics, statistics
        self.finite_targets = finite_targets
        self.done = {}
        if os.path.exists(self.path):
            self._load()
        else:
            self._create()

    def _create(self):
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(_header(self.fingerprint))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    def _error(self, message):
        return ValueError(f"checkpoint={self.path!r} {message}")

    def _load(self):
        with open(self.path, "rb") as fh:
            data = fh.read()
        if b"\n" not in data:
            if not _is_cut_header(data):
                raise self._error(
                    "is not a downsampling checkpoint file (line 1 is not a "
                    "checkpoint header); pass a new path or delete the file."
                )
            warnings.warn(
                f"checkpoint={self.path!r} is "
                + ("empty" if not data else "cut short inside its header")
                + " (a run killed while creating it?); it records nothing, so it "
                "is started afresh.",
                CheckpointWarning,
                stacklevel=4,
            )
            self._create()
            return
        *lines, tail = data.split(b"\n")
        self._check_header(lines[0])
        seen = {}
        for number, raw in enumerate(lines[1:], start=2):
            try:
                n, stats = self._record(raw)
            except _CorruptRecord as exc:
                size = "" if exc.n is None else f" (size {exc.n})"
                raise self._error(
                    f"has a corrupt record on line {number}{size}: {exc.reason}. The "
                    f"file was modified or damaged: delete that line (its size is "
                    f"then recomputed), or pass a new path (or delete the file) to "
                    f"start afresh."
                ) from None
            if n in seen:
                raise self._error(
                    f"records size {n} twice, on lines {seen[n]} and {number}; a run "
                    f"records each size once, so the file was edited or written by "
                    f"two runs at once. Delete one of the lines (or the file) and "
                    f"rerun."
                )
            seen[n] = number
            self.done[n] = stats
        if tail:
            if not _is_cut_record(tail):
                raise self._error(
                    f"has a corrupt record on line {len(lines) + 1}: an incomplete "
                    f"last line that is not a record cut short. The file was modified "
                    f"or damaged: delete that line, or pass a new path (or delete the "
                    f"file) to start afresh."
                )
            # a record cut short by a kill: drop it before appending
            os.truncate(self.path, len(data) - len(tail))

    def _check_header(self, raw):
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            header = None
        if not isinstance(header, dict) or not isinstance(
            header.get("fingerprint"), str
        ):
            raise self._error(
                "is not a downsampling checkpoint file (line 1 is not a checkpoint "
                "header); pass a new path or delete the file."
            )
        if (
            header.get("checkpoint") != _CHECKPOINT_KIND
            or header.get("format") != _CHECKPOINT_FORMAT
        ):
            raise self._error(
                f"is a downsampling checkpoint in another format "
                f"({header.get('format', 1)!r}, this version writes "
                f"{_CHECKPOINT_FORMAT}); pass a new path or delete the file."
            )
        if header["fingerprint"] != self.fingerprint:
            raise self._error(
                "was written by a run with other arguments (data, metrics, "
                "estimators, method, sampling, n_resamples or random_state); rerun "
                "with the same arguments, or pass a new path (or delete the file) "
                "to start afresh."
            )

    def _record(self, raw):
        """``(n, stats)`` of one record line, or :class:`_CorruptRecord`."""
        if not raw.strip():
            raise _CorruptRecord("an empty line")
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise _CorruptRecord("it is not a JSON record") from None
        if not isinstance(record, dict) or set(record) != {"n", "stats", "sha256"}:
            raise _CorruptRecord("it is not a checkpoint record")
        n = record["n"]
        if type(n) is not int or n < 1:
            raise _CorruptRecord("its size is not an integer >= 1")
        stats = record["stats"]
        try:
            values = np.array(stats, dtype=object)
            ok = values.shape == self.shape and all(
                v is None or (type(v) in (int, float)) for v in values.flat
            )
        except ValueError:  # ragged nesting
            ok = False
        if not ok:
            raise _CorruptRecord(
                f"its statistics are not numbers of shape {self.shape} (groups, "
                f"estimators, metrics, statistics)",
                n,
            )
        for index, v in np.ndenumerate(values):
            if isinstance(v, float) and not math.isfinite(v):
                raise _CorruptRecord(
                    f"{self._describe(index)} is {v!r}, a non-finite value; a run "
                    f"writes finite numbers, and null for an undefined statistic",
                    n,
                )
        if record["sha256"] != _checksum(self.fingerprint, n, stats):
            raise _CorruptRecord(
                "checksum mismatch (the record was edited, damaged, or copied from "
                "another checkpoint)",
                n,
            )
        try:
            out = np.array(_nan_to_none(stats), dtype=np.float64)
        except OverflowError:
            raise _CorruptRecord("it holds a number too large for a float", n) from None
        self._check_undefined(out, n)
        return n, out

    def _describe(self, index):
        groups, estimators, metrics, stats = self.labels
        g, e, m, k = index
        return (
            f"{stats[k]} of group {format_label(groups[g])}, metric "
            f"{metrics[m]!r}, estimator {estimators[e]!r}"
        )

    def _check_undefined(self, stats, n):
        """The undefined (null) statistics are those a run leaves undefined:
        ``p_undefined`` never; ``variance`` when the score is never defined;
        ``mse``, ``bias`` (and ``mse_se``) also when the target is undefined."""
        undefined = np.isnan(stats)
        expected = np.zeros_like(undefined)
        expected[..., 2] = undefined[..., 2]
        no_target = ~self.finite_targets[:, None, :]
        for k in (0, 1, 4)[: 3 if stats.shape[-1] == 5 else 2]:
            expected[..., k] = undefined[..., 2] | no_target
        wrong = np.argwhere(undefined != expected)
        if wrong.size:
            index = tuple(wrong[0])
            state = "undefined (null)" if undefined[index] else "a number"
            raise _CorruptRecord(
                f"{self._describe(index)} is {state}, which no run writes there",
                n,
            )

    def add(self, n, stats):
        values = _nan_to_none(stats.tolist())
        line = json.dumps(
            {
                "n": int(n),
                "stats": values,
                "sha256": _checksum(self.fingerprint, int(n), values),
            },
            allow_nan=False,
        )
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self.done[int(n)] = stats
