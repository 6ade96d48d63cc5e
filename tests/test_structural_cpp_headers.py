"""A ``.h`` header is C or C++ by its text (``languages.detect_source``), as GitHub's linguist decides: a C++ header
parsed as C is mostly error nodes and loses its classes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.index.languages import detect_source
from codeplane.index.service import IndexService
from codeplane.index.structural.extract import PARSED, extract_file
from tests.builders import indexed_repo, write_files

CPP_HEADER = ("#pragma once\n#include <vector>\nnamespace shop {\ntemplate <typename T>\nclass Cart {\n public:\n"
              "  void add(const T& item) { items_.push_back(item); }\n private:\n  std::vector<T> items_;\n};\n}\n")
C_HEADER = ("#ifndef CART_H\n#define CART_H\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
            "struct cart { int n; };\nint cart_add(struct cart *c, int n);\n#ifdef __cplusplus\n}\n#endif\n#endif\n")
OBJC_HEADER = "#import <Foundation/Foundation.h>\n@interface Cart : NSObject\n- (void)add;\n@end\n// std::vector\n"


@pytest.mark.parametrize(("text", "language"), [
    (CPP_HEADER, "cpp"),
    (C_HEADER, "c"),  # the __cplusplus guard of a C header is no C++
    (OBJC_HEADER, "c"),  # Objective-C first, as linguist: no grammar here, so it stays C
    ("int trying(void);\nint constexpression;\n", "c"),  # words that begin like C++ keywords
    ("int a;\n  protected:  \nint b;\n", "cpp"),
    ("#if __has_cpp_attribute(nodiscard)\n#endif\n", "cpp"),
    ("", "c"),
])
def test_a_header_is_cpp_only_when_its_text_says_so(text: str, language: str) -> None:
    info = detect_source("include/cart.h", text)
    assert info is not None and info.language == language
    # Only ``.h`` is decided by its text: the other extensions keep their language whatever they hold.
    c_file = detect_source("src/cart.c", CPP_HEADER)
    assert c_file is not None and c_file.language == "c"


def test_a_cpp_header_gets_cpp_facts_without_error_nodes() -> None:
    outcome = extract_file("include/cart.h", CPP_HEADER)
    assert outcome.status == PARSED and outcome.facts is not None and outcome.stats is not None
    assert outcome.language == "cpp" and outcome.stats.error_count == 0
    assert {("class", "shop.Cart"), ("method", "shop.Cart.add"), ("field", "shop.Cart.items_")} <= {
        (d.kind, d.lexical_path) for d in outcome.facts.defs}
    # What the C grammar made of the same text: what a header was indexed as before.
    as_c = extract_file("include/cart.c", CPP_HEADER)
    assert as_c.stats is not None and as_c.stats.error_count > 0


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[Path, IndexService]]:
    with indexed_repo(tmp_path / "repo", {"include/cart.h": CPP_HEADER, "include/ccart.h": C_HEADER,
                                          "src/cart.c": "#include \"ccart.h\"\nint cart_add(struct cart *c, int n) "
                                                        "{ return c->n += n; }\n"}) as indexed:
        yield indexed


def _languages(service: IndexService) -> dict[str, tuple[str, str]]:
    with service.read_connection() as conn:
        return {str(p): (str(lang), str(status)) for p, lang, status in conn.execute(
            "SELECT path, language, status FROM st_file ORDER BY path")}


def _classes(service: IndexService, path: str) -> list[str]:
    with service.read_connection() as conn:
        return [str(q) for (q,) in conn.execute(
            "SELECT d.lexical_path FROM st_def d JOIN st_file f USING (file_id) WHERE f.path = ? AND d.kind = 'class' "
            "ORDER BY d.lexical_path", (path,))]


def test_the_index_stores_each_header_in_the_language_its_text_has_and_follows_an_edit(
        index: tuple[Path, IndexService]) -> None:
    root, service = index
    assert _languages(service) == {"include/cart.h": ("cpp", PARSED), "include/ccart.h": ("c", PARSED),
                                   "src/cart.c": ("c", PARSED)}
    assert _classes(service, "include/cart.h") == ["shop.Cart"]
    # The header becomes plain C: its row and facts follow, with no class left.
    write_files(root, {"include/cart.h": C_HEADER})
    service.refresh_paths(["include/cart.h"])
    assert _languages(service)["include/cart.h"] == ("c", PARSED)
    assert _classes(service, "include/cart.h") == []
    # And back.
    write_files(root, {"include/cart.h": CPP_HEADER})
    service.refresh_paths(["include/cart.h"])
    assert _languages(service)["include/cart.h"] == ("cpp", PARSED)
    assert _classes(service, "include/cart.h") == ["shop.Cart"]
