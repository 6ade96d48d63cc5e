"""How a tool is declared: a typed spec (input model, output model, annotations, guidance) and a handler.

Tool modules under ``server/tools/`` build :class:`ToolSpec` values and nothing else; the dispatcher
(``dispatch.py``) owns validation, the envelope, error mapping and the call-observer hook.
"""

from __future__ import annotations

import difflib
import functools
import re
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.server.answers import Renderer

if TYPE_CHECKING:
    from codeplane.server.services import Services

#: The largest line or column a tool takes (``le=LINE_MAX``): a larger one reached SQLite, whose integers stop at
#: 2**63 - 1, and came back 9001 OverflowError. No file holds two billion lines. ``refactor/targets.py`` bounds the
#: ``path:line[:column]`` form alike.
LINE_MAX = 2**31 - 1

#: What a call does to state, for budgets and the ledger (§12).
ToolKind = Literal["read", "mutation", "test", "meta"]


class ToolParams(BaseModel):
    """Base for every tool's input model. Unknown arguments are errors, not silently dropped; so is, on a tool
    with an ``action``, an argument the chosen action does not use (``git_branch(name="x")`` listed branches)."""

    # defer_build: ~100 tool models would otherwise build their validators at import, before /ready (~50 ms);
    # each builds on first use instead (the schemas on the post-/ready warm-up thread).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    #: On a tool with an ``action``, the arguments every action takes. Any other argument must name the actions
    #: that use it in its description (``"merge/revert: ..."``); one that did neither counted as used by every
    #: action, so ``describe(action="errors", name=...)`` dropped ``name`` without a word (QA64 F3).
    every_action: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="after")
    def _arguments_fit_the_action(self) -> Self:
        action = getattr(self, "action", None)
        if not isinstance(action, str):
            return self
        fields = type(self).model_fields
        wrong = [InitErrorDetails(type=PydanticCustomError(
                     "action_argument", "used by action {actions} only, not {action}",
                     {"actions": "/".join(sorted(actions)), "action": action}), loc=(name,), input=getattr(self, name))
                 for name, actions in _action_fields(type(self)).items()
                 if action not in actions and name in self.model_fields_set
                 and getattr(self, name) != fields[name].get_default(call_default_factory=True)]
        if wrong:
            raise ValidationError.from_exception_data(type(self).__name__, wrong)
        return self


_ACTION_PREFIX = re.compile(r"([a-z_]+(?:\s*[/,]\s*[a-z_]+)*):\s")


@functools.cache
def _action_fields(params: type[ToolParams]) -> Mapping[str, frozenset[str]]:
    """Arguments of an ``action`` tool that only some actions use → those actions, read from the descriptions'
    prefixes (``"create/rename: replace an existing branch."``, ``"blame: ...; tags/recovery_points: ..."``), so
    what the schema tells the model and what validation accepts cannot drift apart. An argument that names no
    action must be in ``every_action``: a TypeError otherwise (the registry checks every tool at build time), so a
    new argument cannot slip past the rule by leaving its actions out."""
    action = params.model_fields.get("action")
    if action is None:
        return {}
    known = set(typing.get_args(action.annotation))
    out: dict[str, frozenset[str]] = {}
    for name, info in params.model_fields.items():
        actions: set[str] = set()
        for part in (info.description or "").split("; "):
            match = _ACTION_PREFIX.match(part)
            named = set(re.split(r"\s*[/,]\s*", match.group(1))) if match else set()
            if named and named <= known:
                actions |= named
        if name == "action" or name in params.every_action:
            continue
        if not actions:
            raise TypeError(f"{params.__name__}.{name}: its description names no action of {sorted(known)} that "
                            "uses it; prefix it (e.g. 'merge/revert: ...') or list it in every_action")
        out[name] = frozenset(actions)
    return out


class ToolResult(BaseModel):
    """Base for every tool's output model."""

    model_config = ConfigDict(frozen=True, defer_build=True)


#: Longest tool description in ``tools/list`` (characters); whole sentences only.
BRIEF_CHARS = 300


def brief(summary: str) -> str:
    text = " ".join(summary.split())
    if len(text) <= BRIEF_CHARS:
        return text
    cut = 0
    for index, char in enumerate(text[:BRIEF_CHARS]):
        if char in ".;" and (index + 1 == len(text) or text[index + 1] == " "):
            cut = index + 1
    if cut and text[cut - 1] == ";":
        return text[:cut - 1] + "."  # a clause ends the description as a sentence, not mid-way on ";"
    return text[:cut] if cut else text[:BRIEF_CHARS].rsplit(" ", 1)[0] + " …"


ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]


async def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


@dataclass(frozen=True)
class ToolContext:
    """What a handler may use: the services, who is calling, and a progress reporter."""

    services: Services
    registry: ToolRegistry
    tool: str
    session_id: str
    request_id: str
    progress: ProgressFn = _no_progress


@dataclass(frozen=True)
class ToolExample:
    description: str
    params: dict[str, Any]


