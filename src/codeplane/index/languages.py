"""Which language a path is written in, and which §8.4.1 family owns it.

One table used by every index tier: the lexical index stores ``family`` per file, the structural index
picks its tree-sitter grammar and adapter from ``language``/``grammar``. Detection is by file name
(``detect``), with one exception the structural index applies where it has the text (``detect_source``): a
``.h`` header is C++ when its text says so, as GitHub's linguist decides. Both are deterministic: the same
name and text give the same language.

- ``family``: one of the §8.4.1 keys (``FAMILIES``) or ``None``. C and C++ have no §8.4.1 family (the
  list is closed), so they are indexed structurally but never owned by a context.
- ``language``: a finer name shown to users (``typescript`` vs ``javascript``, ``yaml`` vs ``json``).
- ``grammar``: the ``tree-sitter-language-pack`` grammar name, or ``None`` when no structural
  extraction exists for the language (Vue, Cython, ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: §8.4.1 "Unified Families": no other family strings are valid.
FAMILIES: tuple[str, ...] = (
    "javascript", "python", "go", "rust", "jvm", "dotnet", "ruby", "php", "swift", "elixir", "haskell",
    "terraform", "sql", "docker", "markdown", "json_yaml", "protobuf", "graphql", "config",
)
#: Families whose files are data, not code (§8.4.5 Type B probe).
DATA_FAMILIES: frozenset[str] = frozenset(
    {"terraform", "sql", "docker", "markdown", "json_yaml", "protobuf", "graphql", "config"})


@dataclass(frozen=True)
class LanguageInfo:
    language: str
    family: str | None
    grammar: str | None


def _info(language: str, family: str | None, grammar: str | None = None) -> LanguageInfo:
    return LanguageInfo(language=language, family=family, grammar=grammar)


_PY = _info("python", "python", "python")
_JS = _info("javascript", "javascript", "javascript")
_TS = _info("typescript", "javascript", "typescript")
_TSX = _info("tsx", "javascript", "tsx")
_C = _info("c", None, "c")
_CPP = _info("cpp", None, "cpp")
_YAML = _info("yaml", "json_yaml", "yaml")
_DOCKER = _info("dockerfile", "docker", "dockerfile")

_BY_EXTENSION: dict[str, LanguageInfo] = {
    ".py": _PY, ".pyi": _PY, ".pyw": _PY,
    ".pyx": _info("cython", "python"), ".pxd": _info("cython", "python"), ".pxi": _info("cython", "python"),
    ".js": _JS, ".jsx": _JS, ".mjs": _JS, ".cjs": _JS,
    ".ts": _TS, ".cts": _TS, ".mts": _TS, ".tsx": _TSX,
    ".vue": _info("vue", "javascript"), ".svelte": _info("svelte", "javascript"),
    ".astro": _info("astro", "javascript"),
    ".go": _info("go", "go", "go"),
    ".rs": _info("rust", "rust", "rust"),
    ".java": _info("java", "jvm", "java"),
    ".kt": _info("kotlin", "jvm", "kotlin"), ".kts": _info("kotlin", "jvm", "kotlin"),
    ".scala": _info("scala", "jvm"), ".sc": _info("scala", "jvm"),
    ".cs": _info("csharp", "dotnet", "csharp"),
    ".fs": _info("fsharp", "dotnet"), ".fsx": _info("fsharp", "dotnet"), ".vb": _info("vbnet", "dotnet"),
    ".rb": _info("ruby", "ruby", "ruby"), ".rake": _info("ruby", "ruby", "ruby"),
    ".php": _info("php", "php", "php"),
    ".swift": _info("swift", "swift"),
    ".ex": _info("elixir", "elixir"), ".exs": _info("elixir", "elixir"),
    ".hs": _info("haskell", "haskell"),
    ".tf": _info("hcl", "terraform", "hcl"), ".hcl": _info("hcl", "terraform", "hcl"),
    ".sql": _info("sql", "sql", "sql"),
    ".dockerfile": _DOCKER,
    ".md": _info("markdown", "markdown", "markdown"), ".markdown": _info("markdown", "markdown", "markdown"),
    ".mdx": _info("markdown", "markdown", "markdown"),
    ".json": _info("json", "json_yaml", "json"), ".jsonc": _info("json", "json_yaml", "json"),
    ".yaml": _YAML, ".yml": _YAML,
    ".toml": _info("toml", "json_yaml", "toml"),
    ".proto": _info("protobuf", "protobuf", "proto"),
    ".graphql": _info("graphql", "graphql", "graphql"), ".gql": _info("graphql", "graphql", "graphql"),
    ".nix": _info("nix", "config", "nix"),
    ".c": _C, ".h": _C,
    ".cc": _CPP, ".cpp": _CPP, ".cxx": _CPP, ".c++": _CPP, ".hpp": _CPP, ".hh": _CPP, ".hxx": _CPP,
    ".h++": _CPP, ".ipp": _CPP, ".inl": _CPP,
}

#: The suffixes of the files parsed as C or C++ (a ``.h`` may be C++ by its content: ``detect_source``), and of those
#: always parsed as C++: every module that tells C-family files by name takes them from here, so a header-only
#: library's ``.inl``/``.ipp`` is one program with the ``.hpp`` that includes it.
C_FAMILY_SUFFIXES = tuple(sorted(s for s, info in _BY_EXTENSION.items() if info in (_C, _CPP)))
CPP_SUFFIXES = tuple(sorted(s for s, info in _BY_EXTENSION.items() if info == _CPP))

_BY_NAME: dict[str, LanguageInfo] = {
    "Dockerfile": _DOCKER, "Containerfile": _DOCKER,
    "docker-compose.yml": _info("yaml", "docker", "yaml"), "docker-compose.yaml": _info("yaml", "docker", "yaml"),
    "Gemfile": _info("ruby", "ruby", "ruby"), "Rakefile": _info("ruby", "ruby", "ruby"),
}


def detect(path: str) -> LanguageInfo | None:
    """The language of ``path`` (canonical relative POSIX path), or ``None`` for unknown files."""
    name = path.rsplit("/", 1)[-1]
    info = _BY_NAME.get(name)
    if info is not None:
        return info
    if name.startswith("Dockerfile."):
        return _DOCKER
    dot = name.rfind(".")
    if dot <= 0:
        return None
    return _BY_EXTENSION.get(name[dot:].lower())


#: What makes a ``.h`` header C++: linguist's ``cpp`` heuristic (word boundaries added). Parsed as C, NumPy's
#: C++ headers came out with 7x the error nodes and 40 % of the definitions, and took 1.6x as long. Each line
#: pattern starts with the newline before it (the text gets one in front), a literal the regex engine scans for
#: quickly; the rest are plain substrings, confirmed by a regex only where one occurs.
_CPP_LINE = re.compile(
    r"\n[ \t]*(?:#[ \t]*include[ \t]*<(?:cstdint|string|vector|map|list|array|bitset|queue|stack|forward_list"
    r"|unordered_map|unordered_set|(?:i|o|io)stream)>|template\s*<|(?:try|constexpr)\b|catch\s*\("
    r"|(?:class|(?:using[ \t]+)?namespace)\s+\w|(?:private|public|protected):[ \t]*$)", re.MULTILINE)
_CPP_MARKS = ("__has_cpp_attribute", "__cplusplus >= 2017")
_STD_NAME = re.compile(r"\bstd::\w")
#: An Objective-C header stays C (there is no Objective-C grammar here); linguist tries this before C++ too.
_OBJC_LINE = re.compile(
    r"\n[ \t]*(?:@(?:interface|class|protocol|property|end|synchronised|selector|implementation)\b"
    r"|#import\s+.+\.h[\">])")


def _cpp_header(text: str) -> bool:
    lined = "\n" + text
    cpp = (_CPP_LINE.search(lined) is not None or any(mark in text for mark in _CPP_MARKS)
           or ("std::" in text and _STD_NAME.search(text) is not None))
    return cpp and _OBJC_LINE.search(lined) is None


def detect_source(path: str, text: str) -> LanguageInfo | None:
    """``detect(path)``, except that a ``.h`` header whose ``text`` is C++ (and not Objective-C) is C++: the
    structural index parses it with the C++ grammar. Only the structural tier uses it; the lexical tier's
    family is the same for both (none)."""
    info = detect(path)
    if info is _C and path.lower().endswith(".h") and _cpp_header(text):
        return _CPP
    return info


def grammar_of(language: str) -> str | None:
    """The tree-sitter grammar used for a ``language`` name (``tsx`` -> ``tsx``, ``protobuf`` -> ``proto``)."""
    for info in (*_BY_EXTENSION.values(), *_BY_NAME.values()):
        if info.language == language:
            return info.grammar
    return None


def family_of(path: str) -> str | None:
    """The §8.4.1 family key of ``path`` or ``None``."""
    info = detect(path)
    return info.family if info else None


def scope_family(name: str) -> str | None:
    """The family a search scope's ``languages`` entry selects: a family key as is, a language name as its family
    (``typescript`` -> ``javascript``); ``None`` for a name no file is indexed under (unknown, or a language with
    no family, like ``c``)."""
    infos = (*_BY_EXTENSION.values(), *_BY_NAME.values())
    if any(info.family == name for info in infos):
        return name
    return next((info.family for info in infos if info.language == name), None)


#: A language a scope names that takes another's files along (``typescript``: ``.tsx`` is its own grammar).
_ALSO: dict[str, tuple[str, ...]] = {"typescript": ("tsx",)}


def language_suffixes(name: str) -> tuple[str, ...]:
    """The file suffixes of a language narrower than its family (``typescript``: ``.cts``, ``.mts``, ``.ts``,
    ``.tsx``), sorted: a scope naming it selects those files, as ``rg -t ts`` does (it selected the whole family,
    ``.js`` included). Empty for a family key and for a language some files are known by name (``dockerfile``)."""
    if name in FAMILIES:
        return ()
    names = {name, *_ALSO.get(name, ())}
    if any(info.language in names for info in _BY_NAME.values()):
        return ()
    return tuple(sorted(ext for ext, info in _BY_EXTENSION.items() if info.language in names))


def language_names() -> list[str]:
    """Every family key and language name, sorted (what a scope may say)."""
    infos = (*_BY_EXTENSION.values(), *_BY_NAME.values())
    return sorted({info.family for info in infos if info.family} | {info.language for info in infos})
