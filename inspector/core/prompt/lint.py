"""Prompt lint, after the reference design's rule: code handles what is deterministic and must never be violated;
the prompt handles judgment.

Three checks, each finding tied to a section and a line:
- `deterministic`: a sentence that sets a count, a retry limit, a size limit, a timeout or a strict ordering. A model
  follows such a sentence most of the time; code that enforces it follows it every time.
- `missing-section`: one of the nine recommended sections has no heading that covers it.
- `repeated`: the same instruction (or a near copy) appears twice, across sections or CLAUDE.md files. Repeats cost
  tokens on every request and drift apart when one copy is edited.
Runtime values (filled-in placeholders, git) and measured placeholders are not instructions and are not linted.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterator

from inspector.core.prompt.builder import Section

NUMBER_WORDS = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
                "hundred|thousand|dozen|a few|a couple of")
NUM = rf"(?:\d[\d,_.]*|{NUMBER_WORDS})"
DURATION = r"(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?)"
SIZE = r"(?:bytes?|[kmgt]i?b|kilobytes?|megabytes?|gigabytes?|characters?|chars?|lines?|tokens?|words?|rows?|items?)"

# Words that turn a quantity into a limit: "under 10 minutes", "at most 3", "larger than 2 MB", "the first 200 lines".
LIMIT = (r"(?:under|within|below|over|above|beyond|at most|at least|no more than|not more than|never more than|"
         r"more than|less than|fewer than|larger than|bigger than|smaller than|longer than|shorter than|up to|"
         r"exactly|max(?:imum)?(?: of)?|min(?:imum)?(?: of)?|limit(?:ed)?(?: \w+){0,3} to|cap(?:ped)?(?: \w+){0,3} at|"
         r"exceed\w*|truncate\w*(?: \w+){0,3} to|(?:the )?(?:first|last|latest|top))")
# Words after a quantity that make it a limit: "2 MB max", "5 or fewer".
AFTER = r"(?:max(?:imum)?|limit|cap|or (?:fewer|less|more|shorter|longer)|at most|tops)"

# (category, pattern): the first pattern that matches names what kind of rule the sentence sets.
DETERMINISTIC: list[tuple[str, re.Pattern[str]]] = [(c, re.compile(p, re.IGNORECASE)) for c, p in [
    ("timeout", rf"\btime-?\s?outs?\b|\btimed out\b|\b(?:wait|sleep|pause)\b[^.]*?\b{NUM}\s*{DURATION}\b"
                rf"|\b{LIMIT}\s+{NUM}\s*{DURATION}\b|\b{NUM}\s*{DURATION}\s+{AFTER}\b"),
    ("retry limit", rf"\b(?:retry|retries|re-try|attempts?|tries|try again|give up)\b[^.]*?\b(?:{NUM}|once|twice|"
                    rf"thrice)\b|\b(?:{NUM}|once|twice|thrice)\b(?:\s+times)?[^.]*?\b(?:retry|retries|attempts?|"
                    rf"tries|failures?|fails?)\b"),
    ("size limit", rf"\b{LIMIT}\s+{NUM}\s*{SIZE}\b|\b{NUM}\s*{SIZE}\s+{AFTER}\b"
                   rf"|\b(?:larger|bigger|longer|smaller|shorter)\s+than\s+{NUM}\b"),
    ("count", rf"\b{LIMIT}\s+{NUM}\b"
              rf"|\b{NUM}\s+(?:or (?:fewer|less|more)|most recent|at a time|per (?:turn|request|message|session))\b"),
    ("strict ordering", r"\bin (?:this|that|the following|the same|exactly this|the exact) order\b"
                        r"|\bbefore (?:doing |you do )?anything else\b|\bonly (?:after|once|when)\b"
                        r"|\b(?:always|must|never|do not|don't)\b[^.]*?\b(?:before|until|first)\b"
                        r"|\bfirst\b[^.]*?,?\s*\bthen\b|\bstep \d+\b"),
]]

# The nine sections of the reference design and words a heading covering each would use.
RECOMMENDED: list[tuple[str, tuple[str, ...]]] = [
    ("Identity and capabilities", ("identity", "capabilit", "who you are", "role", "about you")),
    ("Environment", ("environment", "system info", "context")),
    ("Tool use", ("tool",)),
    ("Decisions under uncertainty", ("uncertain", "ambigu", "decision", "assum", "clarif", "judg")),
    ("Task decomposition and planning", ("plan", "decompos", "task", "workflow")),
    ("Error handling and recovery", ("error", "recover", "failure")),
    ("Communication and output format", ("communicat", "output", "format", "style", "tone", "respon")),
    ("Behaviour constraints and safety invariants", ("safety", "safe", "constraint", "invariant", "guardrail",
                                                     "boundar", "restriction", "rules")),
    ("Session state and memory", ("memory", "state", "session")),
]

STOPWORDS = frozenset("a an the and or but to of in on at for with by from as is are be it this that these those "
                      "you your it's its if then than so do does any all each every".split())
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
HEADING = re.compile(r"^\s*#{1,6}\s")
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
NEAR = 0.8  # word-set overlap above which two instructions count as the same
MIN_WORDS = 4  # shorter sentences repeat by chance ("Be concise.")
EXCERPT = 120


@dataclass(slots=True)
class Finding:
    rule: str  # "deterministic" | "missing-section" | "repeated"
    message: str
    section: str | None = None
    line: int | None = None  # line in the section's text, 1-based
    path: str | None = None
    file_line: int | None = None  # line in `path`
    excerpt: str = ""

    def location(self) -> str:
        """`template.md:45 (Tool use, line 3)`: the file line an editor jumps to, and the section line."""
        where = f"{self.path}:{self.file_line}" if self.path and self.file_line else self.path or ""
        inside = f"{self.section}, line {self.line}" if self.section and self.line else self.section or ""
        return f"{where} ({inside})" if where and inside else where or inside or "prompt"

    def to_json(self) -> dict:
        return {"rule": self.rule, "message": self.message, "section": self.section, "line": self.line,
                "path": self.path, "file_line": self.file_line, "excerpt": self.excerpt}


@dataclass(slots=True)
class Sentence:
    section: Section
    line: int
    text: str


def lint(sections: list[Section], recommended: bool = True) -> list[Finding]:
    """Every finding, in prompt order within each rule. `recommended=False` skips the missing-section check (for a
    prompt that is not meant to follow the nine-section design)."""
    lintable = [s for s in sections if s.kind != "measured" and s.source != "git" and s.text]
    sentences = [sentence for s in lintable for sentence in split_sentences(s) if sentence.line not in s.filled]
    findings = [f for s in sentences if (f := _deterministic(s))]
    if recommended:
        findings += _missing(sections)
    return findings + _repeated(sentences)


def split_sentences(section: Section) -> Iterator[Sentence]:
    """Sentences with the section line they start on. Headings, fenced code and blank lines are boundaries and are
    not sentences; every list item starts a new sentence."""
    block: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(section.text.split("\n"), start=1):
        if line.strip().startswith("```"):
            fenced = not fenced
            yield from _sentences(section, block)
            block = []
            continue
        if fenced or not line.strip() or HEADING.match(line) or LIST_ITEM.match(line):
            yield from _sentences(section, block)
            block = []
        if not fenced and line.strip() and not HEADING.match(line):
            block.append((number, LIST_ITEM.sub("", line).strip()))
    yield from _sentences(section, block)


def _sentences(section: Section, block: list[tuple[int, str]]) -> Iterator[Sentence]:
    if not block:
        return
    text = " ".join(t for _, t in block)
    starts: list[int] = []  # offset in `text` where each block line begins
    offset = 0
    for _, t in block:
        starts.append(offset)
        offset += len(t) + 1
    position = 0
    for part in SENTENCE_END.split(text):
        if part.strip():
            at = text.index(part, position)
            index = bisect.bisect_right(starts, at) - 1
            yield Sentence(section, block[index][0], part.strip())
            position = at + len(part)


def _finding(rule: str, message: str, sentence: Sentence) -> Finding:
    section = sentence.section
    excerpt = sentence.text if len(sentence.text) <= EXCERPT else sentence.text[: EXCERPT - 1] + "…"
    return Finding(rule, message, section.title, sentence.line, section.path, section.file_line(sentence.line),
                   excerpt)


def _deterministic(sentence: Sentence) -> Finding | None:
    for category, pattern in DETERMINISTIC:
        match = pattern.search(sentence.text)
        if match:
            return _finding("deterministic", f"sets a {category} ('{match.group(0).strip()}'): enforce it in code, "
                            "where it holds every time, and keep judgment in the prompt", sentence)
    return None


def _missing(sections: list[Section]) -> list[Finding]:
    template = [s for s in sections if s.source in ("template", "runtime", "recorded")]
    if not template:
        return []
    headings = [s.title.lower() for s in template]
    headings += [line.lstrip("#").strip().lower() for s in template for line in s.text.split("\n")
                 if HEADING.match(line)]
    path = template[0].path
    return [Finding("missing-section", f"no section covers '{topic}' (one of the nine recommended sections)",
                    path=path) for topic, words in RECOMMENDED
            if not any(word in heading for heading in headings for word in words)]


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in STOPWORDS)


def _repeated(sentences: list[Sentence]) -> list[Finding]:
    """Later copies of an earlier instruction, each pointing at the first copy. Prefix filtering (words ordered
    rarest first; two sets with overlap >= NEAR must share one of each other's first few) keeps this fast on
    prompts of thousands of sentences."""
    words = [_words(s.text) for s in sentences]
    frequency = Counter(w for ws in words for w in ws)
    findings: list[Finding] = []
    index: dict[str, list[int]] = defaultdict(list)
    for i, (sentence, mine) in enumerate(zip(sentences, words)):
        if len(mine) < MIN_WORDS:
            continue
        prefix = sorted(mine, key=lambda w: (frequency[w], w))[: len(mine) - math.ceil(NEAR * len(mine)) + 1]
        candidates = sorted({j for word in prefix for j in index[word]})
        first = next((sentences[j] for j in candidates if len(mine & words[j]) / len(mine | words[j]) >= NEAR),
                     None)
        if first is None:
            for word in prefix:
                index[word].append(i)
            continue
        where = f"line {first.line} of this section" if first.section is sentence.section else \
            f"'{first.section.title}', line {first.line}"
        file_line = first.section.file_line(first.line)
        if first.section.path and file_line:
            where += f" ({first.section.path}:{file_line})"
        findings.append(_finding("repeated", f"repeats {where}: '{_short(first.text)}'", sentence))
    return findings


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:59] + "…"
