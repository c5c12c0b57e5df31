"""The HTML audit report in a real browser (headless Chromium).

The report is opened as a user would open it: tables must render, every embedded
image must decode, and group names made of HTML and JavaScript must show up as
text without running. The summary matrix, its orders and its folds are checked
in the DOM, the print stylesheet is checked for tables wider than a printed page,
``--print-to-pdf`` must give a PDF, and screenshots at 2, 8 and 60 groups are
taken (under pytest's ``tmp_path``, and copied to the folder named by
``SMALLFAIR_BROWSER_ARTIFACTS`` when it is set). The tests are skipped when no
Chromium binary is found, unless ``SMALLFAIR_REQUIRE_BROWSER=1`` is set, in
which case a missing browser is a failure.
"""

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from sklearn_smallfair.audit import audit_predictions

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
REQUIRE_ENV = "SMALLFAIR_REQUIRE_BROWSER"
ARTIFACTS_ENV = "SMALLFAIR_BROWSER_ARTIFACTS"
TIMEOUT = 60  # seconds per browser run

HOSTILE = (
    "<script>document.title='pwned'</script>",
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">",
    '"><svg onload=alert(1)>',
)
HOSTILE_TITLE = "<script>document.title='pwned'</script> audit"
# labels that hide or reorder text, and a spreadsheet formula: (label, shown as)
SPOOFING = (
    ("invoice\u202efdp.exe", "invoice\\u202efdp.exe"),
    ("nul\x00byte", "nul\\x00byte"),
    ("isolate\u2067x\u2069", "isolate\\u2067x\\u2069"),
    ("=cmd|' /C calc'!A0", "=cmd|' /C calc'!A0"),
)

CSP_META = re.compile(
    r"<meta\s+http-equiv=[\"']Content-Security-Policy[\"'][^>]*>", re.IGNORECASE
)
# The checker's copy keeps the original policy and additionally allows inline
# scripts: the checker can run, and so could any markup that escaped escaping.
RELAXED_CSP = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
)

# Runs first (in <head>): records calls of alert/confirm/prompt instead of
# opening dialogs.
SENTINEL = """<script id="smallfair-sentinel">
window.__dialogs = [];
["alert", "confirm", "prompt"].forEach(function (name) {
  window[name] = function (msg) { window.__dialogs.push(name + ":" + msg); };
});
</script>"""

# Runs last (before </body>), after the load event: writes its findings as JSON
# into <pre id="result">, which --dump-dom prints.
CHECKER = """<script id="smallfair-checker">
window.addEventListener("load", function () {
  var tables = Array.prototype.slice.call(
    document.querySelectorAll("section:not(#summary) table.data"));
  var imgs = Array.prototype.slice.call(document.images);
  var scripts = Array.prototype.slice.call(document.scripts);
  var handlers = 0;
  Array.prototype.forEach.call(document.querySelectorAll("*"), function (el) {
    Array.prototype.forEach.call(el.attributes, function (a) {
      if (a.name.toLowerCase().indexOf("on") === 0) { handlers += 1; }
    });
  });
  var result = {
    tables: tables.length,
    body_rows: tables.map(function (t) {
      return t.querySelectorAll("tbody tr").length;
    }),
    table_text: tables.map(function (t) { return t.innerText; }),
    table_heights: tables.map(function (t) {
      return t.getBoundingClientRect().height;
    }),
    images: imgs.length,
    decoded: imgs.filter(function (i) {
      return i.complete && i.naturalWidth > 0 && i.naturalHeight > 0;
    }).length,
    natural_widths: imgs.map(function (i) { return i.naturalWidth; }),
    pwned: document.body.hasAttribute("data-pwned"),
    title: document.title,
    dialogs: window.__dialogs,
    scripts: scripts.map(function (s) { return s.id; }),
    svg: document.querySelectorAll("svg").length,
    handlers: handlers,
    body_text: document.body.innerText
  };
  var pre = document.createElement("pre");
  pre.id = "result";
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
});
</script>"""


def _find_browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def browser():
    path = _find_browser()
    if path is None:
        message = f"no Chromium binary found (looked for {', '.join(BROWSERS)})"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{message}, but {REQUIRE_ENV}=1 requires one.")
        pytest.skip(message)
    return path


