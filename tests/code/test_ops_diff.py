"""Unified diffs to changed line ranges on the pre-image side (what the indexed graph holds)."""

from __future__ import annotations

import pytest

from graphctx import bounds
from graphctx.code.diff import Change, parse_diff
from graphctx.errors import BoundExceeded, InputError

GIT = """diff --git a/pkg/a.py b/pkg/a.py
index 1111111..2222222 100644
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -10,4 +10,3 @@ def f():
     keep
-    old one
-    old two
+    new
     keep
\\ No newline at end of file
@@ -40,0 +42,2 @@
+added
+added
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1 @@
+x
diff --git a/old_name.py b/new_name.py
similarity index 100%
rename from old_name.py
rename to new_name.py
Binary files a/logo.png and b/logo.png differ
"""


def test_git_diff_hunks_become_old_side_ranges():
    files = {f.path: f for f in parse_diff(GIT)}
    a = files["pkg/a.py"]
    assert not a.whole and not a.new
    # lines 11-12 replaced (one range), two lines inserted after old line 40
    assert a.changes == [Change(11, 12), Change(40, 41, between=True)]
    assert files["gone.py"].whole
    assert files["new.py"].whole and files["new.py"].new
    assert files["old_name.py"].whole  # a rename changes every qualified name in the file


def test_plain_diff_u_without_git_headers():
    text = "--- pkg/a.py\t2025-01-01 00:00:00\n+++ pkg/a.py\t2025-01-02 00:00:00\n@@ -3 +3 @@\n-x\n+y\n"
    [f] = parse_diff(text)
    assert (f.path, f.changes) == ("pkg/a.py", [Change(3, 3)])


def test_an_insertion_touches_only_a_symbol_spanning_both_neighbours():
    insertion = Change(20, 21, between=True)
    assert insertion.touches(10, 30)
    assert not insertion.touches(10, 20)  # inserted after the symbol's last line
    assert not insertion.touches(21, 30)
    assert Change(5, 7).touches(7, 9) and not Change(5, 7).touches(8, 9)


def test_lines_with_form_feeds_stay_one_line():
    text = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\x0cb\n+c\n d\n"
    [f] = parse_diff(text)
    assert f.changes == [Change(1, 1)]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "must not be empty"),
        ("hello\n", "no file changes"),
        ("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n", "ends inside a hunk"),
        ("--- a/x.py\n+++ b/x.py\n@@ -a +b @@\n", "malformed hunk header"),
        ("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n?b\n", "unexpected line"),
        ("@@ -1 +1 @@\n-a\n+b\n", "before any file header"),
    ],
)
def test_malformed_diffs_are_typed_errors(text, says):
    with pytest.raises(InputError) as raised:
        parse_diff(text)
    assert says in raised.value.message


def test_the_diff_bound_is_named():
    with pytest.raises(BoundExceeded) as raised:
        parse_diff(" " * (bounds.DIFF_BYTES + 1))
    assert raised.value.details == {
        "bound": "diff", "limit": bounds.DIFF_BYTES, "actual": bounds.DIFF_BYTES + 1, "unit": "bytes",
    }  # fmt: skip
