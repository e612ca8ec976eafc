"""The rows of report --json's lists (a row per message, per request): made from columns, a list of values per key
(`Columns`), as dicts (`with_columns`) or as structs (`rows_of`), and written as JSON (`encode_rows`, `dumps`: ASCII,
what json.dumps(ensure_ascii=True) writes).

Apart from `report` so that what prices a session (cost.py, which the status line imports) needs no report writer.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence, get_args

import msgspec
import orjson
from msgspec import Struct, structs

Columns = dict[str, Sequence[Any]]  # rows [lo:hi] of a report's list as a column per key, in the rows' key order


def with_columns(rows: list[dict[str, Any]], columns: Columns) -> list[dict[str, Any]]:
    """`rows` (one dict per row of the columns) with each column's values under its key."""
    for key, column in columns.items():
        for entry, value in zip(rows, column):
            entry[key] = value
    return rows


_ENCODER = msgspec.json.Encoder()
_FLOATS: dict[type[Struct], tuple[str, ...]] = {}  # each row struct's fields that may hold a float
_LARGE = 1e16  # msgspec writes a float from here up as 1e16, orjson (and so `dumps`) as 1e+16


def rows_of(row: type[Struct], columns: Columns) -> list[Any]:
    """Rows made from columns (in the order of `row`'s fields) for `encode_rows`: structs (made in one C loop and
    written by msgspec, faster than dicts filled key by key and written by orjson), or their dicts where msgspec would
    write a float otherwise than `dumps` (1e16 or more)."""
    assert tuple(columns) == row.__struct_fields__, "columns in the order of the row's fields"
    rows = list(map(row, *columns.values()))
    floats = _FLOATS.get(row)
    if floats is None:
        floats = _FLOATS[row] = tuple(f.name for f in structs.fields(row) if float in (f.type, *get_args(f.type)))
    return rows if all(map(_small, map(columns.__getitem__, floats))) else msgspec.to_builtins(rows)


def _small(values: Sequence[float | None]) -> bool:
    """Whether no float of `values` is 1e16 or more in magnitude (False for a NaN first: min and max skip it)."""
    try:
        return -_LARGE < min(values, default=0.0) and max(values, default=0.0) < _LARGE
    except TypeError:  # None among them (an unpriced request's cost)
        return _small([v for v in values if v is not None])


def encode_rows(rows: Sequence[Any]) -> bytes:
    """A JSON list of rows, as `dumps` writes them as dicts: structs by msgspec (where a string holds no lone
    surrogate), dicts by `dumps`. One exception, which no report meets (loaders clamp every usage figure): beside an
    integer beyond 64 bits, where `dumps` falls back to the standard library, a float is spelled as orjson spells it
    (1e-7, not 1e-07), as in every other chunk."""
    if rows and not isinstance(rows[0], dict):
        try:
            return _ascii(_ENCODER.encode(rows))
        except UnicodeEncodeError:
            rows = msgspec.to_builtins(rows)
    return dumps(rows)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def dumps(value: Any) -> bytes:
    """Compact ASCII JSON: what json.dumps(ensure_ascii=True) writes, by orjson (10x faster; UTF-8 escaped after)
    where it can (not: lone surrogates, integers beyond 64 bits, keys that are no strings)."""
    try:
        out = orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode()
    return _ascii(out)


def _ascii(out: bytes) -> bytes:
    """UTF-8 JSON with every character beyond ASCII escaped, as json.dumps(ensure_ascii=True) writes it."""
    if out.isascii():
        return out
    return _NON_ASCII.sub(_escape, out.decode()).encode()


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"
