"""The HTML audit report in a real browser (headless Chromium).

The report is opened as a user would open it: tables must render, every embedded
image must decode, and group names made of HTML and JavaScript must show up as
text without running. The test is skipped when no Chromium binary is found,
unless ``SMALLFAIR_REQUIRE_BROWSER=1`` is set, in which case a missing browser
is a failure.
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
  var tables = Array.prototype.slice.call(document.querySelectorAll("table.data"));
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
        n_draws=2_000,
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
    rows = [len(report.frame)]
    if report.match is not None:
        rows.append(len(report.match))
    if report.separation is not None:
        rows.append(len(report.separation))
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
    assert all(h > 0 for h in result["table_heights"])
    groups_table = result["table_text"][0]
    for name in HOSTILE:
        assert name in groups_table, f"{name!r} is not shown as text"
    # each value is shown with the group's interval, e.g. "0.62 [0.41, 0.80]"
    assert "tpr [95% CI]" in groups_table
    f = report.frame
    for group in f.index:
        low, high = f.loc[group, "tpr_ci_low"], f.loc[group, "tpr_ci_high"]
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
        y_true, y_pred, sensitive_features=groups, n_draws=500, tests=("match",)
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
