"""Per-language extraction on small, real-looking files: definitions, imports and references."""

from __future__ import annotations

import pytest

from codeplane.index.structural.extract import PARSED, extract_file
from codeplane.index.structural.facts import FileFacts


def facts_of(path: str, text: str) -> FileFacts:
    outcome = extract_file(path, text)
    assert outcome.status == PARSED and outcome.facts is not None, outcome
    return outcome.facts


def defs(facts: FileFacts) -> set[tuple[str, str]]:
    return {(d.kind, d.lexical_path) for d in facts.defs}


def imports(facts: FileFacts) -> set[tuple[str | None, str, str | None]]:
    return {(i.source_literal, i.imported_name, i.alias) for i in facts.imports}


def refs_at(facts: FileFacts, line: int, token: str) -> list[tuple[str, str]]:
    return [(r.role, r.ref_tier) for r in facts.refs if r.start_line == line and r.token_text == token]


TS = '''import React, { useState as us } from "react";
import * as util from "./util";
export { a as b } from "./x";
export * from "./y";

export interface Props { title: string }
export type Id = string;
export enum Color { Red, Green }

export default function App(props: Props, { q, r = props }: any, ...rest: number[]) {
  let count = 0;
  for (let i = 0; i < 3; i++) { count += i; }
  if (count) { var hoisted = 1; }
  return util.join(count, hoisted, q, us(rest));
}

export class Store extends React.Component {
  constructor(private readonly size: number) { super(); }
  total(extra: number) { return this.size + extra; }
}

const shadow = () => { const App = 1; return App; };
'''


def test_a_generic_call_signature_on_its_own_line_ends_the_member_before_it() -> None:
    # immer's ``IProduce``: tree-sitter's TypeScript grammar runs ``): Curried`` into the next line's
    # ``<Recipe extends F>(...)``; everything after it was one error node and no definition.
    text = ("export interface IProduce {\n\t<Curried>(recipe: Curried): Curried\n"
            "\t/** doc */\n\t<Recipe extends F>(recipe: Recipe): Recipe\n"
            "\t<Base, D = Draft<Base>>( // a comment\n\t\tbase: Base\n\t): D\n}\n\n"
            "export type Producer<T> = (draft: T) => T\n\nexport function neverUsed(a: number) {\n"
            "\treturn a\n}\n")
    outcome = extract_file("src/types.ts", text)
    assert outcome.status == PARSED and outcome.facts is not None and outcome.stats is not None
    assert {("interface", "IProduce"), ("type", "Producer"), ("function", "neverUsed")} <= defs(outcome.facts)
    assert outcome.stats.error_count == 0
    assert [d.start_line for d in outcome.facts.defs if d.name == "neverUsed"] == [12]  # offsets are the source's
    # JSX is left alone: a line opening with an element is no member.
    jsx = facts_of("src/a.tsx", "export function A() {\n  return (\n    <div>(x)</div>\n  )\n}\n")
    assert ("function", "A") in defs(jsx)


def test_cpp_macros_in_template_parameters_and_before_declarations_are_parsed_around() -> None:
    # Highway's (NumPy-vendored) ops headers: ``HWY_IF_*(D, 16)`` macros stand for ``enable_if`` template parameters,
    # ``HWY_API`` for ``static inline``, ``HWY_RESTRICT`` for ``__restrict__``: each left errors in the parse.
    text = ("#define MY_API static inline\n#define MY_RESTRICT __restrict__\n"
            "#define MY_IF_SIZE_D(D, n) hwy::EnableIf<D::kSize == n>* = nullptr\n"
            "namespace ops {\ntemplate <class D, MY_IF_SIZE_D(D, 16), MY_IF_FLOAT_D(D)>\n"
            "MY_API VFromD<D> Load(D /* tag */, const TFromD<D>* MY_RESTRICT aligned) {\n"
            "  return VFromD<D>{_mm_load_si128(reinterpret_cast<const __m128i*>(aligned))};\n}\n"
            "template <class D, MY_IF_SIZE_D(D, 8)>\nMY_API VFromD<D> Zero(D d) { return Load(d, nullptr); }\n}\n")
    outcome = extract_file("ops/x86.h", text)
    assert outcome.status == PARSED and outcome.facts is not None and outcome.stats is not None
    assert outcome.stats.error_count == 0
    assert {("function", "ops.Load"), ("function", "ops.Zero")} <= {(d.kind, d.lexical_path)
                                                                    for d in outcome.facts.defs}
    assert [d.start_line for d in outcome.facts.defs if d.name == "Zero"] == [10]  # offsets are the source's


