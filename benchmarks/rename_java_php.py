"""Renames on real Java and PHP code from Debian's packages, judged by the project's own build and tests (issue 20).

Sources: ``bsh-src`` (BeanShell 2.0b4: ``/usr/src/bsh-src/bsh.tar.gz``, the interpreter with its bundled ASM, its
Java test classes and its ``.bsh`` test scripts; ``bsh/servlet`` needs a servlet API and is left out) and
``php-guzzlehttp-psr7`` (``/usr/share/php/GuzzleHttp/Psr7``) run by ``phpunit`` against
``php-http-psr7-integration-tests`` (the PSR-7 conformance suite; the six ``*Test.php`` subclasses that bind it to
Guzzle, a PSR-4 bootstrap and a smoke script calling the renamed helpers are written into the copy, so renames
reach them too). Install with ``apt-get install bsh-src php-cli phpunit php-guzzlehttp-psr7
php-http-psr7-integration-tests``.

Each case renames one class, method, static method ("function"), field, constant or property used across files
on a fresh copy (a git repo in a temp dir), through CodePlane's index and refactor service in process, applies the
default selection (high + medium) — and, for a public top-level class, moves its file to the new name as javac
and PSR-4 require (``refactor_move``) — then judges it:
- **builds**: ``javac`` over every Java file (PHP: ``php -l`` over every file);
- **tests**: the BeanShell test scripts (one ``java bsh.Interpreter`` per script) or ``phpunit`` plus the smoke
  script give the same result as on the untouched copy;
- **declarations**: ``javap -p`` of every class (PHP: reflection of every class, function and constant) differs
  from the untouched copy exactly by the rename — the old name becomes the new one in the renamed type, or in the
  renamed member's owner and the types that inherit it, and nowhere else. A member renamed in an unrelated class
  is a precision error; a reference left behind fails the build or the tests (recall).
Reported per case: edits by certainty, the high share of applied edits, ``low`` candidates (never applied), plan
time, the three verdicts, and "no silent misses" checked from outside (``_rename_listing.py``): every whole-word
occurrence of the old name must sit on a line where the plan lists an edit (``unlisted``), and after apply the
occurrences left must be exactly the listed edits not applied (``left``). No real C# sources are packaged for
Debian, so C# has no case here: ``tests/test_refactor_rename_java_cs_php.py`` compiles a renamed C# project with
mono's ``mcs`` instead.

Result (2 cores shared, load 8-30; the Java cases split over two runs): 28 renames (15 Java, 13 PHP) all build,
all give the untouched copy's test results and change the declarations exactly as intended (no missed
reference, no foreign declaration renamed). Java: 526 of 537 applied edits are ``high`` (the 11 ``medium``:
names in classes implementing Swing/AWT listeners, which could inherit a member type of that name, and calls on
call results typed by the method's declared return type); PHP: 91 of 91. ``low`` candidates (not applied, each
with a reason: same-named members of other classes, comments and strings): Java 120, PHP 117. Occurrences of the
old names: Java 844, PHP 315; unlisted 0 and left after apply 0 in both.

    uv run python benchmarks/rename_java_php.py [--lang java,php] [--limit N] [--only Sym,Sym]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _rename_listing as listing
from _common import table
from _refactor_session import commit_base, refactor_session
from codeplane.core.errors import CodePlaneError

BSH = Path("/usr/src/bsh-src/bsh.tar.gz")
GUZZLE = Path("/usr/share/php/GuzzleHttp/Psr7")
PSR7_TESTS = Path("/usr/share/php/Http/Psr7Test")


@dataclass(frozen=True)
class Case:
    lang: str
    symbol: str
    new_name: str
    kind: str
    path: str
    #: A public top-level class lives in a file of its name: the file moves with it.
    moves: bool = False


J, P = "src/bsh/", "src/"
CASES = [
    Case("java", "bsh.Node.jjtGetChild", "childAt", "method", J + "Node.java"),
    Case("java", "bsh.Node.jjtGetNumChildren", "childCount", "method", J + "Node.java"),
    Case("java", "bsh.CallStack.top", "peek", "method", J + "CallStack.java"),
    Case("java", "bsh.CallStack.swap", "exchange", "method", J + "CallStack.java"),
    Case("java", "bsh.StringUtil.methodString", "describeMethod", "function", J + "StringUtil.java"),
    Case("java", "bsh.Types.getTypes", "typesOf", "function", J + "Types.java"),
    Case("java", "bsh.NameSpace.getThis", "thisObject", "method", J + "NameSpace.java"),
    Case("java", "bsh.LHS.assign", "store", "method", J + "LHS.java"),
    Case("java", "bsh.Types.CAST", "CAST_KIND", "constant", J + "Types.java"),
    Case("java", "bsh.BSHAmbiguousName.text", "spelling", "field", J + "BSHAmbiguousName.java"),
    Case("java", "bsh.Capabilities.Unavailable", "Missing", "nested class", J + "Capabilities.java"),
    Case("java", "bsh.UtilEvalError", "UtilError", "class", J + "UtilEvalError.java", moves=True),
    Case("java", "bsh.ReturnControl", "ControlReturn", "class", J + "ReturnControl.java", moves=True),
    Case("java", "bsh.classpath.ClassPathListener", "ClassPathObserver", "interface",
         J + "classpath/ClassPathListener.java", moves=True),
    Case("java", "bsh.Primitive.VOID", "NOTHING", "field", J + "Primitive.java"),
    Case("php", "GuzzleHttp\\Psr7.Utils.copyToString", "readAll", "function", P + "Utils.php"),
    Case("php", "GuzzleHttp\\Psr7.Utils.copyToStream", "pipe", "function", P + "Utils.php"),
    Case("php", "GuzzleHttp\\Psr7.Utils.tryFopen", "openOrFail", "function", P + "Utils.php"),
    Case("php", "GuzzleHttp\\Psr7.Uri.isDefaultPort", "usesDefaultPort", "function", P + "Uri.php"),
    Case("php", "GuzzleHttp\\Psr7.Uri.composeComponents", "compose", "function", P + "Uri.php"),
    Case("php", "GuzzleHttp\\Psr7.Uri.filterPath", "cleanPath", "method", P + "Uri.php"),
    Case("php", "GuzzleHttp\\Psr7.UriResolver.removeDotSegments", "dropDotSegments", "function",
         P + "UriResolver.php"),
    Case("php", "GuzzleHttp\\Psr7.AppendStream.addStream", "append", "method", P + "AppendStream.php"),
    Case("php", "GuzzleHttp\\Psr7.MimeType.fromFilename", "forFilename", "function", P + "MimeType.php"),
    Case("php", "GuzzleHttp\\Psr7.Rfc3986.CHAR_UNRESERVED", "UNRESERVED_CHARS", "constant", P + "Rfc3986.php"),
    Case("php", "GuzzleHttp\\Psr7.Stream.stream", "handle", "property", P + "Stream.php"),
    Case("php", "GuzzleHttp\\Psr7.Rfc7230", "HeaderGrammar", "class", P + "Rfc7230.php", moves=True),
    Case("php", "GuzzleHttp\\Psr7.StreamDecoratorTrait", "DecoratesStream", "trait",
         P + "StreamDecoratorTrait.php", moves=True),
]

_BOOTSTRAP = """<?php
require_once 'Psr/Http/Message/autoload.php';
require_once 'Psr/Http/Message/factory-autoload.php';
require_once 'getallheaders/getallheaders.php';
require_once 'Http/Psr7Test/autoload.php';

