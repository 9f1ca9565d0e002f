"""A static website served on loopback and walked page by page in Chromium.

`serve(folder)` serves a folder on 127.0.0.1 (a free port); `walk(page, base)` follows every
link inside the site from its home page and reports, per page: console errors, uncaught
exceptions, failed requests (a 404 picture, a missing script), requests that leave the
site (blocked: the site must work offline), pictures that do not decode, and links to
pages or anchors that do not exist, formulas that MathJax did not typeset.
"""
from __future__ import annotations

import functools
import re
import http.server
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlsplit

# Every <img> forced to load now (the theme may mark them lazy) and decoded: the src of
# each that fails. Pictures outside the page's first screen count too.
_BROKEN_IMAGES = """async () => {
  const broken = [];
  for (const img of Array.from(document.images)) {
    img.loading = "eager";
    try { await img.decode(); } catch (e) { broken.push(img.getAttribute("src")); }
    if (img.naturalWidth === 0 && !broken.includes(img.getAttribute("src"))) broken.push(img.getAttribute("src"));
  }
  return broken;
}"""
# MathJax typesets after the page has loaded and fetches its fonts then: wait for it, then
# count the formulas (MyST marks them "math") that it did not typeset or could not parse.
_UNTYPESET_FORMULAS = """async () => {
  if (window.MathJax && MathJax.Hub) await new Promise(done => MathJax.Hub.Queue(done));
  // Sphinx's formulas; MathJax's own output has spans of class "math" too
  const formulas = Array.from(document.querySelectorAll("span.math.notranslate, div.math.notranslate"));
  return formulas.filter(f => !f.querySelector(".MathJax") || f.querySelector(".merror, .MathJax_Error"))
                 .map(f => f.textContent.trim().slice(0, 60));
}"""
_LINKS_AND_IDS = """() => ({
  links: Array.from(document.querySelectorAll("a[href]")).map(a => a.href),
  ids: Array.from(document.querySelectorAll("[id]")).map(e => e.id),
})"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the walk reports failures itself
        pass


@contextmanager
def serve(folder):
    """``http://127.0.0.1:PORT/`` serving ``folder`` until the block ends."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@dataclass
class Walk:
    pages: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    external_links: set[str] = field(default_factory=set)
    ids: dict[str, set[str]] = field(default_factory=dict)


def _site_page(url: str) -> str:
    """The page a link leads to, without its anchor; a folder means its index.html."""
    page = urldefrag(url)[0]
    return page + "index.html" if page.endswith("/") else page


def check_page(page, url: str, base: str, walk: Walk) -> list[str]:
    """Open ``url`` and add what is wrong with it to ``walk``; return the site links on it."""
    events: list[str] = []
    on_console = lambda message: message.type == "error" and events.append(f"console error: {message.text}")
    on_error = lambda error: events.append(f"uncaught exception: {error}")
    on_failed = lambda request: events.append(f"request failed: {request.url} ({request.failure})")
    on_response = lambda response: response.status >= 400 and events.append(
        f"HTTP {response.status}: {response.url}")
    page.on("console", on_console)
    page.on("pageerror", on_error)
    page.on("requestfailed", on_failed)
    page.on("response", on_response)
    try:
        page.goto(url, wait_until="load")
        broken = page.evaluate(_BROKEN_IMAGES)
        untypeset = page.evaluate(_UNTYPESET_FORMULAS)
        found = page.evaluate(_LINKS_AND_IDS)
    finally:
        page.remove_listener("console", on_console)
        page.remove_listener("pageerror", on_error)
        page.remove_listener("requestfailed", on_failed)
        page.remove_listener("response", on_response)
    where = url[len(base):] or "index.html"
    walk.pages.append(where)
    walk.ids[_site_page(url)] = set(found["ids"])
    walk.problems += [f"{where}: {event}" for event in events]
    walk.problems += [f"{where}: picture does not load: {src}" for src in broken]
    walk.problems += [f"{where}: formula not typeset: {formula}" for formula in untypeset]
    links = []
    for link in found["links"]:
        if link.startswith(base):
            links.append(link)
        elif urlsplit(link).scheme in ("http", "https"):
            walk.external_links.add(link)
    return links


def walk(page, base: str, start: str | list[str] = "index.html", follow: bool = True) -> Walk:
    """Every page reachable from ``start`` (one page or several) by links inside the site
    (only the start pages when not ``follow``), every link's target fetched once, and every
    link's anchor checked against the ids of the page it points to."""
    starts = [start] if isinstance(start, str) else start
    result, queue, status, anchors = Walk(), [urljoin(base, s) for s in starts], {}, []
    # Nothing may leave the site: a CDN font or script would break a reader who is offline.
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
               or route.request.url.startswith("data:") else route.abort("blockedbyclient"))
    visited = set()
    while queue:
        url = queue.pop(0)
        if url in visited:
            continue
        visited.add(url)
        for link in check_page(page, url, base, result):
            target, fragment = _site_page(link), urldefrag(link)[1]
            if target not in status:
                status[target] = page.request.get(target).status
                if status[target] < 400 and target.endswith(".html") and follow:
                    queue.append(target)
            if status[target] >= 400:
                result.problems.append(f"{url[len(base):]}: broken link: {link[len(base):]} (HTTP {status[target]})")
            elif fragment:
                anchors.append((url, target, fragment))
    for source, target, fragment in anchors:
        if target not in result.ids:  # a page not opened (a walk that does not follow links)
            result.ids[target] = set(re.findall(r'\bid="([^"]+)"', page.request.get(target).text()))
        if fragment not in result.ids[target]:
            result.problems.append(f"{source[len(base):]}: broken link: {target[len(base):]}#{fragment} (no such anchor)")
    return result
