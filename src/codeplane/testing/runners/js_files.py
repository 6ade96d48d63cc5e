"""Which files Jest and Vitest run as tests: the project's own patterns when its config states them plainly.

Jest reads ``testMatch`` (globs on the absolute path), ``testRegex``, ``testPathIgnorePatterns`` (regexes searched
in the absolute path) and ``roots`` from ``package.json``'s ``"jest"`` key, ``jest.config.json``, or a
``jest.config.{js,ts,mjs,cjs}`` whose values are literal arrays of strings. Vitest reads ``test.include`` and
``test.exclude`` (globs on the project-relative path) from ``vitest.config.*`` or ``vite.config.*`` the same way:
the nearest such config up the tree, as Vitest loads it (its globs still apply where Vitest runs, the project).

A config is code: only the common static forms are read (a literal key with a literal string or array of
strings). A config that sets these keys some other way (a spread, a variable, an import of another config,
``projects``), one that would not load (a syntax error, a ``throw`` at load time, a missing relative import:
``jsscan``), or a ``package.json`` that is no JSON object or whose ``"jest"`` key is no object, is *unread*: the
runner's default patterns apply, :attr:`JsTestFiles.unread` names the file and :attr:`JsTestFiles.problem` says
why, so that discovery's answer (and an impact selection's tier) can say the test files may be others. Without
these settings, the runner's defaults apply: those of the version the project runs (``installed_major``), since
Jest 30 added ``.mjs``/``.cjs`` to its ``testMatch`` and Vitest 4 cut its ``exclude`` down to ``node_modules`` and
``.git``; a version not found gets what every version runs, so a file listed is never one the runner skips.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from codeplane.testing.runners.jsglob import glob_regex
from codeplane.testing.runners.jsscan import load_problem

#: Jest's default ``testMatch`` up to 29: no ``.mjs``/``.cjs`` (Jest 29 never runs ``x.test.cjs``). It is also
#: what every version runs, so it serves when the installed version is unknown: a file listed is a file run.
JEST_MATCH = ("**/__tests__/**/*.[jt]s?(x)", "**/?(*.)+(spec|test).[tj]s?(x)")
#: Jest 30's default ``testMatch`` (adds ``.mjs``/``.cjs``/``.mts``/``.cts``).
JEST30_MATCH = ("**/__tests__/**/*.?([cm])[jt]s?(x)", "**/?(*.)+(spec|test).?([cm])[jt]s?(x)")
VITEST_INCLUDE = ("**/*.{test,spec}.?(c|m)[jt]s?(x)",)
#: Vitest's default ``exclude`` up to 3 (kept when the version is unknown: a file it lists, every version runs).
VITEST_EXCLUDE = ("**/node_modules/**", "**/dist/**", "**/cypress/**", "**/.{idea,git,cache,output,temp}/**",
                  "**/{karma,rollup,webpack,vite,vitest,jest,ava,babel,nyc,cypress,tsup,build,eslint,prettier}"
                  ".config.*")
#: Vitest 4's default ``exclude``: it runs test files under ``dist/`` and ``cypress/`` too.
VITEST4_EXCLUDE = ("**/node_modules/**", "**/.git/**")
_JEST_SCRIPTS = tuple(f"jest.config.{ext}" for ext in ("js", "ts", "mjs", "cjs"))
_VITEST_SCRIPTS = tuple(f"{tool}.config.{ext}" for tool in ("vitest", "vite")
                        for ext in ("ts", "mts", "cts", "js", "mjs", "cjs"))
_JEST_KEYS = ("testMatch", "testRegex", "testPathIgnorePatterns", "roots")
#: What makes a config's patterns depend on code we do not evaluate.
_DYNAMIC = re.compile(r"\.\.\.|\b(?:projects|rootDir|workspace)\s*:|require\(\s*['\"]\.|from\s+['\"]\.|mergeConfig")
_DEFAULT_SPREAD = re.compile(r"\.\.\.(?:configDefaults\.exclude|defaultExclude)\b\s*,?")
_STRING = re.compile(r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\$]|\\.)*)`""")


