"""Summary compaction: the prompt, the exact request, the answer parser and the plan.

The old part of the context (see split.py) goes to a model with a summary prompt; the new context is
[summary message, acknowledgement, *recent messages]. Planning is pure: the plan holds the exact request and its
token size with the summary pending. `run_summary` fills it through a SummaryProvider; `complete_summary` fills it
with any answer (one typed by hand included). `<analysis>` is stripped from answers, as Claude Code does.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Callable, Literal

from inspector.core.compaction.estimates import Estimates, estimates_for
from inspector.core.compaction.plan import Plan, Row, SummaryState
from inspector.core.compaction.provider import SummaryError, SummaryProvider
from inspector.core.compaction.cuts import cut_point
from inspector.core.estimators import Estimator
from inspector.core.gc_pause import gc_paused
from inspector.core.model import Block, Message, Session

PromptStyle = Literal["reference", "two-phase"]
PROMPT_STYLES: tuple[str, ...] = ("reference", "two-phase")

SYSTEM = ("You write summaries of conversations between a user and an AI coding agent. The agent will continue the "
          "work from your summary alone, so keep every detail it needs and nothing else.")

REFERENCE_PROMPT = """\
Summarize the conversation so far. The messages you summarize will be removed from the context and replaced by \
your summary, so the work must be able to continue from it alone. Be concise, but keep every detail needed to \
continue. Use these headings:

1. User messages: every message the user wrote (not tool results), quoted or closely paraphrased.
2. Requests and intent: what the user asked for, and why.
3. Files and code: files read, created or changed, with the snippets, signatures and paths that matter.
4. Errors and fixes: each error met and how it was fixed, including any correction the user made.
5. Current work: exactly what was being done immediately before this summary.
6. Pending tasks: what was asked for and is not done yet.

Answer with the summary only, no preamble."""

TWO_PHASE_PROMPT = """\
Write a detailed summary of the conversation so far. It will replace the conversation in the context, so the work \
must be able to continue from it alone: keep technical details, code patterns, decisions and the user's exact \
requests.

First think it through inside <analysis> tags: go through the conversation in order and note, for each part, what \
the user asked for and meant, how you went about it, the decisions, concepts and code involved (file names, full \
snippets, function signatures, edits), the errors met and how they were fixed, and any feedback from the user, \
especially where they asked for something to be done differently. Then check your notes for accuracy and gaps.

Then write the summary inside <summary> tags with these nine numbered sections:

1. Primary Request and Intent: every explicit request and intent of the user, in detail.
2. Key Technical Concepts: the technologies, frameworks and concepts that matter.
3. Files and Code Sections: each file examined, changed or created, why it matters, and the important snippets \
(most detail for the most recent work).
4. Errors and fixes: each error and its fix, with the user's feedback on it.
5. Problem Solving: problems solved and troubleshooting still under way.
6. All user messages: every user message that is not a tool result.
7. Pending Tasks: tasks explicitly asked for and not yet done.
8. Current Work: precisely what was being worked on just before this summary, with file names and snippets.
9. Optional Next Step: the next step, only if it follows directly from the user's most recent request, quoting \
the latest messages verbatim to show where the work stopped. Leave it out if the last task was finished.