def _run_browser(browser, url, *extra):
    """Run headless Chromium with a fresh profile; return its stdout."""
    with tempfile.TemporaryDirectory(prefix="smallfair-chromium-") as profile:
        cmd = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=5000",
            *extra,
            url,
        ]
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                cwd=profile,
                env={**os.environ, "HOME": profile},
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"{Path(browser).name} did not finish within {TIMEOUT} s")
    assert proc.returncode == 0, (
        f"{Path(browser).name} exited with {proc.returncode}:\n{proc.stderr[-2000:]}"
    )
    return proc.stdout


class _DomScan(HTMLParser):
    """Tags, attributes and text of a dumped DOM."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []  # (tag, attrs dict)
        self.text = []
        self.title = []
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        (self.title if self._in_title else self.text).append(data)


def _scan(dom):
    scan = _DomScan()
    scan.feed(dom)
    scan.close()
    return scan


@pytest.fixture(scope="module")
def report_files(tmp_path_factory):
    """A report whose group names and title are hostile markup."""
    rng = np.random.default_rng(0)
    sizes = (60, 25, 12)
    groups = np.repeat(HOSTILE, sizes)
    y_true = rng.integers(0, 2, size=groups.shape[0])
    flip = rng.random(groups.shape[0]) < np.repeat([0.1, 0.3, 0.2], sizes)
    y_pred = np.where(flip, 1 - y_true, y_true)
    report = audit_predictions(
        y_true,
        y_pred,
        sensitive_features=groups,
        n_resamples=2_000,
        title=HOSTILE_TITLE,
    )
    folder = tmp_path_factory.mktemp("browser")
    original = folder / "report.html"
    with warnings.catch_warnings():
        # long group names: matplotlib may not fit the tick labels tightly
        warnings.simplefilter("ignore", UserWarning)
        page = report.to_html(original)

    assert len(CSP_META.findall(page)) == 1
    checked = CSP_META.sub(lambda m: RELAXED_CSP + SENTINEL, page, count=1)
    assert checked.count("</body>") == 1
    checked = checked.replace("</body>", CHECKER + "\n</body>")
    copy = folder / "report_checked.html"
    copy.write_text(checked, encoding="utf-8")
    return report, original, copy


def _expected_rows(report):
    """Body rows of the data tables in page order: groups, separation, MATCH."""
    rows = [len(report.frame)] * len(report.metrics)  # one table per metric
    if report.separation is not None:
        from sklearn_smallfair.audit._html import shown_pairs

        sep = report.separation
        keep = shown_pairs(sep)
        assert sep["reject"].sum() <= keep.sum() <= sep["reject"].sum() + 8
        rows.append(int(keep.sum()))
        if keep.sum() < len(sep):
            rows.append(len(sep))
    if report.match is not None:
        rows.append(len(report.match))
    return rows


def test_report_renders_and_runs_no_hostile_script(browser, report_files):
    report, _, copy = report_files
    dom = _run_browser(browser, copy.as_uri(), "--dump-dom")
    match = re.search(r'<pre id="result">(.*?)</pre>', dom, re.DOTALL)
    assert match, "the checker script did not run:\n" + dom[-2000:]
    result = json.loads(html.unescape(match.group(1)))

    # (1) the tables render, one body row per group / test row
    expected_rows = _expected_rows(report)
    assert result["tables"] == len(expected_rows)
    assert result["body_rows"] == expected_rows
    assert result["table_heights"][0] > 0  # the groups' table is not folded
    groups_table = result["table_text"][0]
    for name in HOSTILE:
        assert name in groups_table, f"{name!r} is not shown as text"
    # each value is shown with the group's interval, e.g. "0.62 [0.41, 0.80]"
    assert "TPR [95% CI]" in groups_table
    f = report.frame
    for group in f.index:
        low, high = f.loc[group, "tpr_low"], f.loc[group, "tpr_high"]
        assert f"{f.loc[group, 'tpr']:.3g} [{low:.2f}, {high:.2f}]" in groups_table
    assert HOSTILE_TITLE in result["body_text"]

    # (2) every image decoded
    assert result["images"] >= 1
    assert result["decoded"] == result["images"], result["natural_widths"]

    # (3) no hostile script ran, although the copy allows inline scripts
    assert result["pwned"] is False
    assert result["title"] == HOSTILE_TITLE
    assert result["dialogs"] == []
    assert result["scripts"] == ["smallfair-sentinel", "smallfair-checker"]
    assert result["svg"] == 0
    assert result["handlers"] == 0


def test_original_report_in_browser(browser, report_files):
    report, original, _ = report_files
    dom = _run_browser(browser, original.as_uri(), "--dump-dom")
    scan = _scan(dom)
    tags = [tag for tag, _ in scan.tags]

    # the policy forbidding scripts is there and nothing ran or was injected
    csp = [
        attrs.get("content", "")
        for tag, attrs in scan.tags
        if tag == "meta"
        and attrs.get("http-equiv", "").lower() == "content-security-policy"
    ]
    assert len(csp) == 1 and "default-src 'none'" in csp[0]
    assert "script-src" not in csp[0]
    assert "script" not in tags and "svg" not in tags
    body = next(attrs for tag, attrs in scan.tags if tag == "body")
    assert "data-pwned" not in body
    assert "".join(scan.title) == HOSTILE_TITLE
    assert not [
        (tag, name)
        for tag, attrs in scan.tags
        for name in attrs
        if name.lower().startswith("on")
    ]
    images = [attrs for tag, attrs in scan.tags if tag == "img"]
    assert images and all(
        a.get("src", "").startswith("data:image/png;base64,") for a in images
    )
    tables = [
        a
        for tag, a in scan.tags
        if tag == "table" and "data" in a.get("class", "").split()
    ]
    assert len(tables) == len(_expected_rows(report))
    matrices = [a for tag, a in scan.tags if tag == "table" and "matrix" in a.get(
        "class", "")]  # fmt: skip
    assert len(matrices) == 3 + len(report.metrics)  # one per order
    text = "".join(scan.text)
    for name in HOSTILE:
        assert name in text


def test_original_report_screenshot_is_not_blank(browser, report_files):
    Image = pytest.importorskip("PIL.Image")
    _, original, _ = report_files
    shot = original.with_name("screenshot.png")
    _run_browser(
        browser, original.as_uri(), f"--screenshot={shot}", "--window-size=1200,1600"
    )
    assert shot.is_file(), "no screenshot written"
    with Image.open(shot) as img:
        pixels = np.asarray(img.convert("RGB"))
    assert pixels.shape[0] >= 800 and pixels.shape[1] >= 800
    not_white = (pixels < 245).any(axis=2)
    assert 0.01 < not_white.mean() < 0.9, not_white.mean()
    # text, table borders and the plot: many distinct colours, not a flat page
    colours = np.unique(pixels.reshape(-1, 3)[::7], axis=0).shape[0]
    assert colours > 20, colours


def test_control_and_bidi_labels_show_escaped(browser, tmp_path):
    rng = np.random.default_rng(1)
    labels = [label for label, _ in SPOOFING]
    groups = np.repeat(np.asarray(labels, dtype=object), 20)
    y_true = rng.integers(0, 2, size=groups.shape[0])
    y_pred = np.where(rng.random(groups.shape[0]) < 0.2, 1 - y_true, y_true)
    report = audit_predictions(
        y_true, y_pred, sensitive_features=groups, n_resamples=500, tests=("match",)
    )
    page = tmp_path / "report.html"
    report.to_html(page)
    dom = _run_browser(browser, page.as_uri(), "--dump-dom")
    text = "".join(_scan(dom).text)
    for label, shown in SPOOFING:
        assert shown in text, shown
        if label != shown:
            assert label not in text
    for char in ("\u202e", "\u2067", "\u2069", "\x00"):
        assert char not in dom


# =====================================================================================
# the report at 2, 8 (intersectional) and 60 groups
# =====================================================================================
# Runs after the load event: the summary matrix, its orders and folds, and every
# visible table's overflow, as JSON in <pre id="layout">.
LAYOUT_CHECKER = """<script id="smallfair-layout">
window.addEventListener("load", function () {
  function visible(el) { return el.getClientRects().length > 0; }
  var all = Array.prototype.slice.call(document.querySelectorAll("table"));
  var shown = all.filter(visible);
  var views = Array.prototype.slice.call(document.querySelectorAll(".view"));
  var open = views.filter(visible);
  var firstRows = open.length ? Array.prototype.slice.call(
    open[0].querySelectorAll("tbody th")).map(function (t) {
      return t.textContent; }) : [];
  var result = {
    width: document.documentElement.clientWidth,
    overflowing: shown.filter(function (t) {
      var box = t.getBoundingClientRect();
      return t.scrollWidth > t.clientWidth + 1
        || box.right > document.documentElement.clientWidth + 1
        || (t.parentElement.scrollWidth > t.parentElement.clientWidth + 1);
    }).map(function (t) { return t.className; }),
    matrices: document.querySelectorAll("#summary table.matrix").length,
    visible_views: open.map(function (v) { return v.className; }),
    first_view_rows: firstRows,
    matrix_cells: open.length ? open[0].querySelectorAll("tbody td[title]").length : 0,
    radios: document.querySelectorAll("#summary input[type=radio]").length,
    checked: Array.prototype.slice.call(
      document.querySelectorAll("#summary input:checked")).map(function (i) {
        return i.id; }),
    details: Array.prototype.slice.call(document.querySelectorAll("details")).map(
      function (d) { return d.parentElement.id || d.parentElement.tagName; }),
    findings_top: document.querySelectorAll("#findings ol.top li").length,
    drilldown: document.querySelectorAll("#drilldown table.cross").length,
    abbr: document.querySelectorAll("thead abbr[title]").length,
    sections: Array.prototype.slice.call(document.querySelectorAll("section")).map(
      function (s) { return s.id; })
  };
  var pre = document.createElement("pre");
  pre.id = "layout";
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
});
</script>"""
# The printable width of an A4 landscape page with the report's 10 mm margins,
# in CSS pixels (96 per inch): 277 mm.
PRINT_WIDTH = round(277 / 25.4 * 96)


def _sized_report(n_groups, seed=0, **kwargs):
    """A report of ``n_groups`` groups of 5 to 300 people (8: race x sex)."""
    rng = np.random.default_rng(seed)
    if n_groups == 8:
        import pandas as pd

        n = 900
        race = rng.choice(
            ["Black", "White", "Hispanic", "Other"], n, p=[0.4, 0.4, 0.12, 0.08]
        )
        sex = rng.choice(["F", "M"], n)
        y = rng.integers(0, 2, n)
        flip = rng.random(n) < np.where(sex == "F", 0.45, 0.08)
        features = pd.DataFrame({"race": race, "sex": sex})
        return audit_predictions(
            y, np.where(flip, 1 - y, y), sensitive_features=features, **kwargs
        )
    sizes = np.round(np.geomspace(5, 300, n_groups)).astype(int)
    groups = np.repeat([f"region {k:02d}" for k in range(n_groups)], sizes)
    y = rng.integers(0, 2, groups.size)
    rate = np.repeat(rng.uniform(0.1, 0.3, n_groups), sizes)
    y_pred = np.where(rng.random(groups.size) < rate, 1 - y, y)
    return audit_predictions(y, y_pred, sensitive_features=groups, **kwargs)


def _with_script(page, script, *, print_rules=False):
    """A copy of ``page`` that runs ``script`` (and applies its print rules)."""
    assert len(CSP_META.findall(page)) == 1
    page = CSP_META.sub(lambda m: RELAXED_CSP, page, count=1)
    if print_rules:
        assert page.count("@media print{") == 1
        page = page.replace("@media print{", "@media all{")
    return page.replace("</body>", script + "\n</body>")


def _layout(browser, page, folder, name, *extra):
    copy = folder / f"{name}.html"
    copy.write_text(page, encoding="utf-8")
    dom = _run_browser(browser, copy.as_uri(), "--dump-dom", *extra)
    match = re.search(r'<pre id="layout">(.*?)</pre>', dom, re.DOTALL)
    assert match, "the layout checker did not run:\n" + dom[-2000:]
    return json.loads(html.unescape(match.group(1)))


def _screenshot(browser, page_path, shot, height=1000):
    Image = pytest.importorskip("PIL.Image")
    _run_browser(
        browser,
        page_path.as_uri(),
        f"--screenshot={shot}",
        f"--window-size=1280,{height}",
    )
    assert shot.is_file(), "no screenshot written"
    folder = os.environ.get(ARTIFACTS_ENV)
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(folder) / shot.name)
    with Image.open(shot) as img:
        pixels = np.asarray(img.convert("RGB"))
    return pixels


def _verdict_colours(pixels):
    """Pixels of the matrix's verdict colours (gap, inconclusive, ok, blind)."""
    colours = np.array([[249, 201, 195], [253, 240, 200], [211, 238, 217],
                        [244, 239, 226]])  # fmt: skip
    flat = pixels.reshape(-1, 1, 3).astype(int)
    return (np.abs(flat - colours).sum(axis=2) <= 3).sum(axis=0)


