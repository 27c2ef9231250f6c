#!/usr/bin/env python3
"""Self-test of docs_test.py without a cluster: the parser on testdata/selftest.md (every marker
kind), the output matcher, and a full run of the fixture with testdata/fakebin/kubectl standing in
for kubectl. The fixture says above each block whether the run must pass it, fail it or leave it
alone; this test checks that the runner's report agrees, block by block. It also checks that
docs/README.md indexes every guide in docs/."""

import os
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import docs_test  # noqa: E402

FIXTURE = HERE / "testdata" / "selftest.md"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def expectations(text):
    """Fence line -> 'pass' | 'fail' | 'none', from the nearest `(selftest: X)` above it."""
    out, current = {}, None
    blocks = docs_test.parse(str(FIXTURE), text)
    lines = text.split("\n")
    for b in blocks:
        for k in range(b.line - 1, 0, -1):
            m = re.search(r"\(selftest: (\w+)\)", lines[k - 1])
            if m:
                current = m.group(1)
                break
        out[b.line] = current
    return blocks, out


def test_parser(blocks):
    actions = [(b.lang, b.action, b.may_fail, b.expect_error) for b in blocks]
    check(actions == [
        ("console", "run", False, False), ("console", "run", False, False),
        ("console", "run", True, False), ("yaml", "apply", False, False),
        ("yaml", "apply", False, True), ("console", "expected-output", False, False),
        ("yaml", "dry-run", False, False), ("yaml", "skip", False, False),
        ("text", "skip", False, False), ("markdown", "skip", False, False),
        ("console", "run", False, False), ("console", "run", False, False),
        ("yaml", "apply", False, True), ("console", "expected-output", False, False),
        ("yaml", "dry-run", False, False), ("console", "error", False, False),
        ("", "error", False, False), ("console", "error", False, False)],
        f"parsed blocks: {actions}")
    first = blocks[0]
    check([c.text for c in first.commands] ==
          ["echo hello   world", 'x=42; echo "x is $x"', 'echo "still $x" \\\n    "joined"'],
          f"commands of the first block: {[c.text for c in first.commands]}")
    check([[t for _, t in c.expected] for c in first.commands] ==
          [["hello ..."], ["x is 42"], ["still 42 joined"]], "expected lines of the first block")
    check(first.commands[0].line == first.line + 1, "command line numbers")
    rejected = blocks[4]
    check([t for _, t in rejected.expected_error] ==
          ["Error from server (Forbidden): ... denied the request: no"], "expected error lines")
    check(blocks[7].reason == "not a Kubernetes object", "skip reason")
    check("marker not on the line right before" in blocks[16].reason, blocks[16].reason)


def test_matcher():
    m = docs_test.match_lines
    check(m([(1, "a ... c")], "xx a b c yy") is None, "... matches any text")
    check(m([(1, "NAME   STATE")], "NAME STATE") is None, "blank runs match any blank run")
    check(m([(1, "a"), (2, "b")], "b\na") == (2, "b"), "order is enforced")
    check(m([(1, "a"), (2, "a")], "a") == (2, "a"), "one actual line matches one expected line")
    check(m([(1, "x.y")], "xzy") is not None, "regex characters are literal")
    check(m([], "") is None, "no expectation, no failure")


def test_run(text, expect):
    with tempfile.TemporaryDirectory(prefix="docs-test-selftest-") as d:
        kubeconfig = pathlib.Path(d) / "kubeconfig"
        kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
        (pathlib.Path(d) / "env").write_text(
            f"export KUBECONFIG='{kubeconfig}'\nexport TRAINER_BIN_DIR='{HERE / 'testdata' / 'fakebin'}'\n")
        # The fixture runs as docs/selftest.md would (namespace docs-selftest).
        p = subprocess.run([sys.executable, str(HERE / "docs_test.py"), "--local-dir", d,
                            "--keep-going", str(FIXTURE)], capture_output=True, text=True,
                           timeout=120)
    report = p.stdout + p.stderr
    check(p.returncode == 1, f"exit status {p.returncode}, want 1")
    blocks = docs_test.parse(str(FIXTURE), text)
    starts = sorted(b.line for b in blocks)

    def block_of(line):
        return max(s for s in starts if s <= line)

    passed = {int(n) for n in re.findall(r"^  ok   \S+?:(\d+) ", report, re.M)}
    failed = {block_of(int(n)) for n in re.findall(r"^  FAIL \S+?:(\d+): ", report, re.M)}
    want_pass = {line for line, e in expect.items() if e == "pass" and
                 next(b for b in blocks if b.line == line).action != "expected-output"}
    want_fail = {line for line, e in expect.items() if e == "fail" and
                 next(b for b in blocks if b.line == line).action != "expected-output"}
    check(passed == want_pass, f"passed blocks {sorted(passed)}, want {sorted(want_pass)}")
    check(failed == want_fail, f"failed blocks {sorted(failed)}, want {sorted(want_fail)}")
    check("expected line" in report and "actual output" in report,
          "a mismatch shows expected and actual output")
    check(re.search(r"selftest\.md:\d+: `\$ f\(\) \{ return 3; \}; f` exited 3", report),
          "a failing command is reported with file:line and its exit status")
    if failures:
        print(report)


def test_index():
    """docs/README.md links every guide in docs/, and every guide it links exists."""
    docs = HERE.parents[1] / "docs"
    index = (docs / "README.md").read_text()
    linked = set(re.findall(r"\]\(([\w.-]+\.md)\)", index))
    guides = {p.name for p in docs.glob("*.md")} - {"README.md"}
    check(guides <= linked, f"guides missing from docs/README.md: {sorted(guides - linked)}")
    check(linked <= guides, f"docs/README.md links missing guides: {sorted(linked - guides)}")


def main():
    test_index()
    text = FIXTURE.read_text()
    blocks, expect = expectations(text)
    test_parser(blocks)
    test_matcher()
    test_run(text, expect)
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