#: Why a config counts as unread when it loads but sets its patterns in a form this module does not evaluate.
NOT_LITERAL = "it sets its test patterns in a form CodePlane does not evaluate"


class Unreadable(ValueError):
    """A setting present in a config in a form this module does not evaluate (``args``: the file, then why)."""

    @property
    def problem(self) -> str:
        return str(self.args[1]) if len(self.args) > 1 else NOT_LITERAL


@dataclass(frozen=True)
class JsTestFiles:
    """A project's test-file rule. ``matches`` takes a project-relative path."""

    project_dir: Path
    include: tuple[re.Pattern[str], ...]
    #: Globs (vitest) or regexes (jest ``testPathIgnorePatterns``) that exclude.
    exclude: tuple[re.Pattern[str], ...]
    #: Jest: ``include``/``exclude`` apply to the absolute path (vitest: the project-relative one).
    absolute: bool
    #: ``include`` holds regexes found anywhere in the path (jest ``testRegex``), not whole-path globs.
    include_search: bool = False
    #: Jest ``roots``: project-relative directories test files must be under ("": anywhere).
    roots: tuple[str, ...] = ()
    #: The config file whose patterns could not be read (the defaults were used), or "".
    unread: str = ""
    #: Why ``unread`` could not be read (it would not load, or sets its patterns in a form not evaluated here).
    problem: str = ""

    def matches(self, rel: str) -> bool:
        if self.roots and not any(root in ("", ".") or rel == root or rel.startswith(root + "/")
                                  for root in self.roots):
            return False
        path = f"{self.project_dir.as_posix()}/{rel}" if self.absolute else rel
        if self.absolute:
            found = any(p.search(path) if self.include_search else p.match(path) for p in self.include)
            return found and not any(p.search(path) for p in self.exclude)
        return any(p.match(path) for p in self.include) and not any(p.match(path) for p in self.exclude)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), text, flags=re.DOTALL)


def _strings(literal: str) -> list[str]:
    """The strings of a JS literal array or string; :class:`Unreadable` if it holds anything else."""
    body = literal.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    found = [_unescape(next(g for g in m.groups() if g is not None)) for m in _STRING.finditer(body)]
    rest = re.sub(r"//[^\n]*|/\*.*?\*/", "", _STRING.sub("", body), flags=re.DOTALL)
    if rest.replace(",", "").strip():
        raise Unreadable(literal)
    return found


def _top_level(text: str) -> str:
    """``text`` (an object's body) with its nested ``{…}`` blocks blanked: a key found then is the object's own."""
    out, depth, i = [], 0, 0
    while i < len(text):
        string = _STRING.match(text, i)
        if string:
            out.append(string.group(0) if depth == 0 else "")
            i = string.end()
            continue
        char = text[i]
        depth += char == "{"
        if depth == 0:
            out.append(char)
        depth -= char == "}" and depth > 0
        i += 1
    return "".join(out)


def _block(text: str, key: str) -> str | None:
    """The body of ``key: { … }`` (the first one), or None."""
    start = re.search(rf"\b{key}\s*:\s*\{{", text)
    if start is None:
        return None
    depth, i = 1, start.end()
    while i < len(text) and depth:
        string = _STRING.match(text, i)
        if string:
            i = string.end()
            continue
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start.end():i - 1]


def _script_values(text: str, keys: tuple[str, ...]) -> dict[str, list[str]]:
    """Literal values of ``keys`` in a config script's object text; :class:`Unreadable` when one is not literal."""
    values: dict[str, list[str]] = {}
    for key in keys:
        found = re.search(rf"""(?:^|[\s,{{])['"]?{key}['"]?\s*:\s*""", text)
        if found is None:
            continue
        rest = text[found.end():]
        literal = re.match(r"""\[[^\]]*\]|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|/(?:[^/\\\n]|\\.)+/""", rest)
        if literal is None:
            raise Unreadable(key)
        value = literal.group(0)
        # A regex literal (``testRegex: /x/``) is its source.
        values[key] = [value[1:-1]] if value.startswith("/") else _strings(value)
    return values


