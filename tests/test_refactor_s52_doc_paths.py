"""A file path in a documentation file is no mention of the symbol (QA 46 aside): renaming ``get_or_create``
proposed ``tests/get_or_create/models.py`` in an egg-info ``SOURCES.txt`` as a medium doc edit, which
``apply_docs`` would have written, naming a directory the rename does not move. Such a segment is ``low`` (left
unless included by id); a prose or backticked mention is weighed as before."""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "shop/query.py": "def get_or_create(key):\n    return key\n",
    "shop/use.py": "from shop.query import get_or_create\n\nVALUE = get_or_create(1)\n",
    "shop.egg-info/SOURCES.txt": "shop/query.py\ntests/get_or_create/__init__.py\ntests/get_or_create/models.py\n",
    "docs/guide.md": "Call `get_or_create` once; get_or_create/update_or_create both take a key.\n\n"
                     "See [the tests](tests/get_or_create/models.py).\n",
}


def test_a_path_segment_in_a_doc_file_is_a_low_doc_edit_and_is_not_applied(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("get_or_create", "fetch_or_create", path="shop/query.py")
        page = env.service.inspect(preview.refactor_id, certainties=("high", "medium", "low"), kinds=("doc",))
        docs = sorted((i.edit.path, i.edit.line, i.edit.column, i.edit.certainty) for i in page.items)
        assert docs == [("docs/guide.md", 1, 6, "high"), ("docs/guide.md", 1, 27, "medium"),
                        ("docs/guide.md", 3, 22, "low"), ("shop.egg-info/SOURCES.txt", 2, 6, "low"),
                        ("shop.egg-info/SOURCES.txt", 3, 6, "low")], page.items
        env.service.apply(preview.refactor_id, apply_docs=True)
        assert env.read("shop.egg-info/SOURCES.txt") == FILES["shop.egg-info/SOURCES.txt"]
        assert env.read("docs/guide.md").startswith("Call `fetch_or_create` once; fetch_or_create/update_or_create")
        assert "(tests/get_or_create/models.py)" in env.read("docs/guide.md")
        assert "VALUE = fetch_or_create(1)" in env.read("shop/use.py")