def test_typescript_defs_imports_and_scoping() -> None:
    f = facts_of("src/app.tsx", TS)
    assert {("interface", "Props"), ("type", "Id"), ("enum", "Color"), ("function", "App"), ("class", "Store"),
            ("method", "Store.constructor"), ("method", "Store.total"), ("function", "shadow")} <= defs(f)
    assert {("react", "default", "React"), ("react", "useState", "us"), ("./util", "*", "util"),
            ("./x", "a", "b"), ("./y", "*", None)} <= imports(f)
    assert refs_at(f, 14, "count") == [("REFERENCE", "PROVEN")]
    assert refs_at(f, 14, "hoisted") == [("REFERENCE", "PROVEN")]  # ``var`` is function-scoped
    assert refs_at(f, 14, "us") == [("REFERENCE", "PROVEN")]
    assert refs_at(f, 1, "useState") == [("IMPORT", "UNKNOWN")]  # linked across files later, if resolvable
    member = [r for r in f.refs if r.token_text == "join"]
    assert member and member[0].is_member and member[0].ref_tier == "ANCHORED"
    assert member[0].via_import_uid is not None  # ``util.join`` goes through ``import * as util``
    # The inner ``App`` in ``shadow`` is the local constant, not the exported function.
    inner = [r for r in f.refs if r.token_text == "App" and r.start_line == 22]
    assert inner and all(r.target_uid is None for r in inner)
    exported = {e.exported_name for e in f.exports}
    assert {"Props", "Id", "Color", "default", "Store", "b"} <= exported
    assert [t.mode for t in f.thunks] == ["REEXPORT_ALL"]



def test_commonjs_requires_and_dynamic_imports_are_imports() -> None:
    # Only ``const``/``let x = require("m")`` was an import: ``var``, ``require("m").y``, a bare or nested ``require``
    # and ``import()`` were none, so their files had no import graph; a computed name is an import of no module.
    f = facts_of("lib/x.js", """var utils = require('./utils');
const { a, b: c } = require("./ab");
let only = require('./mod').only, two = require('./two');
require('./polyfill');
var notreq = other('./x');
function f() { var inner = require('./inner'); return inner.go(); }
const m = require(name);
import('./other');
const p = import(spec);
expect(require('./deep')).toBe(1);
utils.merge(only, two);
""")
    assert sorted(((i.source_literal or ""), i.imported_name, i.alias or "", i.import_kind) for i in f.imports) == [
        ("", "*", "", "js_import"), ("", "*", "", "js_require"), ("./ab", "*", "", "js_require"),
        ("./deep", "*", "", "js_require"), ("./inner", "*", "inner", "js_require"),
        ("./mod", "only", "only", "js_require"), ("./other", "*", "", "js_import"),
        ("./polyfill", "*", "", "js_require"), ("./two", "*", "two", "js_require"),
        ("./utils", "*", "utils", "js_require")]
    merge = [r for r in f.refs if r.token_text == "merge"]
    assert merge and merge[0].via_import_uid is not None  # ``utils.merge`` goes through the require
    # A test reaching past its mocks loads the real module: it depends on it.
    mocked = facts_of("lib/x.test.js", "jest.mock('../src/util');\nconst real = jest.requireActual('../src/util');\n"
                                       "const m = vi.importActual('./m');\nfoo.requireActual('./not');\n")
    assert imports(mocked) == {("../src/util", "*", None), ("./m", "*", None)}
    # TypeScript's own form was an import of no module (a selection through it said ``partial``) binding nothing.
    ts = facts_of("lib/y.ts", "import util = require('./util');\nutil.go();\n")
    assert imports(ts) == {("./util", "*", "util")}
    go = [r for r in ts.refs if r.token_text == "go"]
    assert go and go[0].via_import_uid is not None

GO = '''package main

import (
\t"fmt"
\tex "os/exec"
)

type Server struct { Addr string }

func (s *Server) Start(port int) error {
\tif err := run(port); err != nil { return err }
\tfor i := 0; i < port; i++ { fmt.Println(i) }
\treturn nil
}

func run(port int) error { _ = ex.Command("x"); return nil }

var Default = Server{}
'''


