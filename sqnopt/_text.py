"""Text for messages: lists cut with a count of what was left out, docstrings as plain text,
summaries cut at a sentence's end. Messages say when they leave something out, and never end
mid-word."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["first_sentence", "plain_rst", "short_list"]


def short_list(items: Iterable[object], limit: int = 20, *, quote: bool = False) -> str:
    """``"a, b, c"``, or with more than ``limit`` items the first ``limit - 1`` and the last,
    with how many are left out between them: ``"a, b, ..., z (26 columns; 22 not shown)"``.
    The last item is kept because a table's label is often its last column."""
    names = [repr(str(x)) if quote else str(x) for x in items]
    if len(names) <= limit:
        return ", ".join(names)
    keep = max(limit - 1, 1)
    hidden = len(names) - keep - 1
    return (", ".join(names[:keep]) + f", \u2026, {names[-1]} ({len(names)} in all; "
            f"{hidden} not shown)")


#: ``:role:`text``` and ``:role:`~a.b.Name``` (Sphinx cross-references)
_ROLE = re.compile(r":[a-zA-Z_:]+:`(~?)([^`<]*?)(?:\s*<[^>]*>)?`")
#: words ending in a period that do not end a sentence
_ABBREVIATIONS = {"al", "e.g", "i.e", "cf", "fig", "figs", "alg", "algs", "sec", "eq", "eqs",
                  "vs", "no", "thm", "ch", "approx", "resp", "ref", "p", "pp"}


def plain_rst(text: str) -> str:
    """A reStructuredText fragment as plain text on one line: ``:func:`~sqnopt.presets.sgd```
    becomes ``sgd``, ````code```` becomes ``code``, ``*x*`` becomes ``x``, a trailing ``::``
    becomes ``:``, and runs of whitespace one space."""
    def role(m: re.Match[str]) -> str:
        target = m.group(2).strip()
        if m.group(1):                       # ~a.b.Name: the last component
            target = target.rsplit(".", 1)[-1]
        return target
    out = _ROLE.sub(role, text)
    out = re.sub(r"``([^`]+)``", r"\1", out)
    out = re.sub(r"`([^`]+)`_?", r"\1", out)
    out = re.sub(r"(?<![\w*])\*\*?([^*\s][^*]*?)\*\*?(?![\w*])", r"\1", out)
    out = re.sub(r"::(\s|$)", r":\1", out)
    return " ".join(out.split())


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (plain text, see :func:`plain_rst`): up to the first
    period, question or exclamation mark followed by a space and a capital letter or by the
    end, not counting the periods of abbreviations ("et al.", "Fig.", "e.g.") and of numbers;
    the whole text when it has no such end. Never cut mid-word."""
    for m in re.finditer(r"[.!?](?=\s+[A-Z(\"']|\s*$)", text):
        end = m.start()
        word = re.search(r"([\w.]+)$", text[:end])
        if m.group(0) == "." and word is not None:
            w = word.group(1).lower()
            if w in _ABBREVIATIONS or (len(w) == 1 and w.isalpha()):
                continue                     # "et al. 2014", "J. Smith"
        return text[:end + 1]
    return text
