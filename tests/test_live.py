"""The core Follower: what a live file's appends become, checked against a fresh load of the same bytes."""

from __future__ import annotations

import json
import os
import random

import pytest
from hypothesis import given, settings, strategies as st

from inspector.core.formats import load
from inspector.core.formats.jsonl import unfinished
from inspector.core.follower import Follower
from inspector.core.model import LoadError

from conftest import CORPUS, FIXTURES

COMPACT = CORPUS / "claude-code-manual-compact.jsonl"
KIMI_CODE = next((FIXTURES / "agents" / "kimi-code-2.1.0" / "compaction" / "store").glob("sessions/*/*/agents/*/*"))
KIMI_CODE_UNDO = next(p for p in (FIXTURES / "agents" / "kimi-code-2.1.0" / "clear-undo" / "store").glob(
    "sessions/*/*/agents/*/*") if b'"context.undo"' in p.read_bytes())


def same_as_fresh(session, path) -> None:
    """The followed session equals loading the file as it is now from scratch."""
    fresh = load(path)
    assert session.messages == fresh.messages
    assert session.requests == fresh.requests
    assert session.compactions == fresh.compactions
    assert session.models == fresh.models
    # the loader's, then the tool pairing's (load() adds those); a follower holds an unfinished last line back
    # without a warning (`Follower.unfinished`), since its newline may yet come
    assert session.warnings == [w for w in fresh.warnings if not w.message.startswith(UNFINISHED)]


UNFINISHED = unfinished(1).partition(":")[0]