def test_go_defs_imports_and_scoping() -> None:
    f = facts_of("cmd/main.go", GO)
    assert f.package == "main"
    assert {("struct", "Server"), ("field", "Server.Addr"), ("method", "Server.Start"), ("function", "run"),
            ("variable", "Default")} <= defs(f)
    assert {("fmt", "fmt", None), ("os/exec", "os/exec", "ex")} <= imports(f)
    assert refs_at(f, 11, "run") == [("REFERENCE", "PROVEN")]
    assert refs_at(f, 11, "err") == [("DEFINITION", "PROVEN"), ("REFERENCE", "PROVEN"), ("REFERENCE", "PROVEN")]
    assert refs_at(f, 16, "ex") == [("REFERENCE", "PROVEN")]  # an explicitly named import binds
    assert refs_at(f, 12, "fmt") == [("REFERENCE", "UNKNOWN")]  # package name not knowable from the path


def test_go_variables_declared_in_a_group_are_definitions_and_typed_locals() -> None:
    # ``var ( htmlTagRe = ... )`` (tree-sitter wraps the specs in a var_spec_list): blackfriday's grouped package
    # variables were no definitions, and ``var ( r SPRenderer )`` in a function left ``r.smartDash`` unresolved.
    text = ("package p\n\nvar (\n\tErrX = 1\n)\n\nvar Single = 2\n\n"
            "type T struct{}\n\nfunc (T) m() {}\n\nfunc f() {\n\tvar (\n\t\tr T\n\t)\n\tr.m()\n}\n")
    f = facts_of("p.go", text)
    assert {("variable", "ErrX"), ("variable", "Single"), ("method", "T.m")} <= defs(f)
    assert refs_at(f, 17, "r") == [("REFERENCE", "PROVEN")]  # bound by the grouped local declaration
    (declared,) = [r for r in f.refs if r.token_text == "r" and r.start_line == 15]
    assert declared.receiver_shape == "type:T", declared  # what ``r.m()`` links through


@pytest.mark.parametrize(("path", "text", "expected", "use_line", "used"), [
    ("p.go", "package p\n\nvar a, b int\nconst X, Y = 1, 2\n\nfunc f() int {\n\tconst k, l = 3, 4\n"
             "\treturn b + Y + l\n}\n",
     {("variable", "a"), ("variable", "b"), ("constant", "X"), ("constant", "Y")}, 8, ["b", "Y", "l"]),
    ("A.java", "class A {\n  int first, second;\n  int sum() { return first + second; }\n}\n",
     {("field", "A.first"), ("field", "A.second")}, 3, []),
    ("A.cs", "class A {\n  int first, second;\n}\n", {("field", "A.first"), ("field", "A.second")}, 0, []),
    ("a.c", "int alpha, beta;\nint gamma_ = 1, delta = 2;\nint sum(void) { return beta + delta; }\n",
     {("variable", "alpha"), ("variable", "beta"), ("variable", "gamma_"), ("variable", "delta")}, 0, []),
])
def test_every_name_of_a_declaration_naming_several_is_a_definition(
        path: str, text: str, expected: set[tuple[str, str]], use_line: int, used: list[str]) -> None:
    # ``var a, b int`` recorded only ``a`` (one definition per declaration node), tree-sitter's Go ``const_spec``
    # matches only its first name through the ``name:`` field, and C's ``int alpha, beta;`` (no initialiser) was
    # no definition at all: a use of ``b`` then resolved to nothing, and a rename of it found no definition.
    f = facts_of(path, text)
    assert expected <= defs(f)
    assert len([d for d in f.defs if (d.kind, d.lexical_path) in expected]) == len(expected)  # one each
    for token in used:
        assert refs_at(f, use_line, token) == [("REFERENCE", "PROVEN")], token


def test_python_names_unpacked_in_a_module_or_class_are_variables() -> None:
    # ``major, minor = sys.version_info[:2]``: only ``X = ...`` was a definition, so these names had none (no
    # symbol, a rename found nothing to rename, an importer's use linked nowhere).
    text = ("import sys\nmajor, (minor, *rest) = sys.version_info\nobj = object()\nobj.attr, LAST = 1, 2\n"
            "class K:\n    x, y = 1, 2\n\ndef f():\n    a, b = 1, 2\n    return a + major + rest[0] + LAST\n")
    f = facts_of("m.py", text)
    assert {("variable", "major"), ("variable", "minor"), ("variable", "rest"), ("variable", "LAST"),
            ("variable", "K.x"), ("variable", "K.y")} <= defs(f)
    assert not {("variable", "a"), ("variable", "f.a"), ("variable", "attr"), ("variable", "obj.attr")} & defs(f)
    by_name = {d.name: d.def_uid for d in f.defs}
    used = {r.token_text: r.target_uid for r in f.refs if r.start_line == 10 and r.role == "REFERENCE"}
    assert used["major"] == by_name["major"] and used["rest"] == by_name["rest"] and used["LAST"] == by_name["LAST"]


