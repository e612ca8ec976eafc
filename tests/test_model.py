"""The model's compact representations read as the plain fields they stand for."""

from __future__ import annotations

import pickle

from msgspec import structs

from inspector.core.model import Block, Message


def _message(**fields: object) -> Message:
    return Message("assistant", "assistant", [Block("text", "hi")], **fields)  # type: ignore[arg-type]


def test_lines_are_the_first_line_and_the_rest() -> None:
    assert _message().lines == () and _message().line is None
    one = _message(line=7, offset=120)
    assert one.lines == (7,) and one.more_lines == ()
    one.lines += (9, 12)
    assert one.lines == (7, 9, 12) and (one.line, one.more_lines) == (7, (9, 12))
    one.lines = ()
    assert one.lines == () and (one.line, one.more_lines) == (None, ())


def test_messages_with_the_same_lines_are_equal_however_made() -> None:
    made = _message(line=3, more_lines=(4,))
    set_after = _message()
    set_after.lines = [3, 4]  # type: ignore[assignment]
    assert made == set_after and set_after.more_lines == (4,)
    assert structs.replace(made, line=5).lines == (5, 4)
    assert pickle.loads(pickle.dumps(made)) == made
