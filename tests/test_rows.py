"""report --json's streamed rows (inspector/core/rows.py): structs made from columns and written by msgspec print
what `dumps` prints of the same rows as dicts, and the streamed report is the whole report's dict, byte for byte."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st
from msgspec import Struct

from conftest import CORPUS, FIXTURES
from inspector.cli import main
from inspector.core.compaction.replay import replay
from inspector.core.cost import prices
from inspector.core.cost_report import add_cost_keys
from inspector.core.formats import load
from inspector.core.limits import window_info
from inspector.core.report import report_dict
from inspector.core.rows import dumps, encode_rows, rows_of
from inspector.core.token_report import add_token_keys
from inspector.core.tokens import account


class Row(Struct, gc=False, omit_defaults=True):
    name: str
    count: int
    usd: float | None
    note: str | None = None  # written only where not None, as a dict row lacks the key


TEXT = st.text(st.characters(codec=None))  # lone surrogates too
FLOATS = st.floats() | st.sampled_from([1e16, -1e16, 9999999999999998.0, 1e-7, 2.5e300]) | st.none()


def as_columns(values: list[tuple]) -> tuple[dict[str, list], list[dict]]:
    """`values` (a tuple a row) as `Row`'s columns, and as the dicts the report wrote before (no None note)."""
    columns = {"name": [v[0] for v in values], "count": [v[1] for v in values], "usd": [v[2] for v in values],
               "note": [v[3] for v in values]}
    return columns, [{k: v for k, v in zip(columns, row) if k != "note" or v is not None} for row in values]


INT64 = st.integers(-2**63, 2**64 - 1)  # what orjson writes: every figure of a report (loaders clamp usage figures)


@settings(deadline=None)  # a machine busy with the rest of the suite takes more than 200 ms an example now and then
@given(st.lists(st.tuples(TEXT, INT64, FLOATS, TEXT | st.none())))
def test_struct_rows_print_as_their_dicts(values):
    """msgspec writes an exponent without its "+" (1e16) and refuses lone surrogates: such chunks go through `dumps`."""
    columns, dicts = as_columns(values)
    assert encode_rows(rows_of(Row, columns)) == dumps(dicts)


@settings(deadline=None)
@given(st.lists(st.tuples(TEXT, st.integers(-2**70, 2**70), FLOATS, TEXT | st.none()), min_size=1))
def test_rows_beyond_64_bit_integers_hold_the_same_values(values):
    """An integer orjson cannot write sends `dumps` to the standard library, whose floats are spelled otherwise
    (1e-07, not 1e-7): rows with one hold the same values, their floats spelled as in every other chunk."""
    columns, dicts = as_columns(values)
    rows, before = encode_rows(rows_of(Row, columns)), dumps(dicts)
    assert rows == before or json.loads(rows) == json.loads(before)  # (a NaN, written by both alike, is no equal)


def test_a_large_float_is_written_as_orjson_writes_it():
    rows = rows_of(Row, {"name": ["a", "b"], "count": [1, 2], "usd": [None, 1e16], "note": [None, "x"]})
    assert encode_rows(rows) == b'[{"name":"a","count":1,"usd":null},{"name":"b","count":2,"usd":1e+16,"note":"x"}]'


def whole_report(path) -> bytes:
    """report --json made the slow way: every row a dict in the report, written at once."""
    session = load(path)
    acc = account(session, resumable=False)
    info = window_info(session, None, None)
    report = add_token_keys(report_dict(session), acc, info)
    guard = info.thresholds.blocking if info.policy == "claude-code" else None
    report["what_if"] = replay(session, info.thresholds.autocompact, estimates=acc.estimated, blocking=guard).to_dict()
    add_cost_keys(report, session, acc, prices())
    return dumps(report) + b"\n"


def test_the_streamed_report_is_the_whole_one(capsysbinary):
    for path in (CORPUS / "claude-code-manual-compact.jsonl", FIXTURES / "formats" / "codex-rollout.jsonl"):
        assert main(["report", str(path), "--json"]) == 0
        assert capsysbinary.readouterr().out == whole_report(path)