def test_a_python_type_alias_statement_defines_its_name() -> None:
    # PEP 695 (``type Pair[T] = tuple[T, T]``, Python 3.12) bound nothing: its uses resolved to nothing.
    text = ("type Alias = int\ntype Pair[T] = tuple[T, T]\nclass K:\n    type Inner = str\n\n"
            "def f(x: Alias, y: Pair[int]): ...\n")
    f = facts_of("m.py", text)
    assert {("variable", "Alias"), ("variable", "Pair"), ("variable", "K.Inner")} <= defs(f)
    assert refs_at(f, 6, "Alias") == [("REFERENCE", "PROVEN")] and refs_at(f, 6, "Pair") == [("REFERENCE", "PROVEN")]
    assert refs_at(f, 1, "Alias") == [("DEFINITION", "PROVEN")]  # once: the name is not also read


def test_commonjs_exports_define_their_names_without_binding_them() -> None:
    # ``exports.parse = function (str) {...}``, Node's most common way to define a module's API, was no definition:
    # symbol search found nothing, and ``utils.parse`` (through a require) could be listed under no definition.
    text = ("exports.parse = function (s) { return s; };\nmodule.exports.stringify = (o) => String(o);\n"
            "module.exports = { merge: function () {} };\nexports.VERSION = '1';\n"
            "function local() {}\nexports.local = local;\n"
            "function helper(x) { return parse(x) + exports.parse(x); }\n")
    f = facts_of("lib/m.js", text)
    assert {("function", "parse"), ("function", "stringify"), ("function", "merge"), ("variable", "VERSION"),
            ("function", "local")} <= defs(f)
    assert len([d for d in f.defs if d.name == "local"]) == 1  # ``exports.local = local`` exports the function
    assert refs_at(f, 1, "parse") == [("DEFINITION", "PROVEN")]  # not also a member use of ``exports``
    # ``exports.parse = ...`` binds no plain ``parse``: a bare use is some other (global) name
    assert refs_at(f, 7, "parse") == [("REFERENCE", "UNKNOWN"), ("REFERENCE", "ANCHORED")]
    (definition,) = [d for d in f.defs if d.name == "parse"]
    assert definition.signature_hash == facts_of("lib/m.js", text.replace("return s;", "return s + 1;")).defs[0]\
        .signature_hash  # the body is not the signature


@pytest.mark.parametrize("path", ["m.ts", "m.js"])
def test_names_destructured_at_module_level_and_enum_members_are_definitions(path: str) -> None:
    # ``export const { Provider, Consumer } = createContext()``: no definition, so no symbol to find or rename;
    # TypeScript enum members (``E.X``) neither.
    text = ("export const { a, b: bee, ...rest } = obj;\nvar [c, , d = 1] = arr;\n"
            "function f() { const { z } = obj; return a + bee + c + d + z; }\n")
    if path.endswith(".ts"):
        text += "enum E { X = 1, Y }\n"
    f = facts_of(path, text)
    expected = {("variable", "a"), ("variable", "bee"), ("variable", "rest"), ("variable", "c"), ("variable", "d")}
    if path.endswith(".ts"):
        expected |= {("constant", "E.X"), ("constant", "E.Y")}
    assert expected <= defs(f)
    assert not {("variable", "b"), ("variable", "z"), ("variable", "obj")} & defs(f)  # a key, a local, a value
    for token in ("a", "bee", "c", "d"):
        assert refs_at(f, 3, token) == [("REFERENCE", "PROVEN")], token


def test_go_embedded_fields_and_csharp_events_and_record_parameters_are_members() -> None:
    # ``type S struct { Embedded; *pkg.Ptr }``: ``s.Embedded`` named a field the index did not have; a C# event
    # (``public event EventHandler Changed, Other;``) and a positional record's properties (``record R(int A)``) too.
    go = facts_of("p.go", "package p\n\ntype S struct {\n\tEmbedded\n\t*pkg.Ptr\n\tList[int]\n\tName string\n}\n")
    assert {("field", "S.Embedded"), ("field", "S.Ptr"), ("field", "S.List"), ("field", "S.Name")} <= defs(go)
    cs = facts_of("R.cs", "namespace N {\n  public record R(int A, string B);\n"
                          "  class C { public event System.EventHandler Changed, Other; }\n}\n")
    assert {("property", "N.R.A"), ("property", "N.R.B"), ("event", "N.C.Changed"), ("event", "N.C.Other")} <= defs(cs)