Answer with the <analysis> block followed by the <summary> block and nothing else."""

PROMPTS: dict[str, str] = {"reference": REFERENCE_PROMPT, "two-phase": TWO_PHASE_PROMPT}

# How each style hands the summary back to the model: the reference design's label, and Claude Code's preamble
# (the text a Claude Code compact summary begins with, so an exported session reads as Claude Code's own).
SUMMARY_WRAPPERS: dict[str, str] = {
    "reference": "[Previous conversation summary]\n{summary}",
    "two-phase": "This session is being continued from a previous conversation that ran out of context. "
                 "The summary below covers the earlier portion of the conversation.\n\nSummary:\n{summary}",
}
ACKNOWLEDGEMENT = "Understood. I have the context from the previous conversation. Let's continue."


class PendingSummary(SummaryError):
    """apply() was asked to apply a summary plan whose summary has not been written yet."""


@dataclass(frozen=True, slots=True)
class SummarySettings:
    keep_ratio: float = 0.3
    prompt: PromptStyle = "reference"
    instructions: str | None = None


@dataclass(frozen=True, slots=True)
class ParsedSummary:
    summary: str
    analysis: str | None
    sections: tuple[tuple[str, str], ...]


_ANALYSIS = re.compile(r"<analysis>(.*?)(?:</analysis>|\Z)", re.S)
_SUMMARY = re.compile(r"<summary>(.*?)(?:</summary>|\Z)", re.S)
_SECTION = re.compile(r"^(\d{1,2})\.\s+([A-Z][^\n:]{0,80}):[ \t]*(.*)$", re.M)


def parse_summary_answer(answer: str) -> ParsedSummary:
    """Split a model's answer into summary and analysis, and the summary into its numbered sections.

    Takes what is inside <summary> (an unclosed tag, as in a truncated answer, runs to the end); without the tag,
    the answer minus any <analysis> block. Raises SummaryError when no summary text remains.
    """
    analysis_match = _ANALYSIS.search(answer)
    analysis = analysis_match.group(1).strip() if analysis_match else None
    summary_match = _SUMMARY.search(answer)
    if summary_match:
        summary = summary_match.group(1).strip()
    else:
        summary = _ANALYSIS.sub("", answer).strip()
    if not summary:
        raise SummaryError("the answer holds no summary text")
    heads = list(_SECTION.finditer(summary))
    sections = []
    for k, head in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(summary)
        body = (head.group(3) + summary[head.end():end]).strip()
        sections.append((head.group(2).strip(), body))
    return ParsedSummary(summary, analysis, tuple(sections))


def build_prompt(style: str, instructions: str | None = None) -> str:
    if style not in PROMPTS:
        raise ValueError(f"unknown summary prompt {style!r}; choose from {', '.join(PROMPT_STYLES)}")
    prompt = PROMPTS[style]
    if instructions and instructions.strip():
        prompt += f"\n\nAdditional Instructions:\n{instructions.strip()}"
    return prompt


def _request_block(block: Block, paired: set[str]) -> dict | None:
    """A block as the summary request sends it. Thinking is dropped (the API keeps no earlier turn's thinking in
    context, and a transcript's signature may be missing or redacted, which the API refuses); media become a note (their data is not kept); a tool block whose partner is not in the request
    becomes text, so the request itself keeps the pairing rule."""
    if block.type in ("thinking", "redacted_thinking", "unknown"):
        return None
    if block.type in ("image", "document"):
        return {"type": "text", "text": f"[{block.type} omitted: {block.media or 'unknown type'}]"}
    if block.type == "tool_use" and block.tool_id not in paired:
        args = json.dumps(block.input, ensure_ascii=False, default=str)
        return {"type": "text", "text": f"[tool call {block.tool_name}({args}), no result recorded]"}
    if block.type == "tool_result" and block.tool_id not in paired:
        return {"type": "text", "text": f"[result of an earlier tool call]\n{block.all_text()}"}
    if block.type == "text" and not block.text:
        return None
    if block.type == "tool_result" and block.content and any(b.type != "text" for b in block.content):
        d = block.to_api()
        d["content"] = [_request_block(b, paired) or {"type": "text", "text": "[omitted]"} for b in block.content]
        return d
    return block.to_api()


def request_messages(old: list[Message], prompt: str) -> list[dict]:
    """The Messages-API list sent for the summary: the old messages (made acceptable to the API: pairs closed,
    roles alternating, starting with the user) followed by the prompt as the last user turn."""
    uses = {b.tool_id for m in old for b in m.blocks if b.type == "tool_use"}
    results = {b.tool_id for m in old for b in m.blocks if b.type == "tool_result"}
    paired = uses & results
    out: list[dict] = []
    for m in old:
        role = "assistant" if m.role == "assistant" else "user"
        content = [d for d in (_request_block(b, paired) for b in m.blocks) if d is not None]
        if not content:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(content)
        else:
            out.append({"role": role, "content": content})
    if out and out[0]["role"] == "assistant":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": "(conversation start)"}]})
    prompt_block = {"type": "text", "text": prompt}
    if out and out[-1]["role"] == "user":
        out[-1]["content"].append(prompt_block)
    else:
        out.append({"role": "user", "content": [prompt_block]})
    return out


@gc_paused()
def plan_summary(session: Session, settings: SummarySettings = SummarySettings(),
                 estimates: Estimates | Estimator | str | None = None) -> Plan:
    """Plan a summary compaction with the summary pending: rows for the summarized part, the summary and
    acknowledgement to be added, and the recent part kept; the exact request and its size in `plan.summary`."""
    est = estimates_for(estimates)
    messages, start = session.messages, session.context_start
    context = est.context(session)
    tokens = context.tokens
    split = start + cut_point(tokens, settings.keep_ratio, context.unsafe_cuts)
    if split == start:
        return Plan("summary", session, settings, est, tokens, start, note="nothing to summarize")
    old = messages[start:split]
    prompt = build_prompt(settings.prompt, settings.instructions)
    request_tokens = sum(tokens[:split - start]) + est.text(prompt) + est.text(SYSTEM)
    state = SummaryState(split, SYSTEM, old, prompt, request_tokens, settings.prompt)
    return _summary_plan(session, settings, est, tokens, state)


def _summary_plan(session: Session, settings: SummarySettings, est: Estimates, tokens: list[int],
                  state: SummaryState) -> Plan:
    n = len(session.messages)
    summary_msg, ack = _new_messages(state.style, state.text or "")
    added = [Row("added", None, n, "user", "compact_summary", 0,
                 est.message(summary_msg, remember=False) if state.text is not None else None,
                 summary_msg if state.text is not None else None,
                 "summary" if state.text is not None else "summary pending"),
             Row("added", None, n + 1, "assistant", "summary_ack", 0, est.message(ack, remember=False), ack,
                 "acknowledgement")]
    folded = state.split - session.context_start
    note = (f"summary of {folded:,} messages pending ({state.request_tokens:,} tokens to send)" if state.text is None
            else f"summary of {folded:,} messages written: {added[0].after:,} tokens")
    return Plan("summary", session, settings, est, tokens, state.split, summary=state, added=added, note=note)


def _new_messages(style: str, summary: str) -> tuple[Message, Message]:
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    text = SUMMARY_WRAPPERS.get(style, SUMMARY_WRAPPERS["reference"]).format(summary=summary)
    return (Message("user", "compact_summary", [Block("text", text=text)], uuid=str(uuid.uuid4()), timestamp=now),
            Message("assistant", "summary_ack", [Block("text", text=ACKNOWLEDGEMENT)], uuid=str(uuid.uuid4()),
                    timestamp=now))


def complete_summary(plan: Plan, answer: str) -> Plan:
    """The plan with its summary written: `answer` is a model's answer or a summary typed by hand (analysis
    stripped either way). Raises SummaryError for an answer with no summary text."""
    if plan.summary is None:
        raise SummaryError("this plan has no summary to complete")
    parsed = parse_summary_answer(answer)
    state = replace(plan.summary, text=parsed.summary, answer=answer)
    return _summary_plan(plan.session, plan.settings, plan.estimates, plan.tokens, state)  # type: ignore[arg-type]


def run_summary(plan: Plan, provider: SummaryProvider, on_text: Callable[[str], None] | None = None) -> Plan:
    """Ask `provider` for the summary (streaming to `on_text`) and return the completed plan.
    Any failure is raised as SummaryError with a one-line reason."""
    if plan.summary is None:
        raise SummaryError("this plan has no summary to request")
    try:
        answer = provider.summarize(plan.summary.system, request_messages(plan.summary.old, plan.summary.prompt),
                                    on_text)
    except SummaryError:
        raise
    except Exception as exc:
        raise SummaryError(f"summary request failed: {type(exc).__name__}: {exc}") from exc
    return complete_summary(plan, answer)


def summary_messages(plan: Plan, summary: str | None = None) -> list[Message]:
    """The new context of a summary plan: [summary, acknowledgement, *recent]. `summary` overrides the plan's."""
    if summary is not None:
        plan = complete_summary(plan, summary)
    if plan.summary is None or plan.summary.text is None:
        raise PendingSummary("the summary is still pending: run it through a provider or supply the text")
    return [*(r.message for r in plan.added), *plan.session.messages[plan.summary.split:]]  # type: ignore[misc]
