"""The model's compact representations read as the plain fields they stand for."""

from __future__ import annotations

import json
import pickle

import pytest
from msgspec import structs

from inspector.core.model import (EMPTY_INPUT, NO_EXTRAS, NO_MESSAGE_EXTRAS, Block, BlockExtras, Message, MessageExtras,
                                  input_json)


def _message(**fields: object) -> Message:
    return Message.of("assistant", "assistant", [Block("text", "hi")], **fields)  # type: ignore[arg-type]


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


def test_rare_message_fields_live_in_extras_shared_by_the_messages_without_them() -> None:
    plain = _message(line=1)
    plain.lines = (1,)  # set to what it holds: still the shared extras
    assert plain.extras is NO_MESSAGE_EXTRAS and (plain.parent_uuid, plain.attachment, plain.more_lines) == (None,
                                                                                                             None, ())
    reminder = _message(attachment="date", parent_uuid="p")
    copy = structs.replace(reminder)
    copy.lines = (4, 5)
    assert (copy.attachment, copy.parent_uuid, copy.more_lines) == ("date", "p", (5,)) and reminder.lines == ()
    assert reminder.extras == MessageExtras(parent_uuid="p", attachment="date") and reminder != _message()


def test_copy_with_takes_the_properties_as_it_takes_the_fields() -> None:
    first = _message(line=2, uuid="u")
    copy = first.copy_with(lines=(3, 4), attachment="date", uuid="v")
    assert (copy.lines, copy.attachment, copy.uuid) == ((3, 4), "date", "v")
    assert (first.lines, first.attachment, first.uuid) == ((2,), None, "u") and first.extras is NO_MESSAGE_EXTRAS


def test_a_tool_input_is_kept_as_the_json_accounting_counts() -> None:
    value = {"command": "ls →", "n": [1, 2.5, None, True], "nested": {"z": "\n", "a": {}}}
    call = Block.of("tool_use", tool_id="t1", tool_name="Bash", input=value)
    assert call.input == value and list(call.input) == list(value)  # equal, keys in their order
    assert call.input_text == input_json(value) and call.all_text() == "Bash" + input_json(value)
    assert call.input is not call.input  # a copy at each read: change it by assigning
    call.input = {"command": "pwd"}
    assert call.input_text == '{"command": "pwd"}' and call.to_api()["input"] == {"command": "pwd"}
    bare = Block.of("tool_use", tool_id="t1")
    assert bare.input is None and bare.all_text() == "null"
    assert Block.of("tool_use", input={}).input_text == EMPTY_INPUT and Block.of("tool_use", input={}).input == {}
    assert Block.of("tool_use", input={"at": float("nan")}).input["at"] != 0  # NaN written as JSON's NaN, read back
    with pytest.raises(TypeError):
        Block.of("tool_use", input={1j: "a key JSON cannot hold"})


def test_rare_fields_live_in_extras_shared_by_the_blocks_without_them() -> None:
    plain = [Block("text", "a"), Block.of("text", "a"), Block.of("thinking", "t", signature=None, size=0)]
    assert all(b.extras is NO_EXTRAS for b in plain) and plain[0] == plain[1]
    assert (plain[0].media, plain[0].size, plain[0].raw, plain[0].signature, plain[0].tokens) == (None, 0, None, None,
                                                                                                  None)
    image = Block.of("image", media="image/png", size=10)
    assert (image.media, image.size) == ("image/png", 10) and image.extras == BlockExtras(media="image/png", size=10)
    copy = structs.replace(image)
    copy.tokens = 7  # replaces the copy's extras: the original and NO_EXTRAS are left as they were
    assert (copy.tokens, image.tokens, NO_EXTRAS.tokens) == (7, None, None) and copy.media == "image/png"
    plain[0].signature = "s"
    assert plain[0].signature == "s" and plain[1].signature is None and plain[0] != plain[1]
    assert pickle.loads(pickle.dumps(image)) == image


def test_calls_read_from_a_file_keep_their_input_as_they_found_it() -> None:
    from inspector.core.formats.blocks import blocks_from_content
    from inspector.core.formats.claude_code_lines import blocks as typed_blocks
    from inspector.core.formats.claude_code_lines import decode

    line = ('{"type":"assistant","uuid":"u","message":{"content":[{"type":"tool_use","id":"t","name":"Edit",'
            '"input":{"old":"a\\u00e9\\"b\\u001b\\n","new":-9223372036854775808,"n":true,"list":[[],{},[null]]}}]}}')
    typed = typed_blocks(decode(line.encode()).message.content, {})  # type: ignore[attr-defined]
    loose = blocks_from_content(json.loads(line)["message"]["content"])
    assert typed == loose and typed[0].input == json.loads(line)["message"]["content"][0]["input"]
    # a float (which msgspec writes its own way) leaves the line to the generic path, which keeps it as found
    floats = line.replace('"n":true', '"n":-0.0,"f":1e300,"g":1e-05')
    with pytest.raises(ValueError):
        decode(floats.encode())
    loose = blocks_from_content(json.loads(floats)["message"]["content"])
    assert loose[0].input == json.loads(floats)["message"]["content"][0]["input"]
    assert '"f": 1e+300, "g": 1e-05' in loose[0].input_text
