"""MkDocs hook: the 404 page links relative to the site's root, not to the server's root.

MkDocs renders error pages with root-absolute links (``/assets/...``, ``/verdicts/``) because a server
serves ``404.html`` for a missing page at any depth; with ``site_url`` set it uses that URL's path as
the prefix (mkdocs/mkdocs#77, #1598). This project has no known host (no ``site_url``: see the comment
in ``mkdocs.yml``), and root-absolute links are wrong both for a site opened from disk and for one
served under a path (``https://host/attention-claims/``). Without ``site_url`` the page's links are
therefore made relative to the site's root (base ``.``), which is right for ``404.html`` opened
itself and for a missing page one level below the site's root (``/attention-claims/missing``); a missing
page deeper down shows the text without styles. Setting ``site_url`` makes MkDocs' absolute links
right for every depth, and this hook then does nothing.
"""

from __future__ import annotations

import posixpath


def _relative(url):
    """``url`` with a leading ``/`` (root-absolute, not protocol-relative) made relative to the site's root."""
    if isinstance(url, str) and url.startswith("/") and not url.startswith("//"):
        return posixpath.normpath("." + url) if url != "/" else "."
    return url


def on_template_context(context, template_name, config):
    """For ``404.html`` without ``site_url``: base ``.`` and relative extra CSS/JavaScript."""
    if template_name != "404.html" or config.get("site_url"):
        return context
    context["base_url"] = "."
    context["extra_css"] = [_relative(u) for u in context.get("extra_css", [])]
    scripts = []
    for s in context.get("extra_javascript", []):
        if isinstance(s, str):
            scripts.append(_relative(s))
        else:
            s.path = _relative(s.path)
            scripts.append(s)
    context["extra_javascript"] = scripts
    return context