@pytest.fixture(scope="module")
def small_reports():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {k: _sized_report(k, n_resamples=2_000) for k in (2, 8)}


def test_summary_matrix_orders_and_folds(browser, small_reports, tmp_path):
    report = small_reports[8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        page = report.to_html(include_plots=False)
    result = _layout(browser, _with_script(page, LAYOUT_CHECKER), tmp_path, "r8")
    # orders: evidence, size, name, and the gaps of each metric first
    assert result["matrices"] == 6 and result["radios"] == 6
    assert result["checked"] == ["order-evidence"]
    assert result["visible_views"] == ["view view-evidence"]  # one order shown
    assert result["matrix_cells"] == 8 * 3  # a cell per group and metric
    # the strongest evidence first: the group with most gaps, smallest p
    first = result["first_view_rows"][0]
    counts = (report.frame[[f"{m}_verdict" for m in report.metrics]] == "gap").sum(
        axis=1
    )
    assert counts[first] == counts.max() > 0
    assert 1 <= result["findings_top"] <= 5
    assert "findings" in result["details"]  # the other findings are folded
    assert "match" in result["details"]
    assert result["drilldown"] == 3  # race x sex for each metric
    assert result["abbr"] >= 10  # headers explain their columns
    assert result["overflowing"] == [] or all(
        "data" in c for c in result["overflowing"]
    )
    # sorting needs no script: with another radio checked, its order shows
    by_size = page.replace(' id="order-evidence" checked>', ' id="order-evidence">')
    by_size = by_size.replace(' id="order-size">', ' id="order-size" checked>')
    result = _layout(browser, _with_script(by_size, LAYOUT_CHECKER), tmp_path, "s8")
    assert result["visible_views"] == ["view view-size"]
    sizes = report.frame.loc[result["first_view_rows"], "n"].to_numpy()
    assert (np.diff(sizes) >= 0).all() and len(sizes) == 8
    # and the order of one metric: its gaps first
    by_fpr = page.replace(' id="order-evidence" checked>', ' id="order-evidence">')
    by_fpr = by_fpr.replace(' id="order-m1">', ' id="order-m1" checked>')
    result = _layout(browser, _with_script(by_fpr, LAYOUT_CHECKER), tmp_path, "f8")
    assert result["visible_views"] == ["view view-m1"]
    gaps = report.frame.loc[result["first_view_rows"], "fpr_verdict"] == "gap"
    assert gaps.any() and not (~gaps.to_numpy()[:-1] & gaps.to_numpy()[1:]).any()


@pytest.mark.slow
def test_print_layout_has_no_clipped_table(browser, small_reports, tmp_path):
    report = small_reports[8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        page = report.to_html(include_plots=False)
    # the print rules applied to a window as wide as a printed page
    result = _layout(
        browser,
        _with_script(page, LAYOUT_CHECKER, print_rules=True),
        tmp_path,
        "print8",
        f"--window-size={PRINT_WIDTH},1200",
    )
    assert result["width"] <= PRINT_WIDTH
    assert result["overflowing"] == []
    assert result["radios"] == 6  # present, hidden in print
    # without the print rules the wide per-group table scrolls in its container
    screen = _layout(
        browser,
        _with_script(page, LAYOUT_CHECKER),
        tmp_path,
        "screen8",
        f"--window-size={PRINT_WIDTH},1200",
    )
    assert screen["overflowing"]  # so the check above can fail
    # and Chromium prints the report to a PDF
    original = tmp_path / "r8.html"
    original.write_text(page, encoding="utf-8")
    pdf = tmp_path / "r8.pdf"
    _run_browser(browser, original.as_uri(), f"--print-to-pdf={pdf}",
                 "--no-pdf-header-footer")  # fmt: skip
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    pages = len(re.findall(rb"/Type\s*/Page[^s]", data))
    assert pages >= 2, pages


@pytest.mark.slow
def test_screenshots_at_2_and_8_groups(browser, small_reports, tmp_path):
    for k, report in small_reports.items():
        path = tmp_path / f"report_{k}_groups.html"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            report.to_html(path)
        pixels = _screenshot(browser, path, tmp_path / f"report_{k}_groups.png")
        colours = _verdict_colours(pixels)
        # the summary matrix is on the first screen, coloured by verdict
        verdicts = report.frame[[f"{m}_verdict" for m in report.metrics]].to_numpy()
        for colour, verdict in zip(colours, ("gap", "inconclusive")):
            if (verdicts == verdict).any():
                assert colour > 500, (k, verdict, colours)


@pytest.mark.slow
def test_screenshot_and_print_at_60_groups(browser, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = _sized_report(60, n_resamples=1_000)
        path = tmp_path / "report_60_groups.html"
        page = report.to_html(path)
    pixels = _screenshot(browser, path, tmp_path / "report_60_groups.png")
    # the ranked table of groups starts on the first screen, in verdict colours
    assert _verdict_colours(pixels).sum() > 0.06 * pixels.shape[0] * pixels.shape[1]
    result = _layout(browser, _with_script(page, LAYOUT_CHECKER), tmp_path, "r60")
    assert result["matrix_cells"] == 60 * 3
    # one table per order (read top to bottom), not columns side by side
    assert result["matrices"] == result["radios"]
    assert result["overflowing"] == [] or all(
        "data" in c for c in result["overflowing"]
    )
    printed = _layout(
        browser,
        _with_script(page, LAYOUT_CHECKER, print_rules=True),
        tmp_path,
        "print60",
        f"--window-size={PRINT_WIDTH},1200",
    )
    assert printed["overflowing"] == []


CLASS_CHECKER = """<script id="smallfair-classes">
window.addEventListener("load", function () {
  var result = {};
  Array.prototype.forEach.call(document.querySelectorAll("section.class"),
    function (s) {
      var open = Array.prototype.slice.call(s.querySelectorAll(".view")).filter(
        function (v) { return getComputedStyle(v).display !== "none"; });
      result[s.id] = {
        visible: open.map(function (v) { return v.className; }),
        checked: Array.prototype.map.call(s.querySelectorAll("input:checked"),
          function (i) { return i.id; }),
        cells: open.length ? open[0].querySelectorAll("tbody td[title]").length : 0
      };
    });
  var pre = document.createElement("pre");
  pre.id = "layout";
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
});
</script>"""


@pytest.mark.slow
def test_multiclass_report_sorts_each_class_alone(browser, tmp_path):
    """One sorting control per class: each class shows one order of its matrix,
    and checking another order in one class leaves the others as they were."""
    rng = np.random.default_rng(0)
    n = 300
    y = rng.choice(["low", "mid", "high"], n)
    groups = np.where(rng.random(n) < 0.3, "east", "west")
    pred = np.where(rng.random(n) < 0.7, y, rng.choice(["low", "mid", "high"], n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(
            y, pred, sensitive_features=groups, labels=["low", "mid", "high"],
            metrics=["tpr", "fpr"], tests=("match",), n_resamples=500,
        )  # fmt: skip
        page = report.to_html(include_plots=False)
    result = _layout(browser, _with_script(page, CLASS_CHECKER), tmp_path, "mc")
    assert sorted(result) == ["c0", "c1", "c2"]
    for k in range(3):
        assert result[f"c{k}"]["visible"] == ["view view-evidence"]
        assert result[f"c{k}"]["checked"] == [f"c{k}-order-evidence"]
        assert result[f"c{k}"]["cells"] == 2 * 2
    by_size = page.replace(
        ' id="c1-order-evidence" checked>', ' id="c1-order-evidence">'
    )
    by_size = by_size.replace(' id="c1-order-size">', ' id="c1-order-size" checked>')
    result = _layout(browser, _with_script(by_size, CLASS_CHECKER), tmp_path, "mc1")
    assert result["c1"]["visible"] == ["view view-size"]
    assert result["c0"]["visible"] == result["c2"]["visible"] == ["view view-evidence"]
