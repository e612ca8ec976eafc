"""report --json's streamed rows (inspector/core/rows.py): structs made from columns and written by msgspec print
what `dumps` prints of the same rows as dicts, and the streamed report is the whole report's dict, byte for byte."""

from __future__ import annotations

from hypothesis import given, strategies as st
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


@given(st.lists(st.tuples(TEXT, st.integers(-2**70, 2**70), FLOATS, TEXT | st.none())))
def test_struct_rows_print_as_their_dicts(values):
    """msgspec writes an exponent without its "+" (1e16) and refuses lone surrogates: such chunks go through `dumps`."""
    columns = {"name": [v[0] for v in values], "count": [v[1] for v in values], "usd": [v[2] for v in values],
               "note": [v[3] for v in values]}
    dicts = [{k: v for k, v in zip(columns, row) if k != "note" or v is not None} for row in values]
    assert encode_rows(rows_of(Row, columns)) == dumps(dicts)


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
