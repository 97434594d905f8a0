"""Probes: the question a fixture asks after a compaction about one item, and its answer.

A fixture checks an item by asking the agent about it once the conversation was compacted.
The question names the item, phrased for its class, so that the answer shows whether the
summary kept it:

* a prohibition: "Is the agent forbidden to push to main?", expecting yes;
* any other rule: "Must the agent keep answers under 200 words?", expecting yes;
* a commitment: "Has the agent undertaken to open the PR against develop?", expecting yes,
  still owed;
* an open question: "Has the user decided …?", expecting no: still open;
* a reference: "Where is report.md, and at what revision?" (or, without a revision, "Which
  branch did turn 12 name for this work?"), expecting the literal.

The phrasing is read off the literal's first words (a negator, a politeness or obligation
opener, "I'll"); a literal that does not open that way is quoted whole instead, so the probe
is always grammatical and never guesses at a verb. Drafts are candidates: a reviewer edits
the probe where the wording is off.
"""

from __future__ import annotations

import re
from typing import Final

from monitor.detect.lang.lexicon import VERBS
from monitor.detect.ledger import BRANCH_NAME, TICKET

#: Openers that say nothing of the rule itself: "ok,", "please", "also", "and remember to".
_FILLER: Final = re.compile(
    r"^(?:(?:ok(?:ay)?|so|also|and|but|hey|btw|fyi|again|oh|right|please|pls|plz|"
    r"just|remember|reminder|note|important|seriously|for this (?:whole )?session|"
    r"from now on|going forward|in general|as a rule)\b[\s,:;!.-]*)+",
    re.IGNORECASE,
)
#: Openers of a prohibition, then of an obligation: what follows is the verb phrase.
_FORBID: Final = re.compile(
    r"^(?:(?:you\s+)?(?:do not|don't|dont|never|must not|mustn't|should not|shouldn't|"
    r"shall not|may not|cannot|can't|cant|are not to|aren't to)|"
    r"make sure (?:you|to) (?:do not|don't|dont|never)|be sure not to|remember not to)"
    r"(?:\s+ever)?\s+(?=\w)",
    re.IGNORECASE,
)
_MUST: Final = re.compile(
    r"^(?:(?:you\s+)?(?:must|should|need to|have to|are to|always|will always)|"
    r"make sure (?:that )?(?:you |to )?|be sure to|remember to|don't forget to|"
    r"do not forget to|dont forget to|ensure (?:that )?(?:you )?)\s*(?=\w)",
    re.IGNORECASE,
)
#: A commitment's opener: an acknowledgement, then "I'll" or a spelling of it.
_PROMISE: Final = re.compile(
    r"^(?:(?:ok(?:ay)?|sure|understood|got it|will do|noted|agreed|yes)[,.!]?\s+)*"
    r"(?:going forward,?\s+|from now on,?\s+)?"
    r"i(?:'ll| will| shall| am going to|'m going to)"
    r"(?P<neg> not|n't)?(?:\s+make sure (?:to |that i )?)?\s+(?=\w)",
    re.IGNORECASE,
)
_WONT: Final = re.compile(r"^(?:.*?\b)?i\s+(?:won't|will not)\s+(?=\w)", re.IGNORECASE)
_VERSION: Final = re.compile(r"\s+(?:rev(?:ision)?|v|version)\s*\.?\s*\d+(?:\.\d+)*\s*$", re.I)
_BRANCH: Final = re.compile(rf"(?:{BRANCH_NAME})$")
#: A file name at the end of a path: a short extension after the last dot.
_FILE: Final = re.compile(r"(?:^|/)[\w-]+\.[A-Za-z][A-Za-z0-9]{0,4}$")
#: The agent's own words in a promise, as a question about the agent reads them.
#: Only "I" before a modal: "I can" reads "it can", where "I touch" would read "it touch".
_AGENT: Final = (
    (re.compile(r"\bI(?= (?:can|could|will|would|should|may|might|must)\b)"), "it"),
    (re.compile(r"\bI'll\b"), "it will"),
    (re.compile(r"\b(?:my|My)\b"), "its"),
)
#: A verb phrase that opens with a word the literal capitalised only because it came first.
_FIRST_WORD: Final = re.compile(r"^([A-Z])([a-z]+)\b")

