#!/usr/bin/env python3
"""check_report.py OOMSIM ARTEFACTS - the files `oomsim run -o` and
`oomsim explain -o` write, checked from outside:

- every SVG is well-formed XML with an <svg> root;
- the output directory holds exactly the files docs/reports.md lists, and
  the same bytes with -j 1 and -j 2;
- report.html opens in headless Chromium with no console message, no
  script error and no failed resource, and shows the cells table, the
  comparison table and every plot at a visible size, and each inlined
  plot shows as many text elements (with characters, a box, and inside its
  clip path) as its SVG file opened on its own; a copy of the report whose
  plots share ids must fail that;
- a screenshot of the report is kept in ARTEFACTS/report.png.

A control page with a deliberate console error and a missing image must
fail the same browser check, so the check can fail.  Exit status 0 when
everything holds, 1 otherwise (each failure is printed).
"""
import filecmp
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}svg"
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)
    if p.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[-2000:]))
    return p


def check_svg(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail("%s is not well-formed: %s" % (path, e))
        return
    if root.tag != SVG_NS:
        fail("%s: root element is %s, not svg" % (path, root.tag))


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking"]

# Injected into a copy of the page (never into the report itself): errors of
# any kind are collected, then what the page shows is written into the DOM
# that --dump-dom prints.
HOOK = """<script>
window.__errors = [];
window.addEventListener('error', function (e) {
  var t = e.target && e.target !== window ? (e.target.tagName || '?') + ' failed to load'
                                          : String(e.message);
  window.__errors.push(t);
}, true);
window.addEventListener('securitypolicyviolation', function (e) {
  window.__errors.push('csp: ' + e.violatedDirective);
});
var __error = console.error;
console.error = function () { window.__errors.push(Array.prototype.join.call(arguments, ' '));
                              __error.apply(console, arguments); };
</script>"""

# What a person sees of an SVG's text: the text elements with characters and
# a non-empty box that their clip path (looked up by id in the document, as
# the browser does) leaves in view.  PLplot clips with polygons given in the
# user space of the element that refers to them.
VISIBLE = """
function visibleTexts(svg, doc) {
  var n = 0;
  svg.querySelectorAll('text').forEach(function (t) {
    var r = t.getBoundingClientRect();
    if (!t.textContent.trim() || r.width <= 0 || r.height <= 0) return;
    var user = t.closest('[clip-path]');
    if (user) {
      var m = /url\\(["']?#([^"')]+)["']?\\)/.exec(user.getAttribute('clip-path'));
      var clip = m ? doc.getElementById(m[1]) : null;
      if (clip && clip.tagName === 'clipPath') {
        var ctm = user.getScreenCTM(), x0 = Infinity, y0 = Infinity, x1 = -Infinity,
            y1 = -Infinity;
        clip.querySelectorAll('polygon, rect').forEach(function (g) {
          var pts = [];
          if (g.tagName === 'rect') {
            var x = +g.getAttribute('x'), y = +g.getAttribute('y'),
                w = +g.getAttribute('width'), h = +g.getAttribute('height');
            pts = [[x, y], [x + w, y + h]];
          } else {
            var v = g.getAttribute('points').trim().split(/[\\s,]+/).map(Number);
            for (var i = 0; i + 1 < v.length; i += 2) pts.push([v[i], v[i + 1]]);
          }
          pts.forEach(function (p) {
            var q = new DOMPoint(p[0], p[1]).matrixTransform(ctm);
            x0 = Math.min(x0, q.x); y0 = Math.min(y0, q.y);
            x1 = Math.max(x1, q.x); y1 = Math.max(y1, q.y);
          });
        });
        var w = Math.min(r.right, x1) - Math.max(r.left, x0),
            h = Math.min(r.bottom, y1) - Math.max(r.top, y0);
        if (w <= 0 || h <= 0) return;
      }
    }
    n++;
  });
  return n;
}
"""

PROBE = """<script>""" + VISIBLE + """
window.addEventListener('load', function () {
  var figs = [];
  document.querySelectorAll('figure').forEach(function (f) {
    var s = f.querySelector('svg');
    var r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
    figs.push({id: f.id, svg: !!s, width: r.width, height: r.height,
               caption: !!f.querySelector('figcaption'),
               texts: s ? visibleTexts(s, document) : 0});
  });
  function rows(id) {
    var t = document.getElementById(id);
    if (!t) return -1;
    var r = t.getBoundingClientRect();
    return r.width > 0 && r.height > 0 ? t.querySelectorAll('tbody tr').length : 0;
  }
  var root = document.documentElement;
  var out = {errors: window.__errors, figures: figs, cells: rows('cells-table'),
             decisions: rows('decision-table'),
             page_scrolls_sideways: root.scrollWidth > root.clientWidth + 1,
             comparisons: rows('comparison-table'),
             about: !!document.getElementById('about')};
  var pre = document.createElement('pre');
  pre.id = 'oomsim-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def browser_check(browser, page, work):
    """Loads a probed copy of page; returns (the probe's findings or None,
    the console lines Chromium logged)."""
    with open(page, encoding="utf-8") as f:
        html = f.read()
    html = html.replace("<head>", "<head>\n" + HOOK, 1).replace("</body>", PROBE + "\n</body>", 1)
    copy = os.path.join(work, "probed-" + os.path.basename(page))
    with open(copy, "w", encoding="utf-8") as f:
        f.write(html)
    p = subprocess.run([browser] + BROWSER_FLAGS + ["--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=5000", "--dump-dom", "file://" + copy],
                       capture_output=True, text=True, timeout=120)
    console = [l for l in p.stderr.splitlines() if ":CONSOLE" in l]
    m = re.search(r'<pre id="oomsim-check">(.*?)</pre>', p.stdout, re.S)
    if m is None:
        return None, console
    text = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">") \
        .replace("&amp;", "&")
    return json.loads(text), console


def standalone_texts(browser, folder, svgs, work):
    """The visible text elements of each SVG file opened on its own (each in
    an iframe of one page, so that each has a document, and ids, of its own):
    {file name: count}, or None when the page did not report."""
    frames = "".join('<iframe name="%s" src="file://%s" width="1200" height="900"></iframe>'
                     % (n, os.path.join(os.path.abspath(folder), n)) for n in svgs)
    page = os.path.join(work, "standalone.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html><html><head><title>standalone</title></head><body>" + frames +
                "<script>" + VISIBLE + """
window.addEventListener('load', function () {
  var out = {};
  document.querySelectorAll('iframe').forEach(function (f) {
    var d = f.contentDocument;
    out[f.name] = d && d.documentElement ? visibleTexts(d.documentElement, d) : -1;
  });
  var pre = document.createElement('pre');
  pre.id = 'oomsim-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script></body></html>""")
    p = subprocess.run([browser] + BROWSER_FLAGS + ["--allow-file-access-from-files",
                        "--virtual-time-budget=5000", "--dump-dom", "file://" + page],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="oomsim-check">(.*?)</pre>', p.stdout, re.S)
    return json.loads(m.group(1).replace("&quot;", '"')) if m else None


def texts_differ(found, alone):
    """The figures of the report whose visible text differs from their
    standalone file's: [(name, inline, standalone)]."""
    return [(f["id"], f["texts"], alone.get(f["id"])) for f in found["figures"]
            if alone is None or f["texts"] != alone.get(f["id"]) or f["texts"] <= 0]


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    oomsim, artefacts = sys.argv[1], sys.argv[2]
    os.makedirs(artefacts, exist_ok=True)
    browser = chromium()
    if browser is None:
        fail("chromium not found (./setup installs Debian's chromium)")
        return 1
    work = tempfile.mkdtemp(prefix="oomsim-report-")
    try:
        # the report of a twelve-cell comparison, at two thread counts
        one, two = os.path.join(work, "j1"), os.path.join(work, "j2")
        run([oomsim, "run", "split-vs-preload", "-r", "30", "-j", "1", "-o", one])
        run([oomsim, "run", "split-vs-preload", "-r", "30", "-j", "2", "-o", two])
        expected = sorted(["results.json", "cells.csv", "report.html", "comparison.svg",
                           "peak-cdf.svg"] + ["timeline-cell-%d.svg" % i for i in range(12)] +
                          ["timeline-cell-%d.json" % i for i in range(12)])
        names = sorted(os.listdir(one)) if os.path.isdir(one) else []
        if names != expected:
            fail("run -o wrote %s, expected %s" % (names, expected))
        match, differ, errors = filecmp.cmpfiles(one, two, expected, shallow=False)
        if differ or errors:
            fail("-j 1 and -j 2 differ in %s (missing: %s)" % (differ, errors))
        svgs = [n for n in names if n.endswith(".svg")]
        for n in svgs:
            check_svg(os.path.join(one, n))

        # a scenario whose timeline has deaths, and more cells than one page holds
        boot = os.path.join(work, "boot")
        run([oomsim, "run", "prewarm-boot-loop", "-r", "4", "-o", boot])
        for n in sorted(os.listdir(boot)) if os.path.isdir(boot) else []:
            if n.endswith(".svg"):
                check_svg(os.path.join(boot, n))

        # a plan larger than a plot page and than the timeline bound: 2 devices
        # x 10 policies = 20 cells: two CDF pages, one timeline per device
        big = os.path.join(work, "big.yaml")
        with open(big, "w", encoding="utf-8") as f:
            f.write("name: big-grid\nseed: 3\nreplications: 3\nhorizon: 1min\n"
                    "devices: [android-3g, android-4g]\ncandidates: [ocr-v3]\n"
                    "workload:\n  path: [cold_start, {requests: {rate: \"1/s\", for: 50s, "
                    "needs: [detector, recognizer]}}]\n"
                    "policies:\n  sessions: [1, 2, 3, 4, 5]\n"
                    "  residency: [preload, on_demand_overlap]\n")
        bigout = os.path.join(work, "big")
        run([oomsim, "run", big, "-o", bigout])
        names = sorted(os.listdir(bigout)) if os.path.isdir(bigout) else []
        want = sorted(["results.json", "cells.csv", "report.html", "comparison.svg",
                       "peak-cdf-1.svg", "peak-cdf-2.svg", "timeline-cell-0.svg",
                       "timeline-cell-10.svg", "timeline-cell-0.json", "timeline-cell-10.json"])
        if names != want:
            fail("a 20-cell run -o wrote %s, expected %s" % (names, want))
        for n in names:
            if n.endswith(".svg"):
                check_svg(os.path.join(bigout, n))

        # explain -o: the same timeline, for every teaching scenario
        p = run([oomsim, "catalog"])
        teach = re.findall(r"^\s+(\S+)", p.stdout.split("teach", 1)[-1], re.M)
        teach = [t for t in teach if re.fullmatch(r"[a-z0-9-]+", t)]
        if len(teach) < 9:
            fail("catalog lists %d teaching scenarios, expected at least 9" % len(teach))
        for t in teach:
            d = os.path.join(work, "explain-" + t)
            run([oomsim, "explain", t, "-o", d])
            wrote = sorted(os.listdir(d)) if os.path.isdir(d) else []
            if wrote != ["timeline.json", "timeline.svg"]:
                fail("explain %s -o wrote %s" % (t, wrote))
            else:
                check_svg(os.path.join(d, "timeline.svg"))

        # the report in a browser
        report = os.path.join(one, "report.html")
        found, console = browser_check(browser, report, work)
        if found is None:
            fail("the probe found nothing in report.html (did the page load?)")
        else:
            if found["errors"]:
                fail("report.html: errors in the browser: %s" % found["errors"])
            if console:
                fail("report.html: console messages: %s" % console)
            if found["cells"] != 12:
                fail("cells table shows %s rows, expected 12" % found["cells"])
            if found["comparisons"] != 9:
                fail("comparison table shows %s rows, expected 9" % found["comparisons"])
            if found["decisions"] != 3:
                fail("decision table shows %s rows, expected one per device (3)"
                     % found["decisions"])
            if found["page_scrolls_sideways"]:
                fail("report.html scrolls sideways: a wide table is not inside its own box")
            if not found["about"]:
                fail("report.html has no about section")
            ids = sorted(f["id"] for f in found["figures"])
            if ids != sorted(svgs):
                fail("report figures %s, expected every plot %s" % (ids, sorted(svgs)))
            for f in found["figures"]:
                if not f["svg"] or f["width"] < 300 or f["height"] < 100 or not f["caption"]:
                    fail("figure %s is not shown: %s" % (f["id"], f))
            # every figure shows as much text as its own file does
            alone = standalone_texts(browser, one, svgs, work)
            if alone is None or len(alone) != len(svgs) or min(alone.values()) <= 0:
                fail("the standalone SVGs were not measured: %s" % alone)
            bad = texts_differ(found, alone)
            if bad:
                fail("figures whose text the report hides (name, inline, standalone): %s" % bad)
            # the control: the same report with the ids every plot shares
            shared = os.path.join(work, "shared-ids.html")
            with open(report, encoding="utf-8") as f:
                html = re.sub(r'( id="|url\(#|href="#)f[0-9]+-', r"\1", f.read())
            with open(shared, "w", encoding="utf-8") as f:
                f.write(html)
            old, _ = browser_check(browser, shared, work)
            if old is None or not texts_differ(old, alone):
                fail("the text check missed a report whose plots share ids")
            # and one whose tables are not in a box of their own
            unboxed = os.path.join(work, "unboxed.html")
            with open(unboxed, "w", encoding="utf-8") as f:
                f.write(html.replace(".wide{overflow-x:auto;max-width:100%}", ""))
            wide, _ = browser_check(browser, unboxed, work)
            if wide is None or not wide["page_scrolls_sideways"]:
                fail("the sideways check missed a report whose tables widen the page")
            else:
                print("with shared ids, %d of %d figures lose text"
                      % (len(texts_differ(old, alone)), len(svgs)))
        shot = os.path.join(artefacts, "report.png")
        if os.path.exists(shot):
            os.remove(shot)
        subprocess.run([browser] + BROWSER_FLAGS + ["--hide-scrollbars", "--screenshot=" + shot,
                        "--window-size=1280,4000", "file://" + report],
                       capture_output=True, timeout=120)
        size = png_size(shot) if os.path.exists(shot) else None
        if size != (1280, 4000):
            fail("screenshot %s: %s, expected a 1280x4000 PNG" % (shot, size))

        # the control: the same check must catch a broken page
        control = os.path.join(work, "control.html")
        with open(control, "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html><head><title>control</title></head><body>"
                    "<img src=\"missing-image.png\"><script>console.error('deliberate');"
                    "</script></body></html>")
        found, console = browser_check(browser, control, work)
        if found is None or len(found["errors"]) < 2 or not console:
            fail("the browser check missed the control page's errors: %s %s" % (found, console))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d failures" % len(failures), file=sys.stderr)
        return 1
    print("report checks passed: %d plots, screenshot %s" % (len(svgs), shot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