RUST = '''use std::collections::{HashMap, HashSet as Set};
use crate::util::*;
mod inner;

pub struct Cache { map: HashMap<String, i32> }

impl Cache {
    pub fn new() -> Self { Cache { map: HashMap::new() } }
    pub fn get(&self, key: &str) -> Option<i32> {
        let found = self.map.get(key).copied();
        let found = found.or(Some(0));
        match found { Some(value) => Some(value), None => None }
    }
}

fn helper(x: i32) -> i32 { let y = x; y }
'''


def test_a_rust_trait_declares_its_associated_types() -> None:
    f = facts_of("src/lib.rs", "pub trait T { type Out: Clone; fn run(&self) -> Self::Out; }\n"
                               "impl T for u8 { type Out = u8; fn run(&self) -> u8 { 1 } }\n")
    assert {("type", "T.Out"), ("method", "T.run")} <= defs(f)  # ``T.Out`` was missing: only the impl's was one


def test_rust_defs_imports_and_shadowing() -> None:
    f = facts_of("src/lib.rs", RUST)
    assert {("struct", "Cache"), ("method", "Cache.new"), ("method", "Cache.get"), ("function", "helper")} <= defs(f)
    assert {("std::collections", "HashMap", None), ("std::collections", "HashSet", "Set"),
            ("crate::util", "*", None), ("inner", "inner", None)} <= imports(f)
    # ``let found`` twice in one block declares two variables: never claimed as one.
    assert all(tier == "UNKNOWN" for _, tier in refs_at(f, 11, "found"))
    assert refs_at(f, 12, "value") == [("DEFINITION", "PROVEN"), ("REFERENCE", "PROVEN")]
    assert refs_at(f, 16, "y") == [("DEFINITION", "PROVEN"), ("REFERENCE", "PROVEN")]


JAVA = '''package com.acme.shop;

import java.util.List;
import static java.lang.Math.max;
import com.acme.util.*;

public class Cart {
    private int count = 0;
    public Cart(int initial) { this.count = initial; }
    public int add(int amount) {
        int next = count + amount;
        for (int i = 0; i < amount; i++) { next += i; }
        return max(next, size());
    }
    int size() { return count; }
}
'''


def test_java_defs_imports_and_members() -> None:
    f = facts_of("src/main/java/com/acme/shop/Cart.java", JAVA)
    assert f.package == "com.acme.shop"
    assert {("class", "Cart"), ("field", "Cart.count"), ("constructor", "Cart.Cart"), ("method", "Cart.add"),
            ("method", "Cart.size")} <= defs(f)
    assert {("java.util.List", "java.util.List", None), ("java.lang.Math.max", "java.lang.Math.max", None),
            ("com.acme.util.*", "com.acme.util.*", None)} <= imports(f)
    assert refs_at(f, 11, "count") == [("REFERENCE", "PROVEN")]  # a field of the enclosing class
    calls = [r for r in f.refs if r.token_text == "size" and r.start_line == 13]
    assert calls and calls[0].is_member  # method calls live in their own namespace