def installed_major(project_dir: Path, package: str, executable: str | None = None) -> int | None:
    """The major version of ``package`` the project runs: the ``node_modules/<package>`` Node resolves from
    ``project_dir`` (nearest first, up to the filesystem root, as ``require`` does), else the package holding
    ``executable`` (a ``.bin`` link or a global install). None when neither says."""
    places = [d / "node_modules" / package for d in (project_dir, *project_dir.parents)]
    if executable:
        resolved = Path(executable).resolve()
        places += [d for d in resolved.parents if d.name == package and (d / "package.json").is_file()][:1]
    for place in places:
        try:
            data = json.loads((place / "package.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        version = re.match(r"\s*v?(\d+)\.", str(data.get("version", ""))) if isinstance(data, dict) else None
        if version:
            return int(version.group(1))
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _jest_settings(project_dir: Path, package: dict[str, object]) -> tuple[dict[str, list[str]], str]:
    """(literal settings, the config file) of a jest project."""
    broken = _package_problem(project_dir)
    if broken:
        raise Unreadable("package.json", broken)
    inline = package.get("jest")
    if isinstance(inline, dict):
        return _json_values(inline, "package.json"), "package.json"
    if inline is not None:
        raise Unreadable("package.json", f'its "jest" key is a {_json_type(inline)}, not an object (jest refuses it)')
    if (project_dir / "jest.config.json").is_file():
        try:
            data = json.loads(_read(project_dir / "jest.config.json"))
        except json.JSONDecodeError as exc:
            raise Unreadable("jest.config.json", f"it is not valid JSON ({exc.msg}, line {exc.lineno})") from exc
        if not isinstance(data, dict):
            raise Unreadable("jest.config.json", f"it holds a {_json_type(data)}, not an object")
        return _json_values(data, "jest.config.json"), "jest.config.json"
    for name in _JEST_SCRIPTS:
        text = _read(project_dir / name)
        if text:
            problem = load_problem(text, project_dir)
            if problem:
                raise Unreadable(name, problem)
            mentioned = any(re.search(rf"\b{key}\b", text) for key in _JEST_KEYS)
            if mentioned and _DYNAMIC.search(text):
                raise Unreadable(name)
            try:
                return _script_values(text, _JEST_KEYS), name
            except Unreadable as exc:
                raise Unreadable(name) from exc
    return {}, ""


def _json_type(value: object) -> str:
    return {str: "string", bool: "boolean", int: "number", float: "number", list: "list"}.get(type(value), "null")


def _package_problem(project_dir: Path) -> str:
    """Why the project's ``package.json`` (where jest may be configured) cannot be read as an object; "" when it
    can or there is none."""
    path = project_dir / "package.json"
    if not path.is_file():
        return ""
    try:
        data = json.loads(_read(path))
    except json.JSONDecodeError as exc:
        return f"it is not valid JSON ({exc.msg}, line {exc.lineno})"
    return "" if isinstance(data, dict) else f"it holds a {_json_type(data)}, not an object"


def _json_values(data: dict[str, object], name: str) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for key in _JEST_KEYS:
        value = data.get(key)
        if isinstance(value, str):
            values[key] = [value]
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            values[key] = [str(v) for v in value]
        elif value is not None:
            raise Unreadable(name)
    if "projects" in data or "rootDir" in data:
        raise Unreadable(name)
    return values


def _rooted(pattern: str, project_dir: Path) -> str:
    return pattern.replace("<rootDir>", project_dir.as_posix())


def jest_test_files(project_dir: Path, package: dict[str, object], major: int | None = None) -> JsTestFiles:
    """``major``: the installed Jest's major version (its default ``testMatch`` differs from 30 on)."""
    default_match = JEST30_MATCH if major is not None and major >= 30 else JEST_MATCH
    try:
        values, source = _jest_settings(project_dir, package)
        unread = problem = ""
    except Unreadable as exc:
        values, source, unread, problem = {}, "", str(exc.args[0]), exc.problem
    try:
        if "testRegex" in values:
            include = tuple(re.compile(_rooted(r, project_dir)) for r in values["testRegex"])
        else:
            include = tuple(glob_regex(_rooted(g, project_dir)) for g in values.get("testMatch", default_match))
        ignore = tuple(re.compile(_rooted(r, project_dir)) for r in values.get("testPathIgnorePatterns",
                                                                               ["/node_modules/"]))
    except re.error:
        include = tuple(glob_regex(g) for g in default_match)
        ignore, unread = (re.compile("/node_modules/"),), unread or source
        problem = problem or "a pattern in it is no regular expression CodePlane can read"
    roots = tuple(_rooted(r, project_dir).removeprefix(project_dir.as_posix()).strip("/")
                  for r in values.get("roots", ()))
    return JsTestFiles(project_dir, include, ignore, absolute=True, include_search="testRegex" in values,
                       roots=roots, unread=unread, problem=problem)


def _vitest_config(project_dir: Path, repo_root: Path | None) -> tuple[str, str, Path] | None:
    """(path relative to ``project_dir``, text, directory) of the config Vitest run in ``project_dir`` loads: the
    nearest ``vitest.config.*``/``vite.config.*`` up the tree (Vitest looks upward), no higher than ``repo_root``
    (None: ``project_dir`` only). Its ``include`` stays relative to ``project_dir``, where Vitest runs."""
    current, up = project_dir, ""
    while True:
        for name in _VITEST_SCRIPTS:
            text = _read(current / name)
            if text:
                return up + name, text, current
        if repo_root is None or current in (repo_root, current.parent):
            return None
        current, up = current.parent, up + "../"


def _vitest_values(config: tuple[str, str, Path] | None, default_exclude: tuple[str, ...],
                   ) -> tuple[dict[str, list[str]], str, str]:
    """(literal ``include``/``exclude``, the config if unread, why) of a Vitest config (``_vitest_config``)."""
    if config is None:
        return {}, "", ""
    name, text, directory = config
    problem = load_problem(text, directory)
    if problem:
        return {}, name, problem
    block = _block(text, "test")
    if block is None:
        return {}, "", ""
    own = _top_level(block)
    # ``[...configDefaults.exclude, 'x']`` is the common way to add to the defaults: read as such.
    defaults = _DEFAULT_SPREAD.search(own) is not None
    own = _DEFAULT_SPREAD.sub("", own)
    if re.search(r"\b(?:include|exclude)\b", own) and _DYNAMIC.search(own):
        return {}, name, NOT_LITERAL
    try:
        values = _script_values(own, ("include", "exclude"))
    except Unreadable:
        return {}, name, NOT_LITERAL
    if defaults:
        values["exclude"] = [*default_exclude, *values.get("exclude", [])]
    return values, "", ""


def vitest_test_files(project_dir: Path, major: int | None = None, repo_root: Path | None = None) -> JsTestFiles:
    """``major``: the installed Vitest's major version (its default ``exclude`` shrank in 4). ``repo_root``: look
    for the config up to there, as Vitest does (``unread`` is then relative to ``project_dir``: ``../x``)."""
    default_exclude = VITEST4_EXCLUDE if major is not None and major >= 4 else VITEST_EXCLUDE
    values, unread, problem = _vitest_values(_vitest_config(project_dir, repo_root), default_exclude)
    include = tuple(glob_regex(g.removeprefix("./")) for g in values.get("include", VITEST_INCLUDE))
    exclude = tuple(glob_regex(g.removeprefix("./")) for g in values.get("exclude", default_exclude))
    return JsTestFiles(project_dir, include, exclude, absolute=False, unread=unread, problem=problem)
