"""Does the o200k counter we ship (toktok-rs) count exactly as OpenAI's own tiktoken does, and how fast?

    python benchmarks/tokenizer_check.py --vocab o200k_base.tiktoken[.gz]

tiktoken downloads its vocabulary at run time, so it is no dependency of ours; this check needs it installed
(`pip install tiktoken`) and a copy of `o200k_base.tiktoken` (plain or gzipped; several PyPI wheels ship one), whose
SHA-256 must be the one tiktoken itself expects. The texts are this repository's files, the Claude Code corpus and
the lab's fixtures (code, prose, JSON, CJK and other scripts, logs), plus a few edge cases. Exit status 1 on any
difference.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # tiktoken_ext/openai_public.py
EDGE_CASES = ["", " ", "\n\n\n", "a" * 20_000, " hello" * 5_000, "日本語と中文と한국어 🎉 👩‍👩‍👧 ∑∫→", "\t\u00a0\u200b",
              "<|endoftext|> is text here", "1234567890" * 300]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=Path, required=True)
    args = parser.parse_args(argv)
    raw = args.vocab.read_bytes()
    if args.vocab.suffix == ".gz":
        raw = gzip.decompress(raw)
    if hashlib.sha256(raw).hexdigest() != O200K_SHA256:
        print(f"{args.vocab}: not tiktoken's o200k_base (SHA-256 differs)", file=sys.stderr)
        return 2
    import tiktoken
    import tiktoken_ext.openai_public as public
    import toktok

    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in raw.splitlines() if line)}
    public.load_tiktoken_bpe = lambda *a, **k: ranks  # o200k_base's pattern and special tokens, our vocabulary copy
    reference = tiktoken.Encoding(**public.o200k_base())
    paths = [p for p in ROOT.rglob("*") if p.is_file() and p.suffix in (".py", ".md", ".jsonl", ".json", ".toml", ".txt")
             and ".venv" not in p.parts and ".git" not in p.parts]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(paths)] + EDGE_CASES
    started = time.perf_counter()
    want = [len(reference.encode_ordinary(t)) for t in texts]
    t_ref = time.perf_counter() - started
    started = time.perf_counter()
    got = toktok.batch_count(texts, "o200k_base", threads=1)
    t_ours = time.perf_counter() - started
    differ = [(i, w, g) for i, (w, g) in enumerate(zip(want, got)) if w != g]
    chars = sum(map(len, texts))
    print(f"{len(texts)} texts, {chars:,} characters, {sum(want):,} tokens")
    print(f"tiktoken {t_ref:.2f} s, toktok {t_ours:.2f} s (one thread each)")
    print(f"differences: {len(differ)}")
    for i, w, g in differ[:10]:
        print(f"  text {i}: tiktoken {w}, toktok {g}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
