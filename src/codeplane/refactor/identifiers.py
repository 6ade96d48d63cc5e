"""Is a new name a legal identifier in the target's language? (spec §8 rename, issue 9).

Checked before any plan is built, so a rename never writes ``class`` or ``2x`` into a file. Keyword lists
are the reserved words a binding may not use; contextual/soft keywords (Python ``match``, TS ``type``) are
legal identifiers and therefore allowed. Languages without a list here get the generic identifier check.
"""

from __future__ import annotations

import keyword
import re

from codeplane.core.errors import CodePlaneError, ErrorCode


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_JS_RESERVED = _words("""
break case catch class const continue debugger default delete do else enum export extends false finally
for function if import in instanceof new null return super switch this throw true try typeof var void
while with yield let static implements interface package private protected public await
""")

_GO_RESERVED = _words("""
break case chan const continue default defer else fallthrough for func go goto if import interface map
package range return select struct switch type var
""")

_RUST_RESERVED = _words("""
as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod
move mut pub ref return self Self static struct super trait true type unsafe use where while abstract become
box do final macro override priv typeof unsized virtual yield try gen
""")

_JAVA_RESERVED = _words("""
abstract assert boolean break byte case catch char class const continue default do double else enum
extends final finally float for goto if implements import instanceof int interface long native new package
private protected public return short static strictfp super switch synchronized this throw throws transient
try void volatile while true false null _
""")

_CSHARP_RESERVED = _words("""
abstract as base bool break byte case catch char checked class const continue decimal default delegate do
double else enum event explicit extern false finally fixed float for foreach goto if implicit in int interface
internal is lock long namespace new null object operator out override params private protected public readonly
ref return sbyte sealed short sizeof stackalloc static string struct switch this throw true try typeof uint
ulong unchecked unsafe ushort using virtual void volatile while
""")

_RUBY_RESERVED = _words("""
BEGIN END alias and begin break case class def defined? do else elsif end ensure false for if in module next
nil not or redo rescue retry return self super then true undef unless until when while yield __FILE__
__LINE__ __ENCODING__
""")

_PHP_RESERVED = _words("""
abstract and array as break callable case catch class clone const continue declare default do echo else
elseif empty enddeclare endfor endforeach endif endswitch endwhile eval exit extends final finally fn for
foreach function global goto if implements include include_once instanceof insteadof interface isset list
match namespace new or print private protected public readonly require require_once return static switch
throw trait try unset use var while xor yield
""")

#: Reserved words per §8.4.1 family key. ``javascript`` covers JS and TS (the index uses one family).
RESERVED: dict[str, frozenset[str]] = {
    "python": frozenset(keyword.kwlist),
    "javascript": _JS_RESERVED,
    "go": _GO_RESERVED,
    "rust": _RUST_RESERVED,
    "jvm": _JAVA_RESERVED,
    "dotnet": _CSHARP_RESERVED,
    "ruby": _RUBY_RESERVED,
    "php": _PHP_RESERVED,
}

_ASCII_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RUBY_METHOD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[?!=]?\Z")


def _is_identifier(family: str, name: str) -> bool:
    if family == "python":
        return name.isidentifier()
    if family == "javascript":
        # ECMAScript IdentifierName is ID_Start/ID_Continue plus ``$``; Python's XID check is the same set
        # for practical purposes once ``$`` is mapped to a letter-like character.
        return name.replace("$", "_").isidentifier()
    if family == "ruby":
        return bool(_RUBY_METHOD.match(name))
    if family in ("rust", "go", "jvm", "dotnet"):
        return name.isidentifier()
    return bool(_ASCII_IDENT.match(name))


def identifier_problem(family: str | None, name: str) -> str | None:
    """Why ``name`` cannot be an identifier in ``family``, or ``None`` if it can."""
    if not name:
        return "the new name is empty"
    if name != name.strip() or any(ch.isspace() for ch in name):
        return "the new name contains whitespace"
    fam = family or ""
    if not _is_identifier(fam, name):
        return f"{name!r} is not an identifier in {fam or 'this language'}"
    if name in RESERVED.get(fam, frozenset()):
        return f"{name!r} is a reserved word in {fam}"
    return None


def validate_identifier(family: str | None, name: str) -> None:
    """Raise 4006 ``REFACTOR_INVALID_NAME`` unless ``name`` is a legal, non-reserved identifier."""
    problem = identifier_problem(family, name)
    if problem is not None:
        raise CodePlaneError(ErrorCode.REFACTOR_INVALID_NAME, problem,
                             details={"new_name": name, "language": family or "unknown"})