Handler = Callable[[ToolContext, Any], Awaitable[ToolResult]]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the agent sees it, plus the handler that serves it.

    ``handler`` is ``async def (ctx, params) -> ToolResult``; blocking work inside it belongs in
    ``anyio.to_thread.run_sync`` so one slow call does not stall the event loop.
    """

    name: str
    category: str
    summary: str
    params: type[ToolParams]
    result: type[ToolResult]
    handler: Handler
    kind: ToolKind = "read"
    when_to_use: tuple[str, ...] = ()
    when_not_to_use: tuple[str, ...] = ()
    examples: tuple[ToolExample, ...] = ()
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    title: str | None = None
    #: For action-style tools whose kind depends on the arguments (e.g. ``git_branch`` list vs delete).
    kind_for: Callable[[Any], ToolKind] | None = None
    #: Content-free summary of the arguments for the ledger (e.g. ``action=delete``); never file contents.
    detail_for: Callable[[Any], str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: The text the model reads (``server/answers.py``); ``None`` = the lean record as compact JSON.
    render: Renderer | None = None

    def description(self) -> str:
        """What ``tools/list`` shows: the summary's leading sentences, up to :data:`BRIEF_CHARS`.

        Every ``tools/list`` costs the model the whole catalogue, so it gets what a tool does and when to
        reach for it; ``describe(action='tool')`` has the full summary, when (not) to use it and examples.
        """
        return brief(self.summary)


#: ``tools.profile = core``: the find-read-edit-test-commit loop. Everything else stays one profile away, but
#: for the two calls a spent budget's error names (open_task after 6001, reset_budget after 6004): every profile
#: serves them, or an agent whose budget ran out would be stuck until the session expired.
RECOVERY_TOOLS = frozenset({"open_task", "reset_budget"})
CORE_TOOLS = frozenset({
    "describe", "search", "read_source", "list_files", "map_repo", "write_source", "run_test_targets",
    "get_test_run", "git_status", "git_diff", "git_log", "git_stage_and_commit", "refactor_rename", "refactor_apply",
    "semantic_diff", "lint_check", *RECOVERY_TOOLS,
    # Undoing an edit (restore paths from HEAD) is part of the loop: without it an agent wrote the reverse edits.
    "git_checkout",
    # What the loop's own answers send the agent to, and the only way to do it (QA33 #4): git_reset restores the
    # recovery point a confirmed git_checkout saves (5009 names it), cancel_test_run stops a run started here (a
    # 600-file run took 210 s), refactor_inspect shows the edits a rename preview only counts (doc edits, a
    # needs_decision candidate's). ~500 tokens of tools/list; core stays under 6k (tests/test_server_s49_*).
    "git_reset", "cancel_test_run", "refactor_inspect",
})
Profile = Literal["full", "core", "read_only"]


def _served(spec: ToolSpec, profile: Profile) -> bool:
    if profile == "core":
        return spec.name in CORE_TOOLS
    if profile == "read_only":
        return spec.read_only or spec.name in RECOVERY_TOOLS
    return True


class ToolRegistry:
    """The tools a server serves under its profile, in a deterministic order (category, then name)."""

    def __init__(self, specs: list[ToolSpec], profile: Profile = "core",
                 switched_off: Mapping[str, str] | None = None) -> None:
        """``switched_off``: tools the configuration turns off (not served under any profile), with how to turn
        each back on."""
        names = [s.name for s in specs]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate tool names: {duplicates}")
        ordered = sorted(specs, key=lambda s: (s.category, s.name))
        for spec in ordered:
            _action_fields(spec.params)  # every action tool states which actions use each argument (TypeError)
        self.profile: Profile = profile
        self._specs = {s.name: s for s in ordered if _served(s, profile)}
        self._withheld = frozenset(s.name for s in ordered if not _served(s, profile))
        self._switched_off = dict(switched_off or {})
        self._mention = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")\b")

    def __iter__(self) -> Any:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def withheld(self, name: str) -> bool:
        """A tool that exists but the profile does not serve (answered 1006, not 1004)."""
        return name in self._withheld

    def names(self) -> list[str]:
        return list(self._specs)

    def withheld_named(self, text: str) -> list[str]:
        """The tools ``text`` names (as whole words) that this profile does not serve: a hint naming one sends the
        agent to a 1006 it cannot act on (QA33 #4)."""
        return sorted(set(self._mention.findall(text)) & self._withheld) if self._withheld else []

    def not_served(self, name: str) -> CodePlaneError:
        """Why ``name`` cannot be called (or described) here: 1006 for a tool the profile withholds, saying how to
        serve it; 1004 for no tool of that name, with the closest names."""
        if self.withheld(name):
            return CodePlaneError(
                ErrorCode.TOOL_NOT_IN_PROFILE,
                f"{name} is not served under tools.profile={self.profile}; start the server with --profile full "
                "(or set tools.profile) to use it", details={"tool": name, "profile": self.profile})
        if name in self._switched_off:
            return CodePlaneError(ErrorCode.UNKNOWN_TOOL, f"{name}: {self._switched_off[name]}",
                                  details={"tool": name})
        close = difflib.get_close_matches(name, sorted([*self._specs, *self._withheld]), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else "; call describe to list tools"
        # No list of every name: the client has tools/list, and the answer's details line repeated ~40 names (QA52).
        return CodePlaneError(ErrorCode.UNKNOWN_TOOL, f"no tool named {name!r}{hint}", details={"tool": name})
