"""Catch2 test names that CTest can run.

tests/CMakeLists.txt registers every Catch2 TEST_CASE as its own CTest test through
catch_discover_tests, which passes the name back to the binary as a filter. CMake splits lists at
';', so a name with a ';' reached the binary cut short, matched no test case, and Catch2 reported
success without running anything: three cases were silently never run. (Commas are escaped by
catch_discover_tests.) A name must also not start or end with what Catch2 reads as filter syntax:
'[' or '~' first, '*' at either end.
"""
import re

from conftest import REPO

TEST_CASE = re.compile(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"')


def catch_test_names():
    names = []
    for path in sorted((REPO / "tests").rglob("*")):
        if path.suffix in (".cu", ".cpp") and path.is_file():
            for m in TEST_CASE.finditer(path.read_text(encoding="utf-8", errors="replace")):
                names.append((path.relative_to(REPO).as_posix(), m.group(1)))
    return names


def test_there_are_catch_tests():
    assert len(catch_test_names()) > 100


def test_no_catch_test_name_breaks_its_ctest_filter():
    bad = [(p, n) for p, n in catch_test_names() if ";" in n or n[:1] in "[~*" or n.endswith("*")]
    assert not bad, "rename these TEST_CASEs (CTest would run nothing for them): %s" % bad
