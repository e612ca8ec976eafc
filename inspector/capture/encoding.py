"""Content-encodings undone for the record only: the proxy forwards every body exactly as it came.

gzip and deflate come with Python (zlib); br needs `brotli` and zstd `backports.zstd` (the standard library's
`compression.zstd` from Python 3.14), both dependencies because agents ask for them: Bun's fetch (Claude Code) offers
`br` and `zstd`, Codex compresses its request bodies with zstd. A list (`gzip, br`) was applied in order, so it is
undone from the last. An encoding none of these knows raises `EncodingError`; the record then says so instead of
holding the body.
"""

from __future__ import annotations

import zlib
from typing import Protocol


class EncodingError(Exception):
    pass


class Decompressor(Protocol):
    def decompress(self, data: bytes) -> bytes: ...


class _Deflate:
    """`deflate` is meant to be zlib-wrapped, but servers also send raw deflate: tell from the first bytes."""

    def __init__(self) -> None:
        self._z: zlib._Decompress | None = None  # type: ignore[name-defined]

    def decompress(self, data: bytes) -> bytes:
        if self._z is None:
            if not data:
                return b""
            wrapped = (data[0] & 0x0F) == 8 and (data[0] << 8 | (data[1] if len(data) > 1 else 0)) % 31 == 0
            self._z = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return self._z.decompress(data)


class _Brotli:
    def __init__(self) -> None:
        import brotli

        self._b = brotli.Decompressor()

    def decompress(self, data: bytes) -> bytes:
        return self._b.process(data)


def _zstd() -> Decompressor:
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+
    except ImportError:
        from backports import zstd  # type: ignore[no-redef]
    return _Zstd(zstd.ZstdDecompressor)


class _Zstd:
    """Concatenated zstd frames (each decompressor object takes one frame)."""

    def __init__(self, factory) -> None:  # type: ignore[no-untyped-def]
        self._factory = factory
        self._z = factory()

    def decompress(self, data: bytes) -> bytes:
        out = []
        while data:
            out.append(self._z.decompress(data))
            if not self._z.eof:
                break
            data = self._z.unused_data
            self._z = self._factory()
        return b"".join(out)


def _one(name: str) -> Decompressor:
    if name in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if name == "deflate":
        return _Deflate()
    try:
        if name == "br":
            return _Brotli()
        if name == "zstd":
            return _zstd()
    except ImportError as exc:
        raise EncodingError(f"content-encoding {name}: {exc.name} is not installed") from None
    raise EncodingError(f"content-encoding {name!r} is not one the recorder can undo")


class Decoder:
    """Incremental decoding of a body in `content-encoding` (chunks in, decoded bytes out)."""

    def __init__(self, content_encoding: str) -> None:
        names = [n.strip().lower() for n in content_encoding.split(",") if n.strip().lower() not in ("", "identity")]
        self._chain = [_one(n) for n in reversed(names)]

    def decompress(self, data: bytes) -> bytes:
        try:
            for step in self._chain:
                data = step.decompress(data)
        except Exception as exc:  # zlib.error, brotli.error, ZstdError: the body is not what its header says
            raise EncodingError(f"cannot decode the body: {exc}") from None
        return data


def decode(body: bytes, content_encoding: str | None) -> bytes:
    """`body` with `content_encoding` undone (EncodingError when that cannot be done)."""
    if not content_encoding:
        return body
    return Decoder(content_encoding).decompress(body)
