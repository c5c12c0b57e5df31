"""Output of the package: safe display of labels and the one writer of files.

Every file the package writes for its user (the audit's HTML, CSV and JSON, the
command's results and figures) goes through :func:`write_atomic`, and every label
shown to a person (HTML, CSV, terminal, figures) goes through
:func:`display_label`:

- :func:`display_label` shows control characters (C0 with NUL, tab and newline;
  DEL; C1) and the Unicode bidirectional formatting characters as visible
  escapes (``\\x00``, ``\\u202e``), so that a label cannot hide or reorder text
  on screen;
- :func:`csv_text` and :func:`csv_safe` also put a single quote before text
  cells that a spreadsheet would run as a formula (OWASP's CSV injection rule);
- :func:`json_text` writes strict JSON that keeps every value (floats with all
  their digits, ``null`` for a non-finite number, text for labels JSON has no
  type for);
- :func:`write_atomic` writes to a temporary file of the destination's folder and
  renames it over the destination, so that a failed or killed write leaves the
  old file or the new one, never part of one; it refuses an empty path, a
  folder, and (unless ``force=True``) a symbolic link.

The labels used for computation and lookups are never changed: only what is
shown is escaped.
"""

import datetime
import json
import math
import numbers
import os
import re
import secrets
import stat
from contextlib import suppress
from pathlib import Path

import numpy as np

__all__ = [
    "check_destination",
    "csv_safe",
    "csv_text",
    "cut_label",
    "display_frame",
    "display_label",
    "json_text",
    "jsonable",
    "stage",
    "write_atomic",
]