#: The user's and the agent's own words, as a question about the agent reads them.
_PERSON: Final = (
    (re.compile(r"\byour(?:s)?\b", re.IGNORECASE), "its"),
    (re.compile(r"\byourself\b", re.IGNORECASE), "itself"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bme\b", re.IGNORECASE), "the user"),
)


def _quoted(text: str) -> str:
    return "“" + text.strip().rstrip(".!") + "”"


def _phrase(rest: str, agent: bool = False) -> str:
    """A verb phrase as the tail of a question: trailing stops off, a capital from the
    sentence start lowered, first and second person made third (the user's "my" in a rule,
    the agent's "I" in a promise)."""
    rest = rest.strip().rstrip(".!;:,").strip()
    rest = _FIRST_WORD.sub(lambda m: m.group(1).lower() + m.group(2), rest)
    for pattern, repl in _AGENT if agent else _PERSON:
        rest = pattern.sub(repl, rest)
    return rest


def _constraint(literal: str, turn: int) -> tuple[str, str]:
    body = _FILLER.sub("", literal.strip())
    if m := _FORBID.match(body):
        rest = _phrase(body[m.end() :])
        if rest:
            return (
                f"Is the agent forbidden to {rest}?",
                f"yes: the user ruled it out at turn {turn} ({_quoted(literal)})",
            )
    m = _MUST.match(body)
    rest = _phrase(body[m.end() :]) if m else ""
    words = body.split(maxsplit=1)
    if not rest and words and words[0].lower() in VERBS:
        rest = _phrase(body)  # an imperative: "keep answers short", "use tabs"
    if rest:
        return (
            f"Must the agent {rest}?",
            f"yes: the user asked for it at turn {turn} ({_quoted(literal)})",
        )
    return (
        f"Does this instruction from turn {turn} still bind the agent: {_quoted(literal)}?",
        f"yes: the user gave it at turn {turn}",
    )


def _commitment(literal: str, turn: int) -> tuple[str, str]:
    expect = f"yes, and still owed: the agent undertook it at turn {turn} ({_quoted(literal)})"
    said = literal.strip()
    if m := _WONT.match(said):
        rest = _phrase(said[m.end() :], agent=True)
        return f"Has the agent undertaken not to {rest}?", expect
    if m := _PROMISE.match(said):
        rest = _phrase(said[m.end() :], agent=True)
        neg = "not " if m.group("neg") else ""
        return f"Has the agent undertaken {neg}to {rest}?", expect
    return f"Has the agent undertaken this, at turn {turn}: {_quoted(literal)}?", expect


def _open_question(literal: str, turn: int, speaker: str) -> tuple[str, str]:
    q = literal.strip()
    if speaker == "user":
        probe = f"Has the question the user asked at turn {turn} been settled: “{q}”"
    else:
        probe = f"Has the user decided what the agent asked at turn {turn}: “{q}”"
    return probe, f"no: still open since turn {turn}"


def _reference(literal: str, turn: int) -> tuple[str, str]:
    name = _VERSION.sub("", literal.strip())
    if name != literal.strip():
        return (
            f"Where is {name}, and at what revision?",
            f"{literal.strip()}, as named at turn {turn}",
        )
    return (
        f"Which {_kind(literal)} did turn {turn} name for this work?",
        f"{literal.strip()}, as named at turn {turn}",
    )


def _kind(literal: str) -> str:
    """What a reference names, as a question words it (without giving the name away)."""
    s = literal.strip()
    if re.match(r"https?://", s):
        return "address"
    if TICKET.fullmatch(s):
        return "ticket"
    if _FILE.search(s):
        return "file"
    if _BRANCH.match(s):
        return "branch"
    if "/" in s or "." in s:
        return "file or path"
    return "name"


def probe(cls: str, literal: str, turn: int, speaker: str = "user") -> tuple[str, str]:
    """The (probe, expect) pair of a ledger item of class ``cls`` stated at ``turn``."""
    literal = literal.replace("\u2019", "'")  # typographic apostrophes read as plain ones
    if cls == "commitment":
        return _commitment(literal, turn)
    if cls == "open_question":
        return _open_question(literal, turn, speaker)
    if cls == "reference":
        return _reference(literal, turn)
    return _constraint(literal, turn)


__all__ = ["probe"]
