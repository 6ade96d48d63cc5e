"""§8.4.3 Phase A.2: Tier 1 workspace fences decide which nested package roots belong to the workspace.

Applies to ``javascript`` (``package.json`` workspaces, ``pnpm-workspace.yaml``), ``go`` (``go.work``), ``rust``
(``Cargo.toml`` ``[workspace]``) and ``jvm`` (``settings.gradle[.kts]`` includes). The closest enclosing fence
wins; a listed root stays pending, an unlisted one is detached. A Gradle settings file whose includes are
not all plain string literals is permissive (every root stays pending), as are unreadable markers.
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib

import yaml

from codeplane.index.structural.contexts.discovery import Candidate
from codeplane.index.structural.contexts.globs import is_inside, matches, relative_to

FENCED = ("javascript", "go", "rust", "jvm")
_INCLUDE = re.compile(r"^\s*include\b(.*)$", re.MULTILINE)
_LITERAL = re.compile(r"""^[\s(]*(?:(['"])[^'"$]*\1\s*,?\s*)+\)?\s*$""")
_STRING = re.compile(r"""(['"])([^'"$]*)\1""")


def _norm(path: str) -> str:
    cleaned = posixpath.normpath(path.strip().rstrip("/")) if path.strip() else "."
    return "" if cleaned == "." else cleaned.removeprefix("./")


def _js_members(name: str, text: str) -> list[str] | None:
    try:
        if name == "pnpm-workspace.yaml":
            data = yaml.safe_load(text) or {}
            packages = data.get("packages") if isinstance(data, dict) else None
        else:
            data = json.loads(text)
            workspaces = data.get("workspaces") if isinstance(data, dict) else None
            packages = workspaces.get("packages") if isinstance(workspaces, dict) else workspaces
    except (ValueError, yaml.YAMLError):
        return None
    if not isinstance(packages, list):
        return None
    return [str(p) for p in packages if isinstance(p, str)]


def _go_members(text: str) -> list[str]:
    members: list[str] = []
    in_block = False
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if in_block:
            if line.startswith(")"):
                in_block = False
            elif line:
                members.append(_norm(line.strip('"')))
        elif line.startswith("use"):
            rest = line[3:].strip()
            if rest.startswith("("):
                in_block = True
            elif rest:
                members.append(_norm(rest.strip('"')))
    return members


def _rust_members(text: str) -> list[str] | None:
    try:
        workspace = tomllib.loads(text).get("workspace")
    except tomllib.TOMLDecodeError:
        return None
    if not isinstance(workspace, dict):
        return None
    members = [str(m) for m in workspace.get("members", []) if isinstance(m, str)]
    excluded = [f"!{m}" for m in workspace.get("exclude", []) if isinstance(m, str)]
    return members + excluded


def _gradle_members(text: str) -> list[str] | None:
    members: list[str] = []
    for match in _INCLUDE.finditer(text):
        args = match.group(1)
        if not _LITERAL.match(args):
            return None  # permissive mode: variables or concatenation
        for _, name in _STRING.findall(args):
            members.append(name.strip(":").replace(":", "/"))
    return members


def members_of(fence: Candidate, contents: dict[str, str]) -> list[str] | None:
    """Member globs (relative to the fence root; ``!glob`` excludes), or None when the fence is not strict."""
    for path in fence.markers:
        name = posixpath.basename(path)
        text = contents.get(path)
        if text is None:
            continue
        if fence.family == "javascript" and name in ("package.json", "pnpm-workspace.yaml"):
            found = _js_members(name, text)
        elif fence.family == "go" and name == "go.work":
            found = _go_members(text)
        elif fence.family == "rust" and name == "Cargo.toml":
            found = _rust_members(text)
        elif fence.family == "jvm" and name in ("settings.gradle", "settings.gradle.kts"):
            found = _gradle_members(text)
        else:
            continue
        if found is not None:
            return found
    return None


def _listed(relative: str, members: list[str]) -> bool:
    positive = tuple(_norm(m) for m in members if not m.startswith("!"))
    negative = tuple(_norm(m[1:]) for m in members if m.startswith("!"))
    return matches(positive, relative) and not matches(negative, relative)


def apply_authority(candidates: list[Candidate], contents: dict[str, str]) -> None:
    """Mark Tier 2 candidates outside their closest strict fence's member list as ``detached``."""
    for family in FENCED:
        fences = [(c, members_of(c, contents)) for c in candidates if c.family == family and c.tier == 1]
        for candidate in candidates:
            if candidate.family != family or candidate.tier != 2:
                continue
            enclosing = [(c, m) for c, m in fences if c.root != candidate.root and is_inside(candidate.root, c.root)]
            if not enclosing:
                continue
            # The closest fence is authoritative, even when it is not strict (then nothing is detached).
            fence, members = max(enclosing, key=lambda item: len(item[0].root))
            if members is not None and not _listed(relative_to(candidate.root, fence.root), members):
                candidate.status = "detached"
