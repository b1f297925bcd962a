"""What the accessibility tests share: axe-core (axe-playwright-python's bundled copy) run on a
page for WCAG 2.2 A and AA, and where a page's text breaks a word across lines.

Import after ``browser`` (which skips a module where Chromium is missing)."""

from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page
from test_browser_results import CUT

#: axe-core's rules for WCAG 2.0, 2.1 and 2.2, levels A and AA.
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
_AXE = Axe()


def assert_accessible(page: Page, what: str) -> None:
    """axe-core finds no WCAG 2.2 AA violation on the page as it is now (hidden parts are
    not checked: each state of a page is checked when it is shown)."""
    results = _AXE.run(
        page,
        options={"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"]},
    )
    found = results.response["violations"]
    faults = [
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(
            f"{' '.join(n['target'])}: {n.get('failureSummary', '').splitlines()[-1].strip()}"
            for n in v["nodes"][:4]
        )
        for v in found
    ]
    assert not faults, f"{what}: {len(faults)} axe-core violation(s):\n" + "\n".join(faults)


#: The words of the visible elements of some selectors that the browser split across two lines
#: (a long word broken mid-word to fit its box): [selector, word] for each.
BROKEN_WORDS = """selectors => {
  const broken = [];
  for (const selector of selectors) {
    for (const e of document.querySelectorAll(selector)) {
      if (!e.checkVisibility()) continue;
      const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent;
        const re = /[^\\s\\u2014\\u2013\\u00b7-]+/g;
        for (let m = re.exec(text); m; m = re.exec(text)) {
          if (m[0].length < 2) continue;
          const range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0)
                                 .map((r) => Math.round(r.top)));
          if (tops.size > 1) broken.push([selector, m[0]]);
        }
      }
    }
  }
  return broken;
}"""


def assert_no_broken_word(page: Page, *selectors: str, what: str) -> None:
    """No word of these elements' text is broken across lines (lines break between words)."""
    broken = page.evaluate(BROKEN_WORDS, list(selectors))
    assert not broken, f"{what}: words broken across lines: {broken}"


def assert_no_overlap(page: Page, *selectors: str, what: str) -> None:
    """No two visible elements of ``selectors`` overlap on the screen (one within the other
    does not count)."""
    overlaps = page.evaluate(
        """selectors => {
  const boxes = [];
  for (const selector of selectors) {
    for (const e of document.querySelectorAll(selector)) {
      if (!e.checkVisibility()) continue;
      const r = e.getBoundingClientRect();
      if (r.width && r.height) boxes.push([selector, e, r]);
    }
  }
  const out = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [sa, a, ra] = boxes[i], [sb, b, rb] = boxes[j];
      if (a.contains(b) || b.contains(a)) continue;
      const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
      const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
      const text = (x) => (x.innerText || "").slice(0, 40);
      if (w > 1 && h > 1) out.push([sa, text(a), sb, text(b)]);
    }
  }
  return out;
}""",
        list(selectors),
    )
    assert not overlaps, f"{what}: overlapping: {overlaps}"


#: The visible elements of some selectors cut (by their own box or by an ancestor that clips),
#: or reaching past the page's sides (a page that scrolls down is read by scrolling: what is
#: below the fold is not cut).
UNCUT = (
    """selectors => {
  const cut = """
    + CUT
    + """;
  const width = document.documentElement.clientWidth;
  const faults = [];
  if (document.documentElement.scrollWidth > width) {
    faults.push(["the page", "wider than the screen", document.documentElement.scrollWidth]);
  }
  for (const selector of selectors) {
    for (const e of document.querySelectorAll(selector)) {
      if (!e.checkVisibility()) continue;
      const r = e.getBoundingClientRect();
      const off = r.left < -0.5 || r.right > width + 0.5;
      if (off) faults.push([selector, "off the side", e.innerText]);
      const by = cut(e);
      if (by) faults.push([selector, "cut by " + by, e.innerText]);
    }
  }
  return faults;
}"""
)


def assert_uncut(page: Page, *selectors: str, what: str) -> None:
    """A page that scrolls down (a phone's): nothing wider than the screen, each visible element
    of ``selectors`` within its sides and not cut."""
    faults = page.evaluate(UNCUT, list(selectors))
    assert not faults, f"{what}: {faults}"