spl_autoload_register(function (string $class): void {
    $prefix = 'GuzzleHttp\\\\Psr7\\\\';
    if (strncmp($class, $prefix, strlen($prefix)) === 0) {
        $file = __DIR__ . '/../src/' . str_replace('\\\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
"""
_SUBJECTS = {
    "Request": "return new Request('GET', '/');",
    "Response": "return new Response();",
    "ServerRequest": "return new ServerRequest('GET', '/', [], null, '1.1', $_SERVER);",
    "UploadedFile": "return new UploadedFile(Utils::streamFor('foobar'), 6, UPLOAD_ERR_OK);",
}
_SMOKE = """<?php
require __DIR__ . '/bootstrap.php';

use GuzzleHttp\\Psr7;

$s = Psr7\\Utils::streamFor('hello world');
echo Psr7\\Utils::copyToString($s), "\\n";
$t = Psr7\\Utils::streamFor('');
$s->rewind();
Psr7\\Utils::copyToStream($s, $t);
echo (string) $t, "\\n";
$f = Psr7\\Utils::tryFopen('php://memory', 'r+');
echo get_resource_type($f), "\\n";
echo Psr7\\Uri::isDefaultPort(new Psr7\\Uri('http://a:80/')) ? 'default' : 'custom', "\\n";
echo Psr7\\Uri::composeComponents('https', 'h', 'p', 'q', 'f'), "\\n";
echo (string) (new Psr7\\Uri('http://h/a b/%7e'))->withPath('/x y'), "\\n";
echo Psr7\\UriResolver::removeDotSegments('/a/b/../c/./d'), "\\n";
echo (string) Psr7\\UriResolver::resolve(new Psr7\\Uri('http://h/a/b'), new Psr7\\Uri('../c')), "\\n";
$a = new Psr7\\AppendStream([Psr7\\Utils::streamFor('a')]);
$a->addStream(Psr7\\Utils::streamFor('b'));
echo (string) $a, "\\n";
echo Psr7\\MimeType::fromFilename('x.json'), "\\n";
echo Psr7\\Rfc3986::CHAR_UNRESERVED, "\\n";
echo Psr7\\Message::toString(Psr7\\Message::parseRequest("GET / HTTP/1.1\\r\\nHost: h\\r\\nX: 1\\r\\n\\r\\n")), "\\n";
echo (string) new Psr7\\LimitStream(Psr7\\Utils::streamFor('abcdef'), 3, 1), "\\n";
echo (string) new Psr7\\CachingStream(Psr7\\Utils::streamFor('cache')), "\\n";
"""
_PHP_API = """<?php
require $argv[1] . '/tests/bootstrap.php';
foreach (new RecursiveIteratorIterator(new RecursiveDirectoryIterator($argv[1] . '/src')) as $file) {
    if (substr($file, -4) === '.php') { require_once $file; }
}
$out = [];
foreach (array_merge(get_declared_classes(), get_declared_interfaces(), get_declared_traits()) as $name) {
    if (strpos($name, 'GuzzleHttp\\\\Psr7\\\\') !== 0) { continue; }
    $r = new ReflectionClass($name);
    $parents = array_merge($r->getParentClass() ? [$r->getParentClass()->getName()] : [], $r->getInterfaceNames(),
                           $r->getTraitNames());
    $out[] = "type $name : " . implode(' ', $parents);
    $own = function ($member) use ($name) { return $member->getDeclaringClass()->getName() === $name; };
    foreach (array_filter($r->getMethods(), $own) as $m) { $out[] = "$name::{$m->getName()}()"; }
    foreach (array_filter($r->getProperties(), $own) as $p) { $out[] = "$name::\\${$p->getName()}"; }
    foreach (array_filter($r->getReflectionConstants(), $own) as $c) { $out[] = "$name::{$c->getName()}"; }
}
sort($out);
echo implode("\\n", $out), "\\n";
"""


def _checkout(lang: str, into: Path) -> Path:
    root = into / "repo"
    if lang == "java":
        unpacked = into / "bsh"
        with tarfile.open(BSH) as tar:
            tar.extractall(unpacked, filter="data")
        for part in ("src/bsh", "asm/src/bsh", "tests/src", "tests/test-scripts"):
            shutil.copytree(unpacked / part, root / ("src/bsh" if part.endswith("/bsh") else part),
                            dirs_exist_ok=True)
        shutil.rmtree(root / "src/bsh/servlet")
        shutil.rmtree(unpacked)
    else:
        shutil.copytree(GUZZLE, root / "src", ignore=shutil.ignore_patterns("autoload.php"))
        tests = root / "tests"
        tests.mkdir()
        (tests / "bootstrap.php").write_text(_BOOTSTRAP, encoding="utf-8")
        (tests / "smoke.php").write_text(_SMOKE, encoding="utf-8")
        for name, body in _SUBJECTS.items():
            (tests / f"{name}Test.php").write_text(
                f"<?php\nnamespace GuzzleHttp\\Tests\\Psr7;\n\nuse GuzzleHttp\\Psr7\\{name};\n"
                f"use GuzzleHttp\\Psr7\\Utils;\nuse Http\\Psr7Test\\{name}IntegrationTest;\n\n"
                f"class {name}Test extends {name}IntegrationTest\n{{\n    public function createSubject()\n"
                f"    {{\n        {body}\n    }}\n}}\n", encoding="utf-8")
        (tests / "StreamTest.php").write_text(
            "<?php\nnamespace GuzzleHttp\\Tests\\Psr7;\n\nuse GuzzleHttp\\Psr7\\Stream;\nuse GuzzleHttp\\Psr7\\Utils;\n"
            "use Http\\Psr7Test\\StreamIntegrationTest;\n\nclass StreamTest extends StreamIntegrationTest\n{\n"
            "    public function createStream($data)\n    {\n"
            "        if ($data instanceof \\Psr\\Http\\Message\\StreamInterface) {\n"
            "            return $data;\n        }\n"
            "        return is_resource($data) ? new Stream($data) : Utils::streamFor($data);\n    }\n}\n",
            encoding="utf-8")
        (tests / "UriTest.php").write_text(
            "<?php\nnamespace GuzzleHttp\\Tests\\Psr7;\n\nuse GuzzleHttp\\Psr7\\Uri;\n"
            "use Http\\Psr7Test\\UriIntegrationTest;\n\nclass UriTest extends UriIntegrationTest\n{\n"
            "    public function createUri($uri)\n    {\n        return new Uri($uri);\n    }\n}\n", encoding="utf-8")
    for path in root.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    return commit_base(root)


@dataclass
class Verdict:
    built: bool
    detail: str
    tests: str
    api: set[str]


def _run(args: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def _judge_java(root: Path, scratch: Path) -> Verdict:
    classes = scratch / "classes"
    shutil.rmtree(classes, ignore_errors=True)
    sources = sorted(str(p) for p in (root / "src").rglob("*.java")) + \
        sorted(str(p) for p in (root / "tests/src").rglob("*.java"))
    built = _run(["javac", "-nowarn", "-encoding", "ISO-8859-1", "-sourcepath", "/nonexistent", "-d", str(classes),
                  *sources], root)
    if built.returncode:
        errors = [line for line in built.stderr.splitlines() if ": error:" in line]
        return Verdict(False, f"{len(errors)} errors: {errors[0].split(str(root) + '/')[-1][:90] if errors else ''}",
                       "", set())
    files = sorted(str(p) for p in classes.rglob("*.class"))
    api: set[str] = set()
    for start in range(0, len(files), 200):
        shown = _run(["javap", "-p", *files[start:start + 200]], root)
        owner = ""
        for line in shown.stdout.splitlines():
            if line.startswith("Compiled from"):
                continue
            if not line.startswith(" ") and line.endswith("{"):
                owner = line
                api.add(f"type {line}")
            elif line.strip() and line.strip() != "}":
                api.add(f"{owner.split(' {')[0]} :: {line.strip()}")
    passed, failed = 0, []
    scripts = root / "tests/test-scripts"
    for script in sorted(scripts.glob("*.bsh")):
        if script.name in ("RunAllTests.bsh", "TestHarness.bsh", "Fail.bsh"):
            continue
        done = _run(["java", "-cp", f"{classes}:{root / 'src'}", "bsh.Interpreter", script.name], scripts, 60)
        if "Completed ok" in done.stdout and "FAILED" not in done.stdout:
            passed += 1
        else:
            failed.append(script.stem)
    return Verdict(True, "", f"{passed} ok, failing: {' '.join(failed)}", api)


def _judge_php(root: Path, scratch: Path) -> Verdict:
    for path in sorted(root.rglob("*.php")):
        linted = _run(["php", "-l", str(path)], root)
        if linted.returncode:
            return Verdict(False, linted.stdout.strip().splitlines()[0][:90], "", set())
    unit = _run(["phpunit", "--bootstrap", "tests/bootstrap.php", "tests"], root)
    summary = next((line for line in reversed(unit.stdout.splitlines()) if line.startswith(("Tests:", "OK"))),
                   unit.stdout.strip().splitlines()[-1] if unit.stdout.strip() else unit.stderr[:80])
    smoke = _run(["php", "tests/smoke.php"], root)
    api_script = scratch / "api.php"
    api_script.write_text(_PHP_API, encoding="utf-8")
    api = _run(["php", str(api_script), str(root)], root)
    shown = set(api.stdout.splitlines()) if api.returncode == 0 else {f"error {api.stderr[:80]}"}
    digest = hashlib.sha256((smoke.stdout + smoke.stderr).encode()).hexdigest()[:8]
    return Verdict(True, "", f"{summary} | smoke {digest}", shown)


def _expected(case: Case, base: set[str], renamed: set[str]) -> tuple[bool, list[str]]:
    """Whether the declarations differ exactly by the rename: (exact, unexpected lines)."""
    old = case.symbol.replace("\\", ".").split(".")[-1]
    owner = case.symbol.rsplit(".", 1)[0] if case.kind not in ("class", "interface", "trait") else None
    word = re.compile(rf"(?<!\w){re.escape(old)}(?!\w)")
    removed, added = base - renamed, renamed - base
    unexpected = []
    if owner is None or case.kind == "nested class":
        transformed = {word.sub(case.new_name, line) for line in removed}
        unexpected = sorted(transformed ^ added)
        return not unexpected and bool(removed), unexpected[:3]
    owner_name = owner.replace("GuzzleHttp\\Psr7.", "GuzzleHttp\\Psr7\\")
    family = _family(base, owner_name)
    for line in sorted(removed):
        holder = line.split(" :: ")[0].split("::")[0].replace("type ", "")
        if not any(f in holder.split() or holder == f for f in family):
            unexpected.append(line)
    transformed = {word.sub(case.new_name, line) for line in removed}
    unexpected += sorted(transformed ^ added)
    return not unexpected and bool(removed), unexpected[:3]


def _family(api: set[str], owner: str) -> set[str]:
    """The owner type and every type that extends or implements it (from the declaration headers)."""
    family = {owner}
    headers = [line for line in api if line.startswith("type ")]
    grew = True
    while grew:
        grew = False
        for header in headers:
            words = set(re.findall(r"[\w.\\$]+", header.replace("<", " ").replace(">", " ").replace(",", " ")))
            name = next((w for w in header.split()[1:] if "." in w or "\\" in w), "")
            name = re.sub(r"<.*", "", name)
            if name and name not in family and words & family:
                family.add(name)
                grew = True
    return family


def run_case(case: Case, scratch: Path, baseline: Verdict) -> list[object]:
    work = Path(tempfile.mkdtemp(dir=scratch))
    root = _checkout(case.lang, work)
    with refactor_session(root, ready_within_s=600) as session:
        service = session.service
        began = time.perf_counter()
        try:
            preview = service.rename(case.symbol, case.new_name)
        except CodePlaneError as exc:
            return [case.lang, case.symbol, case.kind, f"refused {exc.code}", "", "", "", "", "", "", "", "", "", ""]
        candidate = None
        counts = dict(preview.counts)
        if preview.status == "needs_decision":
            chosen = [c for c in preview.candidates if c.symbol.path == case.path]
            if len(chosen) != 1:
                return [case.lang, case.symbol, case.kind, "ambiguous", "", "", "", "", "", "", "", "", "", ""]
            candidate = chosen[0].candidate_id
            counts = dict(chosen[0].counts)
        plan_ms = (time.perf_counter() - began) * 1000
        applied = counts["high"] + counts["medium"]
        old = case.symbol.replace("\\", ".").rsplit(".", 1)[-1]
        found, missing, kept = listing.unlisted(service, preview.refactor_id, candidate, root, old,
                                        kept_in_plan=[*preview.coverage.kept, *preview.coverage.set_aside]
                                        if preview.coverage else ())
        try:
            service.apply(preview.refactor_id, candidate_id=candidate)
        except CodePlaneError as exc:  # a collision (4007) is reported, not forced
            return [case.lang, case.symbol, case.kind, counts["high"], counts["medium"], counts["low"], "", "",
                    f"refused {exc.code}", "", "", found, len(missing), ""]
        left = listing.left(root, old, kept)
        if missing or left:
            print(f"  {case.symbol}: unlisted {' '.join(missing[:6])}; left {' '.join(left[:6])}", flush=True)
        if case.moves:
            session.index.wait_ready(600)
            target = case.path.rsplit("/", 1)[0] + "/" + case.new_name + "." + case.path.rsplit(".", 1)[1]
            moved = service.move(case.path, target)
            service.apply(moved.refactor_id)
        verdict = (_judge_java if case.lang == "java" else _judge_php)(root, work)
        share = f"{counts['high'] / applied:.0%}" if applied else "-"
        exact, unexpected = _expected(case, baseline.api, verdict.api) if verdict.built else (False, [])
        same = "same" if verdict.built and verdict.tests == baseline.tests else f"differs: {verdict.tests[:70]}"
        return [case.lang, case.symbol, case.kind, counts["high"], counts["medium"], counts["low"], share,
                f"{plan_ms:.0f}", "yes" if verdict.built else f"no: {verdict.detail}",
                same if verdict.built else "-",
                ("exact" if exact else f"off: {'; '.join(unexpected)[:90]}") if verdict.built else "-",
                found, len(missing), len(left)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lang", default="java,php")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--only", default="", help="run the cases whose symbol contains one of these (comma list)")
    args = parser.parse_args()
    langs = set(args.lang.split(","))
    cases = [c for c in CASES if c.lang in langs]
    if args.only:
        cases = [c for c in cases if any(part in c.symbol for part in args.only.split(","))]
    if args.limit:
        cases = [c for lang in sorted(langs) for c in [x for x in cases if x.lang == lang][:args.limit]]
    missing = [str(p) for lang, p in (("java", BSH), ("php", GUZZLE), ("php", PSR7_TESTS))
               if lang in langs and not p.exists()]
    tools = [t for lang, t in (("java", "javac"), ("java", "javap"), ("php", "php"), ("php", "phpunit"))
             if lang in langs and shutil.which(t) is None]
    if missing or tools:
        raise SystemExit(f"install the Debian packages first (missing {', '.join(missing + tools)})")
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="cpl-rename-java-php-") as tmp:
        scratch = Path(tmp)
        baselines = {}
        for lang in sorted(langs):
            work = Path(tempfile.mkdtemp(dir=scratch))
            baselines[lang] = (_judge_java if lang == "java" else _judge_php)(_checkout(lang, work), work)
            print(f"baseline {lang}: {baselines[lang].tests} ({len(baselines[lang].api)} declarations)", flush=True)
        for case in cases:
            rows.append(run_case(case, scratch, baselines[case.lang]))
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
    table("Renames on Debian's Java and PHP sources (BeanShell 2.0b4, guzzlehttp/psr7 2.x)",
          ["lang", "symbol", "kind", "high", "medium", "low (not applied)", "high share", "plan ms", "builds",
           "tests", "declarations", "occurrences", "unlisted", "left"], rows)
    for lang in sorted(langs):
        done = [r for r in rows if r[0] == lang and isinstance(r[3], int)]
        high = sum(int(str(r[3])) for r in done)
        applied = high + sum(int(str(r[4])) for r in done)
        print(f"{lang}: {len(done)} renames; high share {high}/{applied}; low candidates not applied "
              f"{sum(int(str(r[5])) for r in done)}; builds {sum(1 for r in done if r[8] == 'yes')}/{len(done)}; "
              f"tests as before {sum(1 for r in done if r[9] == 'same')}/{len(done)}; declarations exact "
              f"{sum(1 for r in done if r[10] == 'exact')}/{len(done)}; occurrences "
              f"{sum(int(str(r[11])) for r in done)}, unlisted {sum(int(str(r[12])) for r in done)}, left after "
              f"apply {sum(int(str(r[13] or 0)) for r in done)}")


if __name__ == "__main__":
    main()
