"""Whether a member added to a type obliges every use of the type to supply it (pure, syntactic).

An addition is usually safe: nothing used the new name before. A *required* member of a type is not: every value
built or implementation written for the type now lacks it (tsc's TS2741 on an object literal typed with an
interface, Go's "does not implement", a dataclass constructor call missing an argument). Decided from the text
alone, and only where the language makes the member required:

- TypeScript: a property or method of an interface or type literal without ``?``; an ``abstract`` class member.
- Go: a method of an interface (a struct field is not: keyed literals still compile, per the Go 1 guarantee).
- Java: an interface method without ``default``/``static``/``private``; an ``abstract`` method.
- Rust: a trait method without a default body.
- Python: a field without a default of a dataclass/attrs class, ``NamedTuple`` or total ``TypedDict``
  (a field with a default, ``ClassVar`` or ``init=False`` is not); an ``@abstractmethod`` (subclasses no longer
  instantiate).

What is not listed (a Go struct field, a plain class attribute, a Protocol method) stays a low-risk addition.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from codeplane.analysis.models import DefState
from codeplane.index.structural.leading import attributed_start

#: Tag of an added member that every use of its type must now supply (``report.assess``: breaking).
REQUIRED_MEMBER = "required_member_added"

_TS = (".ts", ".tsx", ".mts", ".cts")
_PY = (".py", ".pyi")
_DATACLASS = re.compile(r"^@(?:dataclasses\.dataclass|dataclass|attr\.s|attr\.attrs|attrs?\.(?:define|frozen|mutable)"
                        r"|define|frozen|mutable|pydantic\.dataclasses\.dataclass)\b(?P<args>.*)$")
_RECORD_BASES = re.compile(r"\b(?:NamedTuple|BaseModel)\b")
_TYPED_DICT = re.compile(r"\bTypedDict\b")
_FIELD_CALL = re.compile(r"^(?:dataclasses\.field|field|attr\.ib|attrs?\.field|attr\.attrib|Field|pydantic\.Field)"
                         r"\s*\((?P<args>.*)\)\s*$", re.S)


def required(path: str, member: DefState, owner: DefState, lines: Sequence[str] | None) -> bool:
    """Whether ``member``, added to ``owner`` (its container on the same side), must be supplied by every use of
    ``owner``. ``lines``: that side's text (None: epoch snapshots, where Python fields cannot be read)."""
    shown = " ".join(member.display_name.split())
    if path.endswith(_TS):
        if owner.kind in ("interface", "type") and member.kind in ("field", "method"):
            return not _optional(shown, member.name)
        return member.kind in ("field", "method") and shown.startswith(("abstract ", "protected abstract ",
                                                                        "public abstract "))
    if path.endswith(".go"):
        return owner.kind == "interface" and member.kind == "method"
    if path.endswith(".java"):
        if member.kind != "method":
            return False
        words = set(shown.split("(", 1)[0].split())
        return "abstract" in words or (owner.kind == "interface" and not words & {"default", "static", "private"})
    if path.endswith(".rs"):
        return owner.kind == "trait" and member.kind == "method" and shown.endswith(";")
    if path.endswith(_PY) and lines is not None:
        return _python(path, member, owner, lines)
    return False


def _optional(shown: str, name: str) -> bool:
    """``verbose?: boolean`` / ``stop?(): void``: the ``?`` right after the name."""
    at = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", shown) if name else None
    return at is not None and shown[at.end():].lstrip().startswith("?")


def _python(path: str, member: DefState, owner: DefState, lines: Sequence[str]) -> bool:
    if member.kind in ("method", "function"):
        top = attributed_start(path, lines, member.start_line)
        return any(re.match(r"@(?:abc\.)?abstractmethod\b", lines[n - 1].strip())
                   for n in range(top, member.start_line))
    if member.kind != "variable" or not 1 <= member.start_line <= len(lines):
        return False
    if not _record_like(path, owner, lines):
        return False
    text = " ".join(lines[n - 1].strip() for n in range(member.start_line, min(member.end_line, len(lines)) + 1))
    annotation, eq, value = _split_field(text, member.name)
    if annotation is None or re.search(r"\bClassVar\b", annotation):
        return False  # not an annotated field (``x = 1``), or a class variable
    if not eq:
        return True
    call = _FIELD_CALL.match(value)
    if call is None:
        return False  # a default value
    args = call.group("args")
    if re.search(r"\binit\s*=\s*False\b", args):
        return False
    if re.search(r"\b(?:default|default_factory|factory)\s*=", args):
        return False
    first = args.split(",", 1)[0].strip()
    # ``Field(0)``: pydantic's first positional is the default; ``Field(...)`` marks the field required.
    return not (value.startswith(("Field", "pydantic.Field")) and first and first != "..." and "=" not in first)


def _split_field(text: str, name: str) -> tuple[str | None, bool, str]:
    """(annotation, whether there is ``=``, the value) of ``name: T = value``; annotation None when not annotated."""
    found = re.match(rf"{re.escape(name)}\s*:(?P<rest>.*)$", text)
    if found is None:
        return None, False, ""
    rest = found.group("rest")
    depth = 0
    for i, ch in enumerate(rest):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "=" and depth == 0 and rest[i + 1:i + 2] != "=" and rest[i - 1:i] not in ("!", "<", ">", "="):
            return rest[:i].strip(), True, rest[i + 1:].strip()
    return rest.strip(), False, ""


def _record_like(path: str, owner: DefState, lines: Sequence[str]) -> bool:
    """A class whose annotated fields are its constructor's (or literal's) required keys."""
    if owner.kind != "class":
        return False
    header = " ".join(owner.display_name.split())
    if _RECORD_BASES.search(header):
        return True
    if _TYPED_DICT.search(header):
        return not re.search(r"\btotal\s*=\s*False\b", header)
    top = attributed_start(path, lines, owner.start_line)
    for n in range(top, owner.start_line):
        found = _DATACLASS.match(lines[n - 1].strip())
        if found is not None and not re.search(r"\binit\s*=\s*False\b", found.group("args")):
            return True
    return False