# C0 controls (NUL ... US, with tab, newline and carriage return), DEL, C1
# controls, the bidirectional marks (LRM, RLM, ALM), embeddings and overrides
# (LRE, RLE, PDF, LRO, RLO) and isolates (LRI, RLI, FSI, PDI), and the line and
# paragraph separators, which break lines like a newline.
# Also the invisible formatting characters: the soft hyphen, the Mongolian vowel
# separator, zero-width spaces and joiners, the word joiner and invisible
# operators, the deprecated format characters and the byte-order mark.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028\u2029"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]"
)
# white space at either end of a label, which a table would not show
_EDGE_SPACE = re.compile(r"^\s+|\s+$")
_SPACE = re.compile(r"\s")
# a cell starting with one of these is a formula to spreadsheet programs
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def jsonable(value):
    """``value`` as a JSON value that keeps it exactly where JSON can.

    Floats keep all their digits (JSON numbers round-trip a float), and a
    non-finite float becomes ``null``; integers of any size stay integers;
    booleans, strings and ``None`` are themselves; numpy scalars are read as
    their Python values; tuples and arrays become lists; dates and times become
    ISO 8601 text; a missing value (``pd.NA``, ``NaT``) is ``null``. Anything else
    (bytes, objects) is written as its ``str``.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, (tuple, list, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    import pandas as pd

    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (datetime.date, datetime.time, pd.Timestamp)):
        return value.isoformat()
    if isinstance(value, (pd.Timedelta, datetime.timedelta)):
        return pd.Timedelta(value).isoformat()
    return str(value)


def json_text(data, *, indent=2):
    """``data`` as strict JSON text that keeps its values (:func:`jsonable`).

    The one writer of the package's JSON: no ``NaN`` or ``Infinity`` (a strict
    parser refuses them; they are written ``null``), floats with every digit.

    Parameters
    ----------
    data : object
        Dicts, lists and scalars (numpy and pandas values too).
    indent : int or None, default=2
        Indentation of the text.

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> print(json_text({"p": 2.1e-12, "q": np.nan, "n": np.int64(3)}, indent=None))
    {"p": 2.1e-12, "q": null, "n": 3}
    """
    return json.dumps(jsonable(data), indent=indent, allow_nan=False)


def _escape_char(match):
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


#: Characters of a label shown on a page or a terminal; a longer label is cut
#: there (the CSV and JSON files keep it whole).
LABEL_LIMIT = 1000


def cut_label(value, limit=LABEL_LIMIT):
    """``str(value)``, cut after ``limit`` characters with ``"… (+N characters)"``.

    Parameters
    ----------
    value : object
        The label.
    limit : int or None, default=LABEL_LIMIT
        The most characters kept; ``None`` keeps every one.

    Returns
    -------
    str

    Examples
    --------
    >>> cut_label("x" * 1005, limit=10)
    'xxxxxxxxxx… (+995 characters)'
    """
    if isinstance(value, np.generic):
        value = value.item()
    text = str(value)
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}\u2026 (+{len(text) - limit:,} characters)"


def display_label(value, *, limit=None):
    """A label as text to show, with invisible and reordering characters escaped.

    Control characters (C0, including NUL, tab and newline; DEL; C1), the
    Unicode bidirectional marks, embeddings, overrides and isolates (U+200E,
    U+200F, U+061C, U+202A to U+202E, U+2066 to U+2069) and the line and
    paragraph separators (U+2028, U+2029), the invisible formatting characters
    (the soft hyphen U+00AD, zero-width spaces and joiners U+200B to U+200D, the
    word joiner and invisible operators U+2060 to U+2064, the byte-order mark
    U+FEFF) and white space at either end are replaced by their escapes
    (``\\x00``, ``\\u202e``, ``\\x20``), so that ``"A"``, ``"A "`` and
    ``"A\\u200b"`` read as three labels; everything else is kept, so ordinary
    non-ASCII labels read as written. A numpy scalar shows as its value.

    A label longer than ``limit`` characters is cut after ``limit`` of them
    and ends with ``"… (+N characters)"``, so that one huge label cannot fill a
    page or stall its drawing; the files meant for programs (CSV, JSON) keep
    labels whole.

    Parameters
    ----------
    value : object
        The label (any type; ``str`` of it is shown).
    limit : int or None, default=None
        The most characters shown; ``None`` shows every one. The pages and
        the terminal show labels cut at ``LABEL_LIMIT`` (1,000) characters.

    Returns
    -------
    str

    Examples
    --------
    >>> print(display_label("admin\\u202egnp.exe"))
    admin\\u202egnp.exe
    >>> print(display_label("a\\x00b\\tc"), display_label("Zoë"))
    a\\x00b\\x09c Zoë
    >>> print(display_label("A "), display_label("A\\u200b"))
    A\\x20 A\\u200b
    >>> print(display_label("x" * 1005, limit=10))
    xxxxxxxxxx… (+995 characters)
    """
    if isinstance(value, np.generic):
        value = value.item()
    text = str(value)
    cut = ""
    if limit is not None and len(text) > limit:
        cut = cut_label(text, limit)[limit:]
        text = text[:limit]
    text = _UNSAFE.sub(_escape_char, text)
    text = _EDGE_SPACE.sub(lambda m: _SPACE.sub(_escape_char, m.group()), text)
    return text + cut


def csv_text(value, *, escape_formulas=True):
    """A text cell of a CSV file: :func:`display_label`, formulas neutralized.

    With ``escape_formulas``, a cell that starts with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return gets a leading single quote, which
    spreadsheet programs read as "this is text" (OWASP's rule against CSV
    injection). Only text goes through here: numbers are written as numbers.

    Parameters
    ----------
    value : object
        The text (a label or a name).
    escape_formulas : bool, default=True
        Quote cells that a spreadsheet would run as a formula.

    Returns
    -------
    str

    Examples
    --------
    >>> csv_text("=cmd|' /C calc'!A0"), csv_text("-2+3"), csv_text("A-2")
    ("'=cmd|' /C calc'!A0", "'-2+3", 'A-2')
    >>> csv_text("=1+1", escape_formulas=False)
    '=1+1'
    """
    raw = value.item() if isinstance(value, np.generic) else value
    text = display_label(raw)
    if escape_formulas and (
        text.startswith(_FORMULA_START) or str(raw).startswith(_FORMULA_START)
    ):
        text = "'" + text
    return text


def _map_cell(value, func):
    if isinstance(value, (str, np.str_)):
        return func(value)
    if isinstance(value, tuple):
        return tuple(_map_cell(v, func) for v in value)
    return value


def _map_index(index, func):
    mapped = index.map(lambda v: _map_cell(v, func))
    return mapped.set_names([_map_cell(n, func) for n in index.names])


def _map_text(frame, func):
    """A copy of ``frame`` with ``func`` applied to every text value."""
    out = frame.copy()
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if column.dtype.kind in "biufcmM":
            continue
        out.isetitem(position, column.map(lambda v: _map_cell(v, func)).astype(object))
    out.index = _map_index(out.index, func)
    out.columns = _map_index(out.columns, func)
    return out


def display_frame(frame):
    """A copy of ``frame`` whose text (cells, labels, names) is displayable.

    Every text value goes through :func:`display_label`; numbers are left as
    they are.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.

    Returns
    -------
    pandas.DataFrame
    """
    return _map_text(frame, display_label)


def csv_safe(frame, *, escape_formulas=True):
    """A copy of ``frame`` whose text is safe to write as CSV.

    Every text value (cells, index labels, column and index names) goes
    through :func:`csv_text`; numbers, booleans and missing values are left as
    they are, so ``-0.12`` stays a number.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    escape_formulas : bool, default=True
        Quote text cells that a spreadsheet would run as a formula.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"group": ["=1+1", "B"], "bias": [-0.12, 0.5]})
    >>> print(csv_safe(frame).to_csv(index=False), end="")
    group,bias
    '=1+1,-0.12
    B,0.5
    """
    return _map_text(frame, lambda v: csv_text(v, escape_formulas=escape_formulas))


# ---------------------------------------------------------------------------
# the writer
# ---------------------------------------------------------------------------


def check_destination(path, *, name="path", force=False):
    """Check the destination of a write before any work; return it as a Path.

    The checks of :func:`write_atomic`, to call early (before a long
    computation) so that a wrong path fails at once.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    name : str, default="path"
        The name of the argument holding ``path``, for error messages.
    force : bool, default=False
        Accept a symbolic link (the returned path is then the file it points
        to).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    TypeError
        When ``path`` is not a str or path-like.
    ValueError
        When ``path`` is empty, a directory, or a symbolic link without
        ``force``.
    """
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"{name} must be a str or a path-like object, got {type(path).__name__}."
        )
    text = os.fspath(path)
    if not text:
        raise ValueError(f"{name} is empty; pass the name of the file to write.")
    dest = Path(text)
    if os.path.islink(dest):
        if not force:
            raise ValueError(
                f"{name} {display_label(text)} is a symbolic link (to "
                f"{display_label(os.readlink(dest))}); refusing to write through "
                f"it. Remove the link, choose another file, or pass force=True "
                f"to write to the file it points to."
            )
        dest = Path(os.path.realpath(dest))
    if dest.is_dir():
        raise ValueError(
            f"{name} {display_label(text)} is a directory; pass the name of a file "
            f"in it."
        )
    if text.endswith((os.sep, "/")):
        raise ValueError(
            f"{name} {display_label(text)} ends with a path separator, as a "
            f"directory would; pass the name of a file."
        )
    return dest


def write_atomic(path, data, *, what="output", force=False, name="path"):
    """Write a whole file at once: the old file or the new one, never part of one.

    ``data`` is written to a temporary file in the destination's folder, flushed
    to disk, and renamed over the destination (``os.replace``). If writing fails
    or the process is killed, the destination keeps its old content and the
    temporary file is removed (or, if the process was killed, left as a hidden
    ``.sf*.tmp`` file). A new file gets the usual permissions (``0o666``
    less the umask); a replaced file keeps its own. A destination that is a
    device or a pipe (``/dev/null``) is written to directly.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    data : str, bytes or callable
        The content: text (written as UTF-8), bytes, or a function called with
        a binary file object to write to (e.g. ``lambda fh: fig.savefig(fh,
        format="png")``).
    what : str, default="output"
        What is written, for error messages (e.g. ``"the HTML report"``).
    force : bool, default=False
        Write through a symbolic link at ``path`` to the file it points to;
        by default a link is refused, so that a planted link cannot redirect
        the write to another file.
    name : str, default="path"
        The name of the argument holding ``path``, for error messages.

    Returns
    -------
    pathlib.Path
        The absolute path of the file written.

    Raises
    ------
    ValueError
        When ``path`` is empty, a directory, or a symbolic link without
        ``force``.
    OSError
        When the file cannot be written (e.g. its folder does not exist).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_atomic(folder / "notes.txt", "first", what="the notes").name
    'notes.txt'
    >>> _ = write_atomic(folder / "notes.txt", lambda fh: fh.write(b"second"))
    >>> (folder / "notes.txt").read_text(), sorted(p.name for p in folder.iterdir())
    ('second', ['notes.txt'])
    >>> write_atomic("", "text", name="out")
    Traceback (most recent call last):
    ...
    ValueError: out is empty; pass the name of the file to write.
    """
    if not (callable(data) or isinstance(data, (str, bytes, bytearray))):
        raise TypeError(
            f"data must be str, bytes or a callable writing to a binary file, got "
            f"{type(data).__name__}."
        )
    dest = check_destination(path, name=name, force=force)
    folder = dest.parent
    try:
        info = os.stat(dest)
    except OSError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        # a device or a pipe: it cannot be replaced, only written to
        with open(dest, "wb") as fh:
            _put(fh, data)
        return dest.absolute()
    if info is not None and not os.access(dest, os.W_OK):
        # replacing would succeed where writing fails: keep read-only files
        raise PermissionError(
            13, f"cannot write {what}: {display_label(dest)} is read-only"
        )
    if not folder.is_dir():
        raise FileNotFoundError(
            2, f"cannot write {what}: folder {display_label(folder)} does not exist"
        )
    tmp = stage(dest, data, info)
    try:
        os.replace(tmp, dest)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    return dest.absolute()


def stage(dest, data, info=None):
    """Write ``data`` whole to a new temporary file beside ``dest``; return its path.

    The temporary file has a short hidden name in ``dest``'s folder, is synced
    to disk, and takes the permissions of the file it will replace (``info``,
    its ``os.stat``, or ``None`` for a new file); renaming it over ``dest`` is
    the caller's. On failure no temporary file is left.

    Parameters
    ----------
    dest : pathlib.Path
        The file the temporary will replace.
    data : str, bytes or callable
        The content, as for :func:`write_atomic`.
    info : os.stat_result, default=None
        The destination's status, when it exists.

    Returns
    -------
    pathlib.Path
        The temporary file.
    """
    fd, tmp = _temporary(dest.parent, dest.name)
    try:
        with os.fdopen(fd, "wb") as fh:
            _put(fh, data)
            fh.flush()
            os.fsync(fh.fileno())
        if info is not None:
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _temporary(folder, name):
    """Create a new hidden file in ``folder``; return its descriptor and path.

    Its name is short (``.sfXXXXXXXXXXXX.tmp``) whatever ``name`` is, so that a
    destination whose name is as long as the file system allows is written.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        # short, so that any name the folder takes can be written
        tmp = folder / f".sf{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file in {folder}")


def _put(fh, data):
    if callable(data):
        data(fh)
    elif isinstance(data, str):
        fh.write(data.encode("utf-8"))
    else:
        fh.write(data)