@pytest.mark.parametrize(("path", "text", "expected_defs", "expected_imports"), [
    ("src/Shop.cs", "using System;\nusing Col = System.Collections.Generic;\nnamespace Acme.Shop {\n"
     "  public class Cart { private int n; public int Add(int a) { var b = a + n; return b; } }\n}\n",
     {("class", "Acme.Shop.Cart"), ("method", "Acme.Shop.Cart.Add"), ("field", "Acme.Shop.Cart.n")},
     {("System", "System", None), ("System.Collections.Generic", "System.Collections.Generic", "Col")}),
    ("lib/shop.rb", "require 'json'\nrequire_relative 'util'\nmodule Shop\n  class Cart < Base\n"
     "    def add(item, qty = 1)\n      total = item * qty\n      total\n    end\n  end\nend\n",
     {("module", "Shop"), ("class", "Shop.Cart"), ("method", "Shop.Cart.add")},
     {("json", "json", None), ("util", "util", None)}),
    ("src/Cart.php", "<?php\nnamespace Acme;\nuse Acme\\Util\\Money;\nrequire_once 'boot.php';\n"
     "class Cart { public function add($item) { $total = $item; return $total; } }\n",
     {("class", "Cart"), ("method", "Cart.add")},
     {("Acme\\Util\\Money", "Acme\\Util\\Money", None), ("boot.php", "boot.php", None)}),
    ("src/cart.c", "#include <stdio.h>\n#include \"cart.h\"\n#define MAX 3\nstruct cart { int n; };\n"
     "static int add(int a) { int b = a; return b; }\n",
     {("macro", "MAX"), ("struct", "cart"), ("function", "add")},
     {("stdio.h", "stdio.h", None), ("cart.h", "cart.h", None)}),
    ("src/cart.cpp", "#include \"cart.hpp\"\nnamespace shop {\nclass Cart {\n public:\n"
     "  int add(int a) { int b = a + n; return b; }\n private:\n  int n;\n};\n}\n",
     {("class", "shop.Cart"), ("method", "shop.Cart.add"), ("field", "shop.Cart.n")},
     {("cart.hpp", "cart.hpp", None)}),
    ("src/Cart.kt", "package acme.shop\nimport kotlin.math.max\nimport acme.util.Money as M\n"
     "class Cart(val size: Int) {\n  fun add(a: Int): Int { val b = a + size; return max(b, 0) }\n}\n"
     "fun helper(): Int = 0\n",
     {("class", "Cart"), ("method", "Cart.add"), ("function", "helper"), ("property", "Cart.size")},
     {("kotlin.math.max", "kotlin.math.max", None), ("acme.util.Money", "acme.util.Money", "M")}),
])
def test_other_languages_defs_and_imports(path: str, text: str, expected_defs: set[tuple[str, str]],
                                          expected_imports: set[tuple[str, str, str | None]]) -> None:
    f = facts_of(path, text)
    assert expected_defs <= defs(f)
    assert expected_imports <= imports(f)
    # Every language resolves at least its function-local variables.
    assert any(r.ref_tier == "PROVEN" and r.role == "REFERENCE" for r in f.refs)


@pytest.mark.parametrize(("path", "text", "expected"), [
    ("docs/guide.md", "# Guide\n\n## Install\n\ntext\n", {("heading", "Guide"), ("heading", "Install")}),
    ("db/schema.sql", "CREATE TABLE users (id int);\nCREATE VIEW active AS SELECT 1;\n",
     {("table", "users"), ("view", "active")}),
    ("Dockerfile", "FROM python:3.11 AS build\nRUN true\nFROM alpine\n", {("stage", "build")}),
    ("api/shop.proto",
     'syntax = "proto3";\nmessage Cart { int32 n = 1; }\nservice Shop { rpc Get(Cart) returns (Cart); }\n',
     {("message", "Cart"), ("service", "Shop"), ("method", "Shop.Get")}),
    ("pyproject.toml", "[project]\nname = 'x'\n[tool.ruff]\nline-length = 1\n",
     {("table", "project"), ("table", "tool.ruff")}),
])
def test_data_families_outline(path: str, text: str, expected: set[tuple[str, str]]) -> None:
    assert expected <= defs(facts_of(path, text))


def test_yaml_and_json_are_parsed_for_the_probe_without_an_outline() -> None:
    outcome = extract_file("config/app.yaml", "a: 1\nb:\n  c: 2\n")
    assert outcome.status == "unsupported" and outcome.stats is not None and outcome.stats.error_count == 0


def test_a_file_that_does_not_parse_is_reported_not_raised() -> None:
    outcome = extract_file("broken.py", "def f(:\n  return )))\n")
    assert outcome.status == PARSED and outcome.stats is not None and outcome.stats.error_count > 0


def test_python_dynamic_sites_and_all_exports() -> None:
    f = facts_of("pkg/dyn.py", "import importlib\n__all__ = ['run', 'missing']\n\n\ndef run(obj, name):\n"
                               "    getattr(obj, 'size')\n    setattr(obj, name, 1)\n    eval('1 + 1')\n"
                               "    globals()['run']\n    importlib.import_module(name)\n")
    sites = {(d.pattern_type, d.extracted_literals, d.has_non_literal_key) for d in f.dynamic}
    assert sites == {("getattr", ("size",), False), ("setattr", (), True), ("eval", ("1 + 1",), False),
                     ("bracket_access", ("run",), False), ("dynamic_import", (), True)}
    exports = {e.exported_name: (e.evidence_kind, e.local_def_uid is not None) for e in f.exports}
    assert exports["run"] == ("__all__literal", True)
    assert exports["missing"] == ("__all__literal", False)  # listed but never bound
    assert refs_at(f, 2, "run") == [("EXPORT", "PROVEN")]  # the string in __all__ names the function