def append(path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def chunks(data: bytes, rng: random.Random, largest: int) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        n = rng.randint(1, largest)
        out.append(data[pos:pos + n])
        pos += n
    return out


@pytest.mark.parametrize("source", [COMPACT, CORPUS / "claude-code-subagent-explore.jsonl",
                                    FIXTURES / "formats" / "codex-rollout.jsonl",
                                    FIXTURES / "formats" / "neutral.jsonl",
                                    FIXTURES / "formats" / "anthropic-requests.jsonl", KIMI_CODE, KIMI_CODE_UNDO])
def test_chunked_appends_split_mid_line_match_a_fresh_load_after_every_update(tmp_path, source):
    data = source.read_bytes()
    first = data.index(b"\n") + 1
    path = tmp_path / source.name
    path.write_bytes(data[:first])
    follower = Follower(path)
    follower.open()
    rng = random.Random(source.name)
    total_lines, held = 0, 0
    for piece in chunks(data[first:], rng, max(50, len(data) // 25)):
        append(path, piece)
        change = follower.update()
        assert not change.reloaded and not change.switched
        same_as_fresh(change.session, path)
        assert change.bytes + follower.pending() == held + len(piece)  # only what was appended, or held back
        said = [w.line for w in load(path).warnings if w.message.startswith(UNFINISHED)]
        assert follower.unfinished == ((said[0], follower.pending()) if said else None)
        held = follower.pending()
        total_lines += change.lines
    assert total_lines == data.count(b"\n") - 1


@settings(max_examples=25, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=10**9), min_size=1, max_size=12))
def test_any_split_of_the_compaction_session_ends_as_a_fresh_load(tmp_path_factory, cuts):
    data = COMPACT.read_bytes()
    path = tmp_path_factory.mktemp("live") / "s.jsonl"
    points = sorted({c % len(data) for c in cuts} | {len(data)})
    head = data.index(b"\n") + 1
    path.write_bytes(data[:head])
    follower = Follower(path)
    shown = list(range(len(follower.open().messages)))  # the rows a list would hold, kept as the app keeps them
    pos = head
    for p in points:
        if p <= pos:
            continue
        append(path, data[pos:p])
        pos = p
        change = follower.update()
        if change.rebuilt:
            shown = shown[:change.first_new]
        assert change.first_new == len(shown)
        shown.extend(range(change.first_new, len(change.session.messages)))
    same_as_fresh(follower.session, path)
    assert shown == list(range(len(follower.session.messages)))  # every message announced once, in order


def test_a_kimi_code_step_that_grows_leaves_the_session_built_before_it_as_it_was(tmp_path):
    lines = KIMI_CODE.read_bytes().splitlines(keepends=True)
    call = next(i for i, line in enumerate(lines) if b'"tool.call"' in line)  # a step's first call: its message
    path = tmp_path / "wire.jsonl"
    path.write_bytes(b"".join(lines[:call + 1]))
    follower = Follower(path)
    before = follower.open()
    shown = [(m.text(), m.response_id) for m in before.messages]
    append(path, b"".join(lines[call + 1:]))
    change = follower.update()
    assert [(m.text(), m.response_id) for m in before.messages] == shown  # what is on screen did not change under it
    assert call and change.session.messages[len(before.messages) - 1] is not before.messages[-1]  # its step grew
    same_as_fresh(change.session, path)


def test_partial_line_is_held_until_its_newline_and_a_whole_unterminated_line_is_fed_once(tmp_path):
    lines = (FIXTURES / "formats" / "neutral.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "n.jsonl"
    path.write_bytes(b"".join(lines[:3]))
    follower = Follower(path)
    n = len(follower.open().messages)
    line = lines[3]
    append(path, line[:len(line) // 2])
    assert follower.update().empty
    append(path, line[len(line) // 2:-1])  # whole JSON, newline not yet written: shown now
    change = follower.update()
    assert change.new_messages == 1 or change.compactions
    append(path, b"\n")  # the newline alone: nothing new, nothing twice
    assert follower.update().empty
    append(path, b"".join(lines[4:]))
    follower.update()
    same_as_fresh(follower.session, path)
    assert len(follower.session.messages) >= n


def test_compaction_boundary_appears_when_its_summary_arrives(tmp_path):
    lines = COMPACT.read_bytes().splitlines(keepends=True)
    boundary = next(i for i, ln in enumerate(lines) if b'"compact_boundary"' in ln)
    summary = next(i for i, ln in enumerate(lines) if b'"isCompactSummary":true' in ln)
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(lines[:boundary]))
    follower = Follower(path)
    follower.open()
    append(path, b"".join(lines[boundary:summary + 1]))
    change = follower.update()
    assert [c.kind for c in change.compactions] == ["compact"]
    assert change.session.messages[change.compactions[0].index].kind == "compact_summary"
    assert change.compactions[0].index >= change.first_new


def test_truncated_replaced_and_rewritten_files_are_read_again_with_the_reason(tmp_path):
    data = COMPACT.read_bytes()
    lines = data.splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:400]))
    follower = Follower(path)
    follower.open()

    path.write_bytes(b"".join(lines[:100]))  # truncated
    change = follower.update()
    assert change.reloaded == "the file was truncated" and change.rebuilt and change.first_new == 0
    same_as_fresh(change.session, path)

    other = tmp_path / "s.jsonl.tmp"  # an atomic save: a new file renamed over the old one
    other.write_bytes(b"".join(lines[:300]))
    os.replace(other, path)
    change = follower.update()
    assert change.reloaded == "the file was replaced"
    same_as_fresh(change.session, path)

    size = path.stat().st_size  # rewritten in place, same inode, at least as long: the first line changed
    with open(path, "r+b") as f:
        f.write(b" " * (len(lines[0]) - 1))  # a blank first line now: the session lost its first entry
    assert path.stat().st_size == size
    change = follower.update()
    assert change.reloaded == "the file was rewritten"
    same_as_fresh(change.session, path)


def test_directory_follows_the_newest_session_and_moves_to_a_new_one(tmp_path):
    lines = COMPACT.read_bytes().splitlines(keepends=True)
    old = tmp_path / "aaaa.jsonl"
    old.write_bytes(b"".join(lines[:200]))
    os.utime(old, (1, 1))
    newest = tmp_path / "bbbb.jsonl"
    newest.write_bytes(b"".join(lines[:300]))
    (tmp_path / "agent-x.jsonl").write_bytes(lines[0])  # a subagent's file is never a session to follow
    follower = Follower(tmp_path)
    follower.open()
    assert follower.path == newest
    assert follower.watch_dir() == tmp_path
    append(newest, b"".join(lines[300:320]))
    assert follower.update().switched is None
    fresh = tmp_path / "cccc.jsonl"
    fresh.write_bytes(b"")  # created but empty: not yet
    assert follower.update().switched is None
    fresh.write_bytes(b"".join(lines[:50]))
    change = follower.update()
    assert change.switched == str(fresh) and change.rebuilt and follower.path == fresh
    same_as_fresh(change.session, fresh)
    append(fresh, b"".join(lines[50:60]))
    change = follower.update()
    assert change.switched is None and change.first_new > 0
    same_as_fresh(change.session, fresh)


def test_a_vanished_file_keeps_the_last_session_and_nothing_is_a_traceback(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(COMPACT.read_bytes()[:50_000].rsplit(b"\n", 1)[0] + b"\n")
    follower = Follower(path)
    session = follower.open()
    path.unlink()
    change = follower.update()
    assert change.empty and change.session is session
    with pytest.raises(LoadError):
        Follower(tmp_path / "missing.jsonl").open()


def test_bytes_read_per_update_are_the_bytes_appended(tmp_path):
    data = COMPACT.read_bytes()
    path = tmp_path / "s.jsonl"
    cut = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:cut])
    follower = Follower(path)
    follower.open()
    nxt = data.index(b"\n", cut) + 1
    append(path, data[cut:nxt])
    follower.update()
    assert follower.reads == nxt - cut
    assert follower.update().empty and follower.reads == 0


def _tiles(flat: bool = False):
    """Tiles of the compaction corpus session; `flat`: with the boundary made an ordinary system entry on the chain,
    so no compaction happens and the context holds every tile."""
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("gen", ROOT / "benchmarks" / "generate_large_session.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    corpus = COMPACT.read_bytes().splitlines()

    def tile(t: int, parent: str | None) -> tuple[list[bytes], str]:
        """Corpus tile `t` with fresh ids, chained onto `parent`, and its last uuid."""
        out = []
        for raw in corpus:
            line = gen.fresh_ids(raw, t)
            if b'"compact_boundary"' in line:
                if flat:
                    logical = json.loads(line)["logicalParentUuid"]
                    line = line.replace(b'"parentUuid":null', b'"parentUuid":"%s"' % logical.encode(), 1)
                    line = line.replace(b'"compact_boundary"', b'"informational"')
            elif parent and b'"parentUuid":null' in line:
                line = line.replace(b'"parentUuid":null', b'"parentUuid":"%s"' % parent.encode(), 1)
            out.append(line + b"\n")
        last = [gen.UUID.search(x) for x in out[-40:]]
        return out, [m.group().decode() for m in last if m][-1]
    return tile


def write_tiles(path, tile, n: int) -> str | None:
    """A session of `n` tiles at `path`; the uuid the next tile continues from."""
    parent = None
    with open(path, "wb") as f:
        for t in range(n):
            lines, parent = tile(t, parent)
            f.write(b"".join(lines))
    return parent


@pytest.mark.parametrize("appended, flat", [(40, False), (400, False), (400, True)])
def test_claude_code_append_work_does_not_grow_with_the_session(tmp_path, appended, flat):
    """The same appended lines cost the same build steps, and the same tool-pairing steps (messages checked or
    undone), after 1 tile of history as after 5: 5x the entries, and when `flat` (no compaction) 5x the context."""
    tile = _tiles(flat)
    steps, contexts = {}, {}
    for n in (1, 5):
        path = tmp_path / f"s{n}.jsonl"
        parent = write_tiles(path, tile, n)
        follower = Follower(path)
        contexts[n] = len(follower.open().context)
        lines, _ = tile(n, parent)
        modes, total, pairing = [], 0, 0
        for line in lines[:appended]:
            append(path, line)
            follower.update()
            mode, work = follower._loader.last_build  # noqa: SLF001
            modes.append(mode)
            total += work if mode == "extended" else 0
            pairing += follower._pairs.steps  # noqa: SLF001
        steps[n] = total, pairing
        assert "full" not in modes  # every appended line extended the branch
        same_as_fresh(follower.session, path)
    assert (contexts[5] > 4 * contexts[1]) == flat
    assert steps[1] == steps[5] and steps[1][1] > 0, steps


@pytest.mark.parametrize("settled", [False, True])
def test_a_settled_follower_extends_as_an_unsettled_one_does(tmp_path, settled):
    """`settle` (follow mode calls it before watching) does the first extension's deferred work early: every append
    after it still extends the branch, and each state equals a fresh read."""
    tile = _tiles()
    path = tmp_path / "s.jsonl"
    parent = write_tiles(path, tile, 2)
    follower = Follower(path)
    follower.open()
    if settled:
        follower.settle()
        follower.settle()  # a second call finds nothing left to do
    lines, _ = tile(2, parent)
    builds = []
    for line in lines[:6]:
        append(path, line)
        follower.update()
        builds.append(follower._loader.last_build)  # noqa: SLF001
        same_as_fresh(follower.session, path)
    assert all(mode == "extended" for mode, _ in builds), builds


def test_settle_is_nothing_to_a_loader_that_defers_nothing(tmp_path):
    """A Codex rollout's follower has no deferred work: `settle` changes nothing it then reads."""
    source = next(p for p in sorted((FIXTURES / "agents").rglob("rollout-*.jsonl")))
    path = tmp_path / source.name
    data = source.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(data[:len(data) // 2]))
    follower = Follower(path)
    follower.open()
    follower.settle()
    append(path, b"".join(data[len(data) // 2:]))
    follower.update()
    same_as_fresh(follower.session, path)


def test_a_kimi_code_home_is_followed_to_its_newest_session_and_to_a_new_one(tmp_path):
    import shutil

    store = tmp_path / ".kimi-code"
    shutil.copytree(KIMI_CODE_UNDO.parents[4].parent, store)  # two sessions of one workspace
    wires = sorted(store.glob("sessions/*/*/agents/main/wire.jsonl"))
    for n, wire in enumerate(wires):
        os.utime(wire, (1000 + n, 1000 + n))
    follower = Follower(store)
    follower.open()
    assert follower.path == wires[-1]  # the newest write, not the store's own index file
    new = wires[0].parents[2].with_name("session_new") / "agents" / "main" / "wire.jsonl"
    new.parent.mkdir(parents=True)
    new.write_bytes(KIMI_CODE.read_bytes())
    change = follower.update()
    assert change.switched == str(new) and follower.path == new
    same_as_fresh(change.session, new)
