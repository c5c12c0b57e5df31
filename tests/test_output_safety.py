"""Output safety: nothing lost (inputs, link targets, half-written files) and
nothing injected (spreadsheet formulas, control and bidirectional characters).

Every file the package writes goes through ``sklearn_smallfair._output``
(``write_atomic``), and every label shown to a person through ``display_label``.
"""

import io
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.audit import audit_predictions
from sklearn_smallfair.cli import main

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FORMULAS = (
    "=cmd|' /C calc'!A0",
    "+SUM(1,1)",
    "-2+3",
    '@HYPERLINK("http://example.com","x")',
    "\tTAB",
    "\rCR",
)
RLO = "\u202e"
# characters that must never reach a displayed output raw
HIDDEN = (
    "\x00",
    "\x07",
    "\x1b",
    "\x7f",
    "\x85",
    "\x9b",
    "\u061c",
    "\u200e",
    "\u200f",
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    RLO,
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
)
SPOOFED = f"invoice{RLO}fdp.exe"  # shows as "invoiceexe.pdf"
# any of them, or a control character other than the newline ending a line
UNSAFE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def run(argv, capsys):
    """Run ``main`` in-process; return (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_usage_error(code, err, *fragments):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("smallfair: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def _report(labels, seed=0, size=12):
    """A small audit whose groups are ``labels`` (``size`` people each)."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.asarray(labels, dtype=object), size)
    y_true = np.tile([1, 0], groups.shape[0] // 2)
    y_pred = np.where(rng.random(groups.shape[0]) < 0.2, 1 - y_true, y_true)
    return audit_predictions(
        y_true, y_pred, sensitive_features=groups, n_resamples=300, random_state=0
    )


def _predictions_csv(path, labels, size=20, sep=","):
    rng = np.random.default_rng(1)
    groups = np.repeat(np.asarray(labels, dtype=object), size)
    y = np.tile([1, 0], groups.shape[0] // 2)
    pred = np.where(rng.random(groups.shape[0]) < 0.2, 1 - y, y)
    pd.DataFrame({"y": y, "pred": pred, "grp": groups}).to_csv(
        path, index=False, sep=sep
    )
    return path


def _audit_argv(csv, *extra):
    return [
        "audit", "--csv", csv, "--target", "y", "--prediction", "pred",
        "--group", "grp", "--tests", "none", *extra,
    ]  # fmt: skip


# ---------------------------------------------------------------------------
# 1. the command never writes over its inputs, nor two outputs on one file
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--out", "--csv-out", "--json-out"])
def test_cli_refuses_to_write_over_its_input(tmp_path, capsys, option):
    csv = _predictions_csv(tmp_path / "ok.csv", ["a", "b"])
    before = csv.read_bytes()
    extra = [option, csv]
    if option != "--out":
        extra += ["--out", tmp_path / "report.html"]
    code, _, err = run(_audit_argv(csv, *extra), capsys)
    assert_usage_error(code, err, option, "--csv", "input")
    assert csv.read_bytes() == before
    assert not (tmp_path / "report.html").exists()  # refused before any work


def test_cli_recognizes_its_input_under_another_name(tmp_path, capsys, monkeypatch):
    csv = _predictions_csv(tmp_path / "ok.csv", ["a", "b"])
    before = csv.read_bytes()
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    hard = tmp_path / "hard.csv"
    os.link(csv, hard)
    link = tmp_path / "link.csv"
    link.symlink_to(csv)
    for out in ("../ok.csv", "./../sub/../ok.csv", hard, link):
        code, _, err = run(_audit_argv("../ok.csv", "--out", out, "--force"), capsys)
        assert_usage_error(code, err, "--out", "--csv")
    assert csv.read_bytes() == before


def test_cli_refuses_two_outputs_naming_one_file(tmp_path, capsys):
    csv = _predictions_csv(tmp_path / "ok.csv", ["a", "b"])
    out = tmp_path / "out.html"
    code, _, err = run(
        _audit_argv(csv, "--out", out, "--json-out", tmp_path / "." / "out.html"),
        capsys,
    )
    assert_usage_error(code, err, "--out", "--json-out", "same file")
    assert not out.exists()
    code, _, err = run(
        _audit_argv(csv, "--csv-out", out, "--json-out", out, "--out", "r.html"),
        capsys,
    )
    assert_usage_error(code, err, "--csv-out", "--json-out")


def test_experiment_refuses_to_write_over_its_dataset(tmp_path, capsys):
    dataset = tmp_path / "groups.csv"
    dataset.write_text("group,TP,FN,FP,TN\nA,27,17,104,169\nB,7,12,38,167\n")
    before = dataset.read_bytes()
    argv = ["experiment", "--dataset", dataset, "--sizes", "5", "--no-progress"]
    code, _, err = run([*argv, "--out", dataset], capsys)
    assert_usage_error(code, err, "--out", "--dataset")
    code, _, err = run([*argv, "--out", tmp_path / "r.csv", "--plot", dataset], capsys)
    assert_usage_error(code, err, "--plot", "--dataset")
    assert dataset.read_bytes() == before
    same = tmp_path / "r.png"
    argv = ["experiment", "--sizes", "5", "--no-progress", "--out", same,
            "--plot", same]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert_usage_error(code, err, "--out", "--plot", "same file")


# ---------------------------------------------------------------------------
# 2. CSV formula injection
# ---------------------------------------------------------------------------


def test_to_csv_quotes_text_cells_that_start_a_formula(tmp_path):
    report = _report([*FORMULAS, "plain", "A-2"])
    path = tmp_path / "groups.csv"
    text = report.to_csv(path)
    assert path.read_text(encoding="utf-8") == text
    cells = pd.read_csv(io.StringIO(text), index_col=0, keep_default_na=False)
    shown = set(cells.index)
    assert "'=cmd|' /C calc'!A0" in shown
    assert "'+SUM(1,1)" in shown and "'-2+3" in shown
    assert '\'@HYPERLINK("http://example.com","x")' in shown
    assert "'\\x09TAB" in shown and "'\\x0dCR" in shown
    assert "plain" in shown and "A-2" in shown  # only a leading sign counts
    for label in shown:
        assert not label.startswith(("=", "+", "-", "@", "\t", "\r")), label
    # numbers stay numbers
    assert cells["n"].dtype.kind == "i" and cells["tpr"].dtype.kind == "f"
    # the labels used by the audit are unchanged
    assert set(report.frame.index) == {*FORMULAS, "plain", "A-2"}


def test_to_csv_escape_formulas_false_writes_labels_as_they_are():
    report = _report(["=1+1", "b"])
    cells = pd.read_csv(io.StringIO(report.to_csv(escape_formulas=False)), index_col=0)
    assert list(cells.index) == ["=1+1", "b"]


def test_csv_safe_quotes_names_but_not_numbers():
    from sklearn_smallfair._output import csv_safe

    frame = pd.DataFrame(
        {"=group": ["-2+3", "b"], "bias": [-0.12, 0.5], "n": [-3, 4]},
        index=pd.Index(["@x", "y"], name="+name"),
    )
    text = csv_safe(frame).to_csv()
    assert text.splitlines() == [
        "'+name,'=group,bias,n",
        "'@x,'-2+3,-0.12,-3",
        "y,b,0.5,4",
    ]
    assert frame.loc["@x", "=group"] == "-2+3"  # the input is not changed


def test_cli_csv_outputs_quote_formulas(tmp_path, capsys):
    csv = _predictions_csv(tmp_path / "in.csv", ['=HYPERLINK("x")', "+1", "ok"])
    table = tmp_path / "groups.csv"
    code, _, err = run(
        _audit_argv(csv, "--out", tmp_path / "r.html", "--csv-out", table), capsys
    )
    assert code == 0, err
    labels = pd.read_csv(table, index_col=0).index.tolist()
    assert labels == ["'+1", '\'=HYPERLINK("x")', "ok"]
    # the experiment's results: labels from the dataset, negative numbers kept
    dataset = tmp_path / "groups_cm.csv"
    dataset.write_text("group,TP,FN,FP,TN\n=1+1,27,17,104,169\nB,7,12,38,167\n")
    results = tmp_path / "results.csv"
    argv = ["experiment", "--dataset", dataset, "--sizes", "5", "10",
            "--metrics", "tpr", "--no-progress", "--out", results]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 0, err
    frame = pd.read_csv(results)
    assert set(frame["group"]) == {"'=1+1", "B"}
    assert frame["bias"].dtype.kind == "f" and (frame["bias"] < 0).any()


# ---------------------------------------------------------------------------
# 3. control and bidirectional characters are shown escaped
# ---------------------------------------------------------------------------


def test_display_label_escapes_hidden_characters():
    from sklearn_smallfair._output import display_label

    for char in HIDDEN:
        shown = display_label(f"a{char}b")
        assert char not in shown and shown.startswith("a\\") and shown.endswith("b")
    assert display_label(SPOOFED) == "invoice\\u202efdp.exe"
    assert display_label("x\x00y\ny") == "x\\x00y\\x0ay"
    assert display_label("Zoë, 東京, عربى") == "Zoë, 東京, عربى"
    assert display_label(np.str_("a")) == "a" and display_label(3) == "3"


def test_hidden_characters_are_escaped_in_html_csv_and_summary(tmp_path):
    labels = [SPOOFED, "nul\x00byte", "esc\x1b[31mred", "c1\x9bx", "isolate\u2067x"]
    report = _report(labels)
    for text in (
        report.to_html(include_plots=False),
        report.to_csv(),
        report.summary(),
        "\n".join(report.findings()),
    ):
        assert not UNSAFE.search(text), UNSAFE.search(text)
        assert "invoice\\u202efdp.exe" in text
        assert "nul\\x00byte" in text
    page = report.to_html(include_plots=False)
    assert "esc\\x1b[31mred" in page and "isolate\\u2067x" in page
    # the audit's own labels (lookups, JSON) keep their exact value
    assert report.frame.loc[SPOOFED, "n"] == 12
    payload = json.loads(report.to_json())
    assert {row["group"] for row in payload["groups"]} == set(labels)
    assert not UNSAFE.search(report.to_json())  # JSON writes escapes itself


def test_hidden_characters_in_the_title_and_the_plot():
    report = _report([SPOOFED, "b"])
    report.title = f"audit {RLO}1202"
    assert "audit \\u202e1202" in report.summary()
    page = report.to_html(include_plots=False)
    assert RLO not in page and "audit \\u202e1202" in page
    fig = report.plot()
    try:
        ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    finally:
        plt.close(fig)
    assert sorted(ticks) == ["b (n=12)", "invoice\\u202efdp.exe (n=12)"]


def test_dollar_labels_are_not_mathtext():
    # "$...$" is mathtext to matplotlib: a label such as "$\\frac$" failed to draw
    report = _report(["$\\frac$", "$x^2$ cost"])
    fig = report.plot()
    try:
        fig.canvas.draw()
    finally:
        plt.close(fig)
    assert "data:image/png;base64," in report.to_html()


def test_cli_output_escapes_hidden_characters(tmp_path, capsys):
    csv = _predictions_csv(tmp_path / "in.csv", [SPOOFED, "bell\x07"])
    table = tmp_path / "groups.csv"
    page = tmp_path / "report.html"
    code, out, err = run(_audit_argv(csv, "--out", page, "--csv-out", table), capsys)
    assert code == 0, err
    assert not UNSAFE.search(out) and "invoice\\u202efdp.exe" in out
    for path in (page, table):
        text = path.read_text(encoding="utf-8")
        assert not UNSAFE.search(text) and "invoice\\u202efdp.exe" in text
    # error messages too
    code, _, err = run(
        _audit_argv(csv, "--out", f"{tmp_path}/no{RLO}dir/r.html"), capsys
    )
    assert code == 1 and RLO not in err and "\\u202e" in err


# ---------------------------------------------------------------------------
# 4. one writer: checked destination, links refused, whole files
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["to_html", "to_csv", "to_json"])
def test_report_writers_refuse_empty_path_and_directory(tmp_path, method):
    report = _report(["a", "b"])
    write = getattr(report, method)
    with pytest.raises(ValueError, match="path is empty"):
        write("")
    with pytest.raises(ValueError, match=r"path .* is a directory"):
        write(tmp_path)
    with pytest.raises(ValueError, match=r"path .* ends with a path separator"):
        write(f"{tmp_path}/newdir/")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("method", ["to_html", "to_csv", "to_json"])
def test_report_writers_refuse_symlinks_unless_forced(tmp_path, method):
    report = _report(["a", "b"])
    target = tmp_path / "precious.txt"
    target.write_text("precious")
    link = tmp_path / "report.out"
    link.symlink_to(target)
    write = getattr(report, method)
    with pytest.raises(ValueError, match="symbolic link"):
        write(link)
    assert target.read_text() == "precious" and link.is_symlink()
    text = write(link, force=True)
    assert target.read_text(encoding="utf-8") == text
    assert link.is_symlink()  # written through the link, which stays
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.txt", "report.out"]


def test_write_atomic_failure_keeps_the_old_file(tmp_path):
    from sklearn_smallfair._output import write_atomic

    path = tmp_path / "report.html"
    path.write_text("old report")

    def fails_halfway(fh):
        fh.write(b"<html>half of the new rep")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        write_atomic(path, fails_halfway, what="the report")
    assert path.read_text() == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temp file
    written = write_atomic(path, lambda fh: fh.write(b"new report"))
    assert written == path and path.read_text() == "new report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_write_atomic_killed_midway_keeps_the_old_file(tmp_path):
    import sklearn_smallfair._output as output

    path = tmp_path / "report.html"
    path.write_text("old report")
    # the writer alone (it imports only numpy), killed while writing
    code = (
        "import importlib.util, os, signal, sys\n"
        "spec = importlib.util.spec_from_file_location('out', sys.argv[1])\n"
        "out = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(out)\n"
        "def killed(fh):\n"
        "    fh.write(b'half of the new')\n"
        "    fh.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "out.write_atomic(sys.argv[2], killed)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, output.__file__, str(path)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert path.read_text() == "old report"


def test_write_atomic_permissions_and_special_files(tmp_path):
    from sklearn_smallfair._output import write_atomic

    new = write_atomic(tmp_path / "new.txt", "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~umask
    old = tmp_path / "old.txt"
    old.write_text("old")
    old.chmod(0o640)
    write_atomic(old, b"new")
    assert old.read_text() == "new" and stat.S_IMODE(old.stat().st_mode) == 0o640
    if os.path.exists(os.devnull):  # a device is written to, never replaced
        write_atomic(os.devnull, "nothing")
        assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_atomic(tmp_path / "no" / "file.txt", "x", what="the notes")
    with pytest.raises(TypeError, match="path must be a str or a path-like"):
        write_atomic(3, "x")
    with pytest.raises(ValueError, match="out is empty"):
        write_atomic("", "x", name="out")


def test_cli_refuses_symlinked_outputs_unless_forced(tmp_path, capsys):
    csv = _predictions_csv(tmp_path / "in.csv", ["a", "b"])
    target = tmp_path / "precious.txt"
    target.write_text("precious")
    link = tmp_path / "report.html"
    link.symlink_to(target)
    for option in ("--out", "--csv-out", "--json-out"):
        extra = (
            [option, link] if option == "--out" else [option, link, "--out", "r.html"]
        )
        code, _, err = run(_audit_argv(csv, *extra), capsys)
        assert_usage_error(code, err, option, "symbolic link", "--force")
        assert target.read_text() == "precious"
    code, _, err = run(["demo", "--out", link], capsys)
    assert_usage_error(code, err, "--out", "symbolic link")
    code, _, err = run(
        ["experiment", "--sizes", "5", "--no-progress", "--out", link], capsys
    )
    assert_usage_error(code, err, "--out", "symbolic link")
    assert target.read_text() == "precious"
    code, _, err = run(_audit_argv(csv, "--out", link, "--force"), capsys)
    assert code == 0, err
    assert link.is_symlink() and "<table" in target.read_text(encoding="utf-8")
    code, _, err = run(_audit_argv(csv, "--out", ""), capsys)
    assert_usage_error(code, err, "--out is empty")


def test_cli_force_option_in_help(capsys):
    for command in ("demo", "audit", "experiment"):
        code, out, _ = run([command, "--help"], capsys)
        assert code == 0 and "--force" in out
        assert "symbolic link" in " ".join(out.split())


def test_cli_plot_written_whole(tmp_path, capsys):
    results, plot = tmp_path / "r.csv", tmp_path / "curves.svg"
    plot.write_text("old plot")
    argv = ["experiment", "--sizes", "5", "10", "--metrics", "tpr", "--no-progress",
            "--out", results, "--plot", plot]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 0, err
    assert plot.read_text(encoding="utf-8").lstrip().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curves.svg", "r.csv"]


# ---------------------------------------------------------------------------
# 5. --sep
# ---------------------------------------------------------------------------


def test_cli_sep_must_be_one_character(tmp_path, capsys):
    csv = _predictions_csv(tmp_path / "in.csv", ["a", "b"])
    out = ["--out", tmp_path / "r.html"]
    for sep in ("", ";;", "\n", '"'):
        code, _, err = run(_audit_argv(csv, "--sep", sep, *out), capsys)
        assert_usage_error(code, err, "--sep")
    tsv = _predictions_csv(tmp_path / "in.tsv", ["a", "b"], sep="\t")
    for sep in ("\\t", "\t", "tab"):
        code, _, err = run(_audit_argv(tsv, "--sep", sep, *out), capsys)
        assert code == 0, err
    semi = _predictions_csv(tmp_path / "in.semi", ["a", "b"], sep=";")
    code, _, err = run(_audit_argv(semi, "--sep", ";", *out), capsys)
    assert code == 0, err


# ---------------------------------------------------------------------------
# 6. SIGTERM stops the workers, like Ctrl-C
# ---------------------------------------------------------------------------


def _children(pid):
    """Live (not zombie) descendants of ``pid``."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            kids = psutil.Process(pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        out = []
        for kid in kids:
            try:
                if kid.status() != psutil.STATUS_ZOMBIE:
                    out.append(kid.pid)
            except psutil.NoSuchProcess:
                pass
        return out
    parents = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        frontier += kids
    return found


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow  # a few seconds: a subprocess starts two workers
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")
def test_sigterm_stops_the_experiment_workers(tmp_path):
    argv = [sys.executable, "-m", "sklearn_smallfair", "experiment", "--jobs", "2",
            "--method", "montecarlo", "--n-resamples", "5000000", "--sizes", "5:150",
            "--no-progress", "--out", str(tmp_path / "r.csv")]  # fmt: skip
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    workers = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            workers = _children(proc.pid)
            if len(workers) >= 3:  # two workers and loky's resource tracker
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        assert len(workers) >= 3, workers
        time.sleep(0.5)  # the workers are computing
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 143, err
        assert "smallfair: terminated" in err and "Traceback" not in err
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.1)
        assert not [p for p in workers if _alive(p)]
        assert not (tmp_path / "r.csv").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_main_restores_the_sigterm_handler(tmp_path, capsys):
    def handler(signum, frame):  # pragma: no cover - never called
        pass

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        code, _, err = run(
            ["experiment", "--sizes", "5", "--metrics", "tpr", "--no-progress",
             "--out", tmp_path / "r.csv"],
            capsys,
        )  # fmt: skip
        assert code == 0, err
        assert signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, previous)
