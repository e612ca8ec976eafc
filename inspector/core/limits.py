"""Context windows, output reserve and the compaction policies that turn them into thresholds.

Sources: ../shared/FORMATS.md §4. Claude models have 200,000 tokens (1,000,000 for `[1m]` ids, or when a session's
usage shows more than 200k); Codex states its own window in the rollout; `--window N` overrides either.

Policies (`--policy`):
    reference    the reference agent design: compact above 70% of (window - output reserve)
    claude-code  effective = window - min(max output, 20k); auto-compact at effective - 13k; warning from 20k below
                 that; requests refused at effective - 3k. CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=N lowers the
                 auto-compact threshold to N% of effective (never raises it; from the env of its settings.json
                 files where set, else this process's: option autocompact_pct); autoCompactEnabled false in its
                 .claude.json (option autocompact_enabled 0): no line before blocking. 2.1.332 measured in the lab: the
                 same lines (docs/claude-code-format.md; a prefix alone past auto-compact waits for blocking).
    codex        90% of the raw window (a rollout states 95% of it: 272,000 as 258,400, compacting at 244,800),
                 or `model_auto_compact_token_limit` from its config layers where that is lower (option
                 auto_compact_limit); 0.171.0 measured in the lab (docs/codex-format.md)
    gemini-cli   Gemini CLI's compression: when the last prompt reached 50% of the model's limit (1,048,576 for
                 Gemini models, 256,000 for Gemma 4), keeping the newest 30% of the history; no output reserve,
                 no warning; a request that would not fit the rest of the window is refused; the share is
                 `model.compressionThreshold` where its settings.json sets one (option compact_pct)
    qwen-code    Qwen Code's compaction: 85% of the window (context.autoCompactThreshold where its settings.json
                 sets one: option compact_pct), but at most window - 20k (summary reserve) - 13k;
                 warning 20k below that; hard limit window - 23k (or 3k past auto-compact)
    opencode     opencode's overflow rule: compact once a response's tokens (input + output + cache) reach the
                 usable window, the window less the model's output limit (at most 32k), or where the model states
                 an input limit, that less `compaction.reserved` (option reserved; default min(20k, output cap));
                 limits from opencode's catalog for the provider used, under its config's (a model neither knows:
                 the default window, said to be a guess; a config stating no context: it never compacts); `compaction.auto: false` (option autocompact_enabled 0): nothing compacts before
                 the window; the prune of old tool outputs is separate (docs/opencode-format.md)
    custom       percentages of the effective window: warning_pct, autocompact_pct, blocking_pct
    copilot      GitHub Copilot CLI: background compaction at 80% of the token limit (the prompt limit its events
                 record as tokenLimit / maxPromptTokens), blocking at 95% (the SDK's InfiniteSessionConfig defaults)
    cline        Cline (extension 3.x): compact once the last request's total reaches maxAllowedSize, the window
                 less 27k (64k windows), 30k (128k), 40k (200k), else max(window - 40k, 80%)
                 (context-window-utils.ts at v3.89.2)
    roo-code     Roo Code: condense when the context passes autoCondenseContextPercent of the window (default
                 100, option condense_pct) or 90% of the window less the output reserve (8,192 by default)
    cline-sdk    the Cline SDK (CLI 3.x): compact at 90% of the usable input, itself 90% of the window when the model
                 states no input limit (compaction-shared.ts, compaction.ts)
    kimi         Kimi CLI (and Kimi Code): compact when the context reaches 85% of max_context_size or leaves less
                 than 50,000 (reserved_context_size) free (soul/compaction.py should_auto_compact; config.py
                 defaults; Kimi Code 2.1.0's DEFAULT_COMPACTION_CONFIG)

Without `--policy` a session is measured against its own harness's rule (`default_policy`), so a Codex rollout
gets Codex's thresholds without asking; `WindowInfo.policy_source` says whether the policy was that default or chosen.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from inspector.core.model import Request, Session

CLAUDE_WINDOW = 200_000
LONG_WINDOW = 1_000_000
DEFAULT_WINDOW = 200_000
CLAUDE_CODE_RESERVE_CAP = 20_000
POLICIES: tuple[str, ...] = ("reference", "claude-code", "codex", "custom", "gemini-cli", "qwen-code", "opencode",
                             "copilot", "cline", "roo-code", "cline-sdk", "kimi")
AGENT_FORMATS = ("copilot", "cline", "roo-code", "cline-sdk", "kimi")  # their rules: `_agent_thresholds`
# Formats whose own rule is the policy of the same name (the default for their sessions)
OWN_POLICY = frozenset({"gemini-cli", "qwen-code", "opencode", *AGENT_FORMATS})
KIMI_WINDOW = 262_144  # Kimi K2's context (the max_context_size Kimi's own config gives its models)
KIMI_RESERVED = 50_000  # reserved_context_size: Kimi compacts when less than this is left
ROO_RESERVE = 8_192  # ANTHROPIC_DEFAULT_MAX_TOKENS, Roo's output reserve when the model states none
AGENT_POLICY = "reference"  # what our own agent loop compacts by unless told otherwise (`run --policy`)
CLAUDE_CODE_PROMPT = "You are Claude Code"  # how Claude Code's system prompt opens: a request it sent
# ... or, in `claude -p` (2.1.332, whose prompt opens "You are a Claude agent"), the billing block it sends first
CLAUDE_CODE_BILLING = "x-anthropic-billing-header: cc_version="
OVERRIDE_ENV = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"

# Max output tokens per Claude model family (the Models overview), most specific first; the output reserve is
# min(this, 20k) as in Claude Code.
_MAX_OUTPUT: tuple[tuple[str, int], ...] = (
    ("claude-3-5-", 8_192), ("claude-3-7-sonnet", 64_000), ("claude-3-", 4_096),
    ("opus-4-5", 64_000), ("opus-4-6", 64_000), ("opus-4-1", 32_000), ("opus-4", 32_000),
    ("sonnet-4", 64_000), ("haiku-4", 64_000),
)
DEFAULT_MAX_OUTPUT = 32_000
# Models whose window is 1M without a `[1m]` id: Claude Code 2.1.332's default claude-opus-5-5 compacts on its own at
# 977,000 tokens (tests/agents/claude_code.py, scenario auto-compact), past any 200k window; the others are those
# whose `context.window` is 1e6 in 2.1.332's model catalog (its status line states 1,000,000 for them).
LONG_MODELS = ("claude-opus-5", "claude-opus-4-7", "claude-opus-4-8", "claude-sonnet-5", "claude-haiku-5-5",
               "claude-fable-5", "claude-mythos-5")

# Gemini CLI's tokenLimit(model) (core/tokenLimits.ts, 0.61.0): every model 1,048,576 but Gemma 4.
GEMINI_WINDOW = 1_048_576
GEMINI_WINDOWS: tuple[tuple[str, int], ...] = (("gemma-4-31b-it", 256_000), ("gemma-4-26b-a4b-it", 256_000))
CODEX_EFFECTIVE_PCT = 95  # effective_context_window_percent: the window a rollout states is 95% of the raw one
CODEX_STATES_EFFECTIVE = (0, 124)  # ... in every version from this one on (`codex_raw_window`)
GEMINI_COMPACT_PCT = 50  # DEFAULT_COMPRESSION_TOKEN_THRESHOLD (settings: model.compressionThreshold)
GEMINI_KEEP = 0.3  # COMPRESSION_PRESERVE_THRESHOLD: the newest share of the history a compression keeps
QWEN_COMPACT_PCT = 85  # DEFAULT_PCT of chatCompressionService.ts (0.24.4)
QWEN_SUMMARY_RESERVE, QWEN_AUTOCOMPACT_BUFFER, QWEN_WARN_BUFFER, QWEN_HARD_BUFFER = 20_000, 13_000, 20_000, 3_000
OPENCODE_OUTPUT_MAX = 32_000  # OUTPUT_TOKEN_MAX: opencode's cap on a model's output limit (provider/transform)
OPENCODE_RESERVED = 20_000  # the reserve opencode keeps below a model's input limit, at most its output limit
# The limits opencode 1.18.33 gives each model of its catalog (tools/opencode_models.py; the models.dev snapshot it
# ships, used as is with OPENCODE_DISABLE_MODELS_FETCH; a fetched models.dev may differ), read on first use
OPENCODE_MODELS = Path(__file__).with_name("data") / "opencode-models.json"


def default_policy(session: Session | None) -> str:
    """The policy a session is measured against when none is chosen: the rule of the harness that wrote it.

    - `codex` rollouts: `codex`, the rule Codex itself applies (90% of its raw window, or its configured limit).
    - `claude-code` transcripts: `claude-code`, Claude Code's auto-compact arithmetic.
    - `neutral` (our own agent's files): `reference`, what the agent loop compacts by (`run --policy` and
      `agent.config.compaction_policy` default to it: 70% of the window less the output reserve); a `--compact-at`
      used for a run is not recorded in the file, so the default is the best the file can tell.
    - `anthropic-request`: a captured Messages request. One whose system prompt opens as Claude Code's was sent by
      Claude Code (captured by a proxy between it and the API), so `claude-code`; any other was built by some program
      whose compaction rule nothing records, and the API itself only refuses a request that does not fit, so `reference`,
      the harness-neutral rule of the design this project follows, not another harness's buffer arithmetic.
    - `openai-chat`, `openai-responses`: `reference`, for the same reason (Codex's rule assumes the 95%-discounted
      window only its rollouts state; a captured Responses request does not state it).
    - no session: `reference`. Nothing tells whose harness it is, and the one caller that asks without a session
      is our own agent's configuration (a threshold for a model alone).
    - `gemini-cli`, `qwen-code`, `opencode`, `copilot`, `cline`, `roo-code`, `cline-sdk`, `kimi`: the policy of the
      same name, that agent's own rule; `kimi-code`: `kimi` (Kimi Code 2.1.0 compacts by Kimi CLI's numbers).
    """
    return _default_with_reason(session)[0]


def _default_with_reason(session: Session | None) -> tuple[str, str]:
    if session is None:
        return AGENT_POLICY, "no session: our agent's rule"
    if session.format == "codex":
        return "codex", "Codex's own rule"
    if session.format == "claude-code":
        return "claude-code", "Claude Code's own rule"
    if session.format == "kimi-code":  # DEFAULT_COMPACTION_CONFIG of 2.1.0: Kimi CLI's numbers
        return "kimi", "Kimi Code's own rule"
    if session.format in OWN_POLICY:
        return session.format, {"gemini-cli": "Gemini CLI's own rule", "qwen-code": "Qwen Code's own rule",
                                "opencode": "opencode's own rule"}.get(session.format, "the agent's own rule")
    if session.format == "neutral":
        return AGENT_POLICY, "what our agent compacts by"
    if session.format == "anthropic-request" and any(
            mark in (session.system or "")[:2000] for mark in (CLAUDE_CODE_PROMPT, CLAUDE_CODE_BILLING)):
        return "claude-code", "a request Claude Code sent"
    return "reference", "no harness rule recorded"


def max_output(model: str | None) -> int:
    name = (model or "").lower()
    for key, value in _MAX_OUTPUT:
        if key in name:
            return value
    return DEFAULT_MAX_OUTPUT


def context_window(session: Session | None, model: str | None = None) -> int:
    """The window of `model` (default: the session's current model) as the session shows it."""
    if session is not None and session.window:
        return session.window
    if session is not None and session.format in ("kimi", "kimi-code"):
        return KIMI_WINDOW
    if session is not None and model is None:
        model = current_model(session)
    if (session is not None and session.format == "gemini-cli") or (model or "").lower().startswith(("gemini", "gemma")):
        return gemini_window(model)
    if session is not None and session.format == "opencode":
        limits = opencode_limits(session, model)
        if limits is not None and limits[0]:
            return limits[0]
    if model and ("[1m]" in model.lower() or model.lower().startswith(LONG_MODELS)):
        return LONG_WINDOW
    if session is not None and _past_claude_window(session.requests):
        return LONG_WINDOW
    return CLAUDE_WINDOW if (model is None or "claude" in model.lower()) else DEFAULT_WINDOW


def opencode_limits(session: Session, model: str | None) -> tuple[int, int, int] | None:
    """A model's context, input and output limits (0: none) as opencode 1.18.33 resolves them: what its config
    states for the model (`Session.model_limits`) over its catalog's entry for the provider the session called it
    through (anthropic where it names none), field by field (provider.ts); None where neither knows the model (one
    of a newer catalog than the one here, say)."""
    entry = _opencode_catalog().get(session.providers.get(model or "", "anthropic"), {}).get(model or "")
    stated = session.model_limits.get(model or "")
    if entry is None and stated is None:
        return None
    entry, stated = entry or (0, 0, 0), stated or {}
    return stated.get("context", entry[0]), stated.get("input", entry[1]), stated.get("output", entry[2])


@cache
def _opencode_catalog() -> dict[str, dict[str, list[int]]]:
    try:
        return json.loads(OPENCODE_MODELS.read_bytes())["providers"]
    except (OSError, ValueError, KeyError):
        return {}


def codex_raw_window(stated: int, version: str | None) -> int:
    """The raw window behind the one a Codex rollout states. Codex states 95% of it (effective_context_window_percent)
    from 0.124 at the latest (openai/codex#19319 saw 258,400 for 272,000; the lab's 0.171.0 states 15,200 for
    16,000), while 0.58 stated the raw 272,000; a version between, or none, states 95% where the figure is 95% of a
    whole number (258,400 is; 272,000 is not)."""
    numbers = tuple(int(part) if part.isdigit() else 0 for part in (version or "").split(".")[:3])
    effective = numbers >= CODEX_STATES_EFFECTIVE or stated * 100 % CODEX_EFFECTIVE_PCT == 0
    return stated * 100 // CODEX_EFFECTIVE_PCT if effective else stated


def gemini_window(model: str | None) -> int:
    name = (model or "").lower()
    return next((w for key, w in GEMINI_WINDOWS if name == key), GEMINI_WINDOW)


_scanned: list = [None, 0, False]  # the request before the last one scanned, how many were, whether one was past


def _past_claude_window(requests: list[Request]) -> bool:
    """Whether any request measured more than a 200k window holds. A live session's next state holds the same
    request objects and more (the follower builds a new list of them on every append; the last one's response may
    have grown, into a new object), so when the request before the one the last call ended on is still in place,
    only that last one and those after it are looked at, and an append's cost stays what it appended."""
    before, done, found = _scanned
    if not (1 < done <= len(requests) and requests[done - 2] is before):
        done, found = 0, False
    found = found or any(r.measured_context > CLAUDE_WINDOW for r in requests[max(0, done - 1):])
    _scanned[:] = [requests[-2] if len(requests) > 1 else None, len(requests), found]
    return found


def current_model(session: Session) -> str | None:
    for r in reversed(session.requests):
        if r.model:
            return r.model
    return session.models[-1] if session.models else None


@dataclass(slots=True)
class Thresholds:
    warning: int
    autocompact: int
    blocking: int

    def to_dict(self) -> dict[str, int]:
        return {"warning": self.warning, "autocompact": self.autocompact, "blocking": self.blocking}


@dataclass(slots=True)
class UsageState:
    """Where a `used` figure stands: free = room left before auto-compaction; distance = threshold - used for each
    threshold (negative once crossed)."""

    used: int
    free: int
    percent: float
    percent_of_effective: float
    distance: dict[str, int]
    crossed: list[str]

    def to_dict(self) -> dict:
        return {"used": self.used, "free": self.free, "percent": self.percent,
                "percent_of_effective": self.percent_of_effective, "distance": self.distance,
                "crossed": self.crossed}


@dataclass(slots=True)
class WindowInfo:
    """A window and a policy's thresholds on it. `effective` is what the policy lets the conversation use
    (the window less the output reserve); `notes` say where the figures came from (an override, the usage)."""

    context_window: int
    output_reserve: int
    effective: int
    policy: str
    thresholds: Thresholds
    model: str | None = None
    notes: list[str] = field(default_factory=list)
    policy_source: str = "chosen"  # "default": the session's own (`default_policy`); "chosen": asked for by name
    default_policy: str | None = None  # what the session's own policy is, whichever was applied
    warnings: list[str] = field(default_factory=list)  # the notes that say something does not fit

    @property
    def reserved(self) -> int:
        """What the policy keeps out of reach: the window above the auto-compact threshold."""
        return self.context_window - self.thresholds.autocompact

    def state(self, used: int) -> UsageState:
        t = self.thresholds.to_dict()
        return UsageState(
            used=used, free=max(0, self.thresholds.autocompact - used),
            percent=round(used / self.context_window * 100, 2) if self.context_window else 0.0,
            percent_of_effective=round(used / self.effective * 100, 2) if self.effective else 0.0,
            distance={k: v - used for k, v in t.items()},
            crossed=[k for k, v in t.items() if used >= v])

    def to_dict(self) -> dict:
        return {"context_window": self.context_window, "output_reserve": self.output_reserve,
                "effective": self.effective, "policy": self.policy, "thresholds": self.thresholds.to_dict(),
                "policy_source": self.policy_source, "default_policy": self.default_policy, "model": self.model,
                "notes": self.notes}


def cline_max_allowed(window: int) -> int:
    """Cline's `maxAllowedSize` for a context window (`getContextWindowInfo`, v3.89.2)."""
    return {64_000: window - 27_000, 128_000: window - 30_000, 200_000: window - 40_000}.get(
        window, int(max(window - 40_000, window * 0.8)))


def _agent_thresholds(policy: str, size: int, effective: int, reserve: int, options: dict) -> Thresholds:
    """The auto-compact point of each agent's own rule; none of them warns before it, so the warning is that point,
    and requests are refused only past the window (Copilot blocks at 95% of its limit)."""
    if policy == "copilot":
        auto = int(size * _pct("compact_pct", options.get("compact_pct"), 80) / 100)
        return Thresholds(auto, auto, int(size * 0.95))
    if policy == "cline":
        auto = cline_max_allowed(size)
    elif policy == "roo-code":
        auto = int(min(size * 0.9 - reserve, size * _pct("condense_pct", options.get("condense_pct"), 100) / 100))
    elif policy == "cline-sdk":
        auto = int(size * 0.9 * 0.9)
    else:  # kimi: past the ratio, or with less than the reserved size left (a reserve the window exceeds)
        proportional = size * _pct("compact_pct", options.get("compact_pct"), 85) / 100
        reserved = _tokens("reserved", options.get("reserved", KIMI_RESERVED))
        auto = int(min(proportional, size - reserved) if 0 < reserved < size else proportional)
    return Thresholds(auto, auto, max(auto, effective if policy == "roo-code" else size))


def _opencode_usable(session: Session | None, limits: tuple[int, int, int] | None, model: str | None, size: int,
                     options: dict, notes: list[str]) -> tuple[int, bool]:
    """The usable window of opencode's overflow rule (1.18.33's usable()), and whether it compacts at all. Where the
    model states an input limit: that less `compaction.reserved` (option reserved; default the smaller of 20,000 and
    its output cap); else the window less the output cap, the model's output limit at most 32,000 (32,000 where it
    states none). A model whose config states a context limit of 0 never compacts. Without `limits` (another
    format, a window set by --window, a model opencode's catalog here does not hold), the window less the cap;
    `session` is the opencode session whose model that is, for the note."""
    if limits is None:
        if session is not None and model:
            provider = session.providers.get(model, "anthropic")
            notes.append(f"{provider}/{model} is not in opencode's catalog here (1.18.33's): its window is a guess")
        return size - min(max_output(model), OPENCODE_OUTPUT_MAX), True
    context, entered, output = limits
    cap = min(output, OPENCODE_OUTPUT_MAX) or OPENCODE_OUTPUT_MAX
    if not context:
        notes.append(f"no context limit for {model} in opencode's config: it never compacts")
        return size - cap, False
    if not entered:
        return max(0, size - cap), True
    stated = options.get("reserved")
    reserved = min(OPENCODE_RESERVED, cap) if stated is None else _tokens("reserved", stated)
    notes.append(f"input limit {entered:,} less {reserved:,} reserved")
    return max(0, min(size, entered - reserved)), True


def _shown_path(path: str) -> str:
    """A settings file as a note names it: under the user's home as ~/..."""
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home not in ("", "/") and path.startswith(home + os.sep) else path


def _tokens(name: str, value: object) -> int:
    """An option that is a number of tokens."""
    if value.__class__ is not int or value < 0:  # type: ignore[operator]
        raise ValueError(f"{name} must be a number of tokens, got {value!r}")
    return value  # type: ignore[return-value]


def _pct(name: str, value: object, default: float) -> float:
    if value is None:
        return default
    try:
        pct = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a percentage, got {value!r}") from None
    if not 0 < pct <= 100:
        raise ValueError(f"{name} must be a percentage between 0 and 100, got {value!r}")
    return pct


def window_info(session: Session | None = None, policy: str | None = None, window: int | None = None,
                model: str | None = None, output_reserve: int | None = None,
                environ: dict[str, str] | None = None, **options: object) -> WindowInfo:
    """The window, output reserve and thresholds of `policy` (None: the session's own, `default_policy`) for the
    session's current model.

    `window` overrides the window; `output_reserve` the reserve. Options: claude-code `autocompact_pct` (else
    CLAUDE_AUTOCOMPACT_PCT_OVERRIDE from `environ`, default os.environ), `autocompact_enabled`; reference
    `compact_pct` (70), `warning_pct` (60); codex `compact_pct` (90, of the raw window), `auto_compact_limit`;
    opencode `autocompact_enabled`, `reserved`; custom `warning_pct` (60), `autocompact_pct` (70), `blocking_pct`
    (95). Raises ValueError for an unknown policy or a bad option.
    """
    own, why = _default_with_reason(session)
    source = "chosen" if policy is not None else "default"
    policy = policy if policy is not None else own
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose from {', '.join(POLICIES)}")
    if window is not None and window <= 0:
        raise ValueError(f"the window must be a positive number of tokens, got {window}")
    known = {"reference": {"compact_pct", "warning_pct"}, "claude-code": {"autocompact_pct", "autocompact_enabled"},
             "codex": {"compact_pct", "auto_compact_limit"},
             "custom": {"warning_pct", "autocompact_pct", "blocking_pct"},
             "gemini-cli": {"compact_pct"}, "qwen-code": {"compact_pct"},
             "opencode": {"autocompact_enabled", "reserved"},
             "copilot": {"compact_pct"}, "cline": set(), "roo-code": {"condense_pct"}, "cline-sdk": set(),
             "kimi": {"compact_pct", "reserved"}}[policy]
    stated = session.compaction_settings if session is not None and policy == own else {}
    options = {**stated, **options}  # what the caller gives wins over what the session's harness was set to
    unknown = set(options) - known
    if unknown:
        raise ValueError(f"policy {policy} takes no option {', '.join(sorted(unknown))}")
    if model is None and session is not None:
        model = current_model(session)
    notes: list[str] = []
    warnings: list[str] = []  # what does not fit: shown wherever the window is (`notes` ends with them)
    if source == "default":
        notes.append(f"policy {policy}: the session's default, {why}")
    if stated:
        files = getattr(stated, "files", {})  # where each was set (the loaders' harness_config.Stated)
        notes.append("as its harness is set: " + ", ".join(
            f"{k} {v:g}" + (f" ({_shown_path(files[k])})" if k in files else "") for k, v in sorted(stated.items())))
    elif policy != own:
        notes.append(f"policy {policy} chosen; the session's default is {own}")
    opencode = session is not None and session.format == "opencode"
    limits = opencode_limits(session, model) if opencode else None  # type: ignore[arg-type]
    if window is not None:
        size = window
        notes.append("window set by --window")
        peak = max((r.measured_context for r in session.requests), default=0) if session is not None else 0
        if peak > window:
            warnings.append(f"the window {window:,} is smaller than a context this session measured ({peak:,}): "
                            "the model's real window is larger")
    else:
        size = context_window(session, model)
        if session is not None and session.window:
            notes.append("window stated by the session")
        elif limits is not None and limits[0]:
            where = "config" if "context" in session.model_limits.get(model or "", {}) else "catalog"
            notes.append(f"window: opencode's {where} for {session.providers.get(model or '', 'anthropic')}/{model}")
        elif size == LONG_WINDOW:
            notes.append("1M window: [1m] model id, a 1M model or usage above 200k")
    if policy == "roo-code":
        reserve = output_reserve if output_reserve is not None else ROO_RESERVE
    elif policy == "qwen-code":
        reserve = output_reserve if output_reserve is not None else QWEN_SUMMARY_RESERVE
    elif policy == "opencode":
        usable, compacts = _opencode_usable(session if opencode and window is None else None,
                                            limits if window is None else None, model, size, options, notes)
        reserve = output_reserve if output_reserve is not None else size - usable
    elif policy in ("codex", "gemini-cli") + AGENT_FORMATS:  # their rules are fractions of the window: no reserve
        reserve = output_reserve if output_reserve is not None else 0
    else:
        reserve = output_reserve if output_reserve is not None else min(max_output(model), CLAUDE_CODE_RESERVE_CAP)
    reserve = max(0, min(reserve, size))
    effective = size - reserve

    if policy == "claude-code":
        autocompact = effective - 13_000
        env = os.environ if environ is None else environ
        override = options.get("autocompact_pct")
        if override is None and env.get(OVERRIDE_ENV):
            try:
                override = _pct(OVERRIDE_ENV, env[OVERRIDE_ENV], 100)
            except ValueError:
                warnings.append(f"{OVERRIDE_ENV}={env[OVERRIDE_ENV]!r} ignored (not a percentage in 0-100)")
                override = None
        if override is not None:
            lowered = int(effective * _pct("autocompact_pct", override, 100) / 100)
            if lowered < autocompact:
                autocompact = lowered
                notes.append(f"auto-compact lowered to {float(override):g}% of effective")
        if options.get("autocompact_enabled") == 0:  # /config's Auto-compact off: nothing compacts before refusal
            autocompact = effective - 3_000
            notes.append("auto-compact off: the context grows to the blocking line")
        thresholds = Thresholds(autocompact - 20_000, autocompact, effective - 3_000)
    elif policy == "reference":
        compact = _pct("compact_pct", options.get("compact_pct"), 70)
        warning = _pct("warning_pct", options.get("warning_pct"), 60)
        thresholds = Thresholds(int(effective * min(warning, compact) / 100), int(effective * compact / 100),
                                effective)
    elif policy == "codex":  # codex-rs auto_compact_token_limit: of the raw window, lowered by the configured limit
        compact = _pct("compact_pct", options.get("compact_pct"), 90)
        stated = window is None and session is not None and session.format == "codex" and bool(session.window)
        raw = codex_raw_window(size, session.version) if stated else size  # type: ignore[union-attr]
        autocompact = int(raw * compact / 100)
        limit = options.get("auto_compact_limit")
        if limit is not None:
            if limit.__class__ is not int or limit <= 0:  # type: ignore[attr-defined]
                raise ValueError(f"auto_compact_limit must be a positive number of tokens, got {limit!r}")
            autocompact = min(autocompact, limit)  # type: ignore[call-overload]
        thresholds = Thresholds(max(0, autocompact - raw // 10), autocompact, size)  # warning: 10% of it before
    elif policy == "gemini-cli":
        compact = int(size * _pct("compact_pct", options.get("compact_pct"), GEMINI_COMPACT_PCT) / 100)
        thresholds = Thresholds(compact, compact, size)  # Gemini CLI warns of nothing before it compresses
        notes.append(f"compresses at {compact:,}, keeping the newest {GEMINI_KEEP:.0%} of the history")
    elif policy == "qwen-code":
        proportional = size * _pct("compact_pct", options.get("compact_pct"), QWEN_COMPACT_PCT) / 100
        ceiling = effective - QWEN_AUTOCOMPACT_BUFFER
        auto = int(min(proportional, ceiling) if ceiling > 0 else proportional)
        thresholds = Thresholds(max(0, auto - QWEN_WARN_BUFFER), auto,
                                min(size, max(effective - QWEN_HARD_BUFFER, auto + QWEN_HARD_BUFFER)))
    elif policy == "opencode":
        thresholds = Thresholds(effective, effective, size)  # overflow at the usable window; no warning
        if options.get("autocompact_enabled") == 0:  # compaction.auto false: the provider's refusal is the end
            thresholds = Thresholds(size, size, size)
            notes.append("auto-compact off: the context grows to the window")
        elif not compacts:
            thresholds = Thresholds(size, size, size)
    elif policy in AGENT_FORMATS:
        thresholds = _agent_thresholds(policy, size, effective, reserve, options)
    else:
        w = _pct("warning_pct", options.get("warning_pct"), 60)
        a = _pct("autocompact_pct", options.get("autocompact_pct"), 70)
        b = _pct("blocking_pct", options.get("blocking_pct"), 95)
        if not w <= a <= b:
            raise ValueError(f"custom thresholds must rise: warning {w:g}% <= autocompact {a:g}% <= blocking {b:g}%")
        thresholds = Thresholds(int(effective * w / 100), int(effective * a / 100), int(effective * b / 100))
    thresholds.warning = max(0, thresholds.warning)
    thresholds.autocompact = max(0, thresholds.autocompact)
    thresholds.blocking = max(thresholds.autocompact, thresholds.blocking)
    return WindowInfo(size, reserve, effective, policy, thresholds, model, notes + warnings, source, own, warnings)
