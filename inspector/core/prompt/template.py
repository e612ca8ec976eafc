"""Reading a prompt template file: sections, placeholders, and the errors that make a template unusable.

The syntax is described at the top of the default template (`template.md` beside this module), which users copy.
Every problem is raised as one `TemplateError` line naming the file and line, before anything reaches a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from inspector.core.files import read_limited

DEFAULT_TEMPLATE = Path(__file__).with_name("template.md")

INLINE = ("cwd", "os", "shell", "platform", "date")
BLOCK = ("git", "claude_md", "memory")
PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
MAX_TEMPLATE_BYTES = 1_000_000


class TemplateError(ValueError):
    """A template that cannot be used: the message is one line, `FILE:LINE: what is wrong` where a line applies."""


@dataclass(slots=True)
class TemplateSection:
    """One `# heading` section (or the text before the first heading, titled "Preamble").
    `lines` pairs each line of text with its line number in the template file."""

    title: str
    lines: list[tuple[int, str]]
    headed: bool = True

    @property
    def body(self) -> list[tuple[int, str]]:
        return self.lines[1:] if self.headed else self.lines


def load_template(path: Path) -> list[TemplateSection]:
    try:
        data = read_limited(path, MAX_TEMPLATE_BYTES + 1)  # /dev/zero or a FIFO: bounded, never blocking
    except FileNotFoundError:
        raise TemplateError(f"{path}: prompt template not found") from None
    except IsADirectoryError:
        raise TemplateError(f"{path}: prompt template is a directory, not a file") from None
    except OSError as exc:
        raise TemplateError(f"{path}: cannot read prompt template ({exc.strerror or exc})") from None
    if len(data) > MAX_TEMPLATE_BYTES:
        raise TemplateError(f"{path}: prompt template is larger than {MAX_TEMPLATE_BYTES:,} bytes")
    try:
        text = data.decode("utf-8-sig")  # editors on Windows may start the file with a byte order mark
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TemplateError(f"{path}:{line}: prompt template is not UTF-8 text") from None
    return parse_template(text, str(path))


def parse_template(text: str, name: str) -> list[TemplateSection]:
    """Split into sections and check every placeholder; raises TemplateError naming `name` and the line."""
    sections: list[TemplateSection] = []
    current: TemplateSection | None = None
    comment_from: int | None = None
    fenced = False
    used_blocks: dict[str, int] = {}
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # line numbers as editors count them
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if comment_from is not None:
            if stripped.endswith("-->"):
                comment_from = None
            continue
        if not fenced and stripped.startswith("<!--"):
            if not stripped.endswith("-->") or stripped == "<!--":
                comment_from = number
            continue
        if stripped.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("# "):
            current = TemplateSection(line[2:].strip() or "(untitled)", [])
            sections.append(current)
        elif current is None:
            if not stripped:
                continue
            current = TemplateSection("Preamble", [], headed=False)
            sections.append(current)
        _check_placeholders(line, number, name, used_blocks)
        current.lines.append((number, line))
    if comment_from is not None:
        raise TemplateError(f"{name}:{comment_from}: comment opened with <!-- is never closed with -->")
    if not sections:
        raise TemplateError(f"{name}: prompt template has no sections (start one with a '# Title' line)")
    for section in sections:
        if not any(line.strip() for _, line in section.body):
            raise TemplateError(f"{name}:{section.lines[0][0]}: section '{section.title}' is empty")
    return sections


def _check_placeholders(line: str, number: int, name: str, used_blocks: dict[str, int]) -> None:
    for match in PLACEHOLDER.finditer(line):
        key = match.group(1)
        if key in BLOCK:
            if line.strip() != match.group(0):
                raise TemplateError(f"{name}:{number}: {{{{{key}}}}} must stand alone on its line")
            if key in used_blocks:
                raise TemplateError(f"{name}:{number}: {{{{{key}}}}} is already used on line {used_blocks[key]}")
            used_blocks[key] = number
        elif key not in INLINE:
            known = ", ".join("{{%s}}" % k for k in INLINE + BLOCK)
            raise TemplateError(f"{name}:{number}: unknown placeholder {match.group(0)} (known: {known})")


def placeholder_alone(line: str) -> str | None:
    """The block placeholder a line consists of, else None."""
    match = PLACEHOLDER.fullmatch(line.strip())
    return match.group(1) if match and match.group(1) in BLOCK else None


def fill_inline(line: str, values: dict[str, str]) -> tuple[str, bool]:
    """The line with inline placeholders replaced, and whether it had any."""
    filled, count = PLACEHOLDER.subn(lambda m: values[m.group(1)], line)
    return filled, count > 0
