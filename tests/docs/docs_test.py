#!/usr/bin/env python3
"""Runs the examples of the user guides (docs/*.md) against a live cluster.

Every fenced block of a guide is either run or must say why not; the convention is in
docs/README.md ("How the guides are tested"). In short, an HTML comment on the line right before a
fence marks it:

  <!-- docs-test: run -->                ```console: `$ ` lines are commands, the lines after one
  <!-- docs-test: run, may-fail -->      up to the next `$ ` its expected output (in order, `...`
                                         matches any text); one bash session per document
  <!-- docs-test: apply -->              ```yaml: kubectl apply --server-side -f -
  <!-- docs-test: apply, expect-error -->  the same, must fail; the expected error is the very next
                                         ```console block (output lines only, no `$ `)
  <!-- docs-test: skip: <reason> -->     not run
  (no marker)                            ```yaml: kubectl apply --dry-run=server -f -;
                                         ```console/sh/bash/shell: an error (mark it run or skip)

Usage:
  docs_test.py --local-dir DIR [FILE.md ...]   run against a live `hack/run-local.sh up` in DIR
  docs_test.py --list [FILE.md ...]            print the blocks the parser found, run nothing
Without files: every docs/*.md (not docs/design/). Exit status 0 when every block passed.

Each document gets a namespace `docs-<file stem>` (deleted and created again) and a kubeconfig
copy whose current context uses it; PATH starts with $TRAINER_BIN_DIR (trainer-render, ...;
default build/bin) and the test bed's kubectl. Only the Python standard library is used.
"""

import argparse
import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARKER_RE = re.compile(r"^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
SHELL_LANGS = {"console", "sh", "bash", "shell", "shell-session"}
COMMAND_TIMEOUT = 300  # seconds per command or apply


@dataclasses.dataclass
class Command:
    line: int              # line of the `$ ` in the document
    text: str              # the command as bash reads it (continuations joined with newlines)
    expected: list         # (line, text) of expected output lines, non-empty only


@dataclasses.dataclass
class Block:
    path: str
    line: int              # line of the opening fence
    lang: str
    body: str
    action: str            # run | apply | dry-run | skip | expected-output | error
    may_fail: bool = False
    expect_error: bool = False
    reason: str = ""       # skip reason, or the parse error
    commands: list = dataclasses.field(default_factory=list)
    expected_error: list = dataclasses.field(default_factory=list)  # (line, text)

    def where(self):
        return f"{self.path}:{self.line}"


def parse_marker(text):
    """'run, may-fail' -> ('run', {'may-fail'}, ''); 'skip: why' -> ('skip', set(), 'why')."""
    if text.startswith("skip"):
        reason = text[4:].lstrip()
        if not reason.startswith(":") or not reason[1:].strip():
            return None, set(), "skip needs a reason: <!-- docs-test: skip: <reason> -->"
        return "skip", set(), reason[1:].strip()
    parts = [p.strip() for p in text.split(",")]
    return parts[0], set(parts[1:]), ""


def parse_console(block, first_line):
    """Splits a console body into commands and their expected output."""
    lines = block.body.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            if line.strip():
                block.action = "error"
                block.reason = (f"line {first_line + i}: output before the first command "
                                f"(commands start with '$ ')")
                return
            i += 1
            continue
        start = first_line + i
        text = line[2:]
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text += "\n" + lines[i]
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            if lines[i].strip():
                expected.append((first_line + i, lines[i]))
            i += 1
        block.commands.append(Command(start, text, expected))


def parse(path, text):
    """Returns the fenced blocks of a Markdown document, each with what the test does with it."""
    rel = os.path.relpath(path, ROOT) if os.path.isabs(path) else str(path)
    lines = text.split("\n")
    blocks = []
    marker = None          # (line, text) of a marker waiting for its fence
    i = 0
    while i < len(lines):
        m = MARKER_RE.match(lines[i])
        if m:
            if marker:
                blocks.append(Block(rel, marker[0], "", "", "error",
                                    reason="marker not followed by a fenced block"))
            marker = (i + 1, m.group(1))
            i += 1
            continue
        f = FENCE_RE.match(lines[i])
        if not f:
            if marker:
                blocks.append(Block(rel, marker[0], "", "", "error",
                                    reason="marker not on the line right before a fenced block"))
                marker = None
            i += 1
            continue
        indent, fence, lang = f.group(1), f.group(2), f.group(3).lower()
        open_line = i + 1
        body = []
        i += 1
        close_re = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        while i < len(lines) and not close_re.match(lines[i]):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1  # the closing fence
        block = Block(rel, open_line, lang, "\n".join(body), "")
        classify(block, marker, blocks)
        marker = None
        blocks.append(block)
    if marker:
        blocks.append(Block(rel, marker[0], "", "", "error",
                            reason="marker not followed by a fenced block"))
    link_expected_errors(blocks)
    return blocks


def classify(block, marker, previous):
    if marker is None:
        prev = previous[-1] if previous else None
        if prev and prev.expect_error and not prev.expected_error and block.lang == "console":
            block.action = "expected-output"
        elif block.lang == "yaml":
            block.action = "dry-run"
        elif block.lang in SHELL_LANGS:
            block.action = "error"
            block.reason = (f"```{block.lang} block without a marker: mark it "
                            "<!-- docs-test: run --> or <!-- docs-test: skip: <reason> -->")
        else:
            block.action = "skip"
            block.reason = f"```{block.lang or '(no language)'} is not run"
        return
    kind, flags, reason = parse_marker(marker[1])
    if kind is None:
        block.action, block.reason = "error", reason
        return
    if kind == "skip":
        block.action, block.reason = "skip", reason
        return
    allowed = {"run": ({"console"}, {"may-fail"}), "apply": ({"yaml"}, {"expect-error"})}
    if kind not in allowed:
        block.action, block.reason = "error", f"unknown marker '{marker[1]}'"
        return
    langs, known = allowed[kind]
    if block.lang not in langs or flags - known:
        block.action = "error"
        block.reason = (f"marker '{marker[1]}' on a ```{block.lang} block "
                        f"(allowed: {kind} on {'/'.join(sorted(langs))}, flags {sorted(known)})")
        return
    block.action = kind
    block.may_fail = "may-fail" in flags
    block.expect_error = "expect-error" in flags
    if kind == "run":
        parse_console(block, block.line + 1)
        if block.action == "run" and not block.commands:
            block.action, block.reason = "error", "run block without a `$ ` command"


def link_expected_errors(blocks):
    """An `apply, expect-error` block takes the console block right after it as its expectation."""
    for n, block in enumerate(blocks):
        if not block.expect_error:
            continue
        nxt = blocks[n + 1] if n + 1 < len(blocks) else None
        if nxt is None or nxt.action != "expected-output":
            block.action = "error"
            block.reason = ("apply, expect-error must be followed by an unmarked ```console "
                            "block holding the expected error")
            continue
        lines = nxt.body.split("\n")
        for k, line in enumerate(lines):
            if line.startswith("$ "):
                nxt.action = "error"
                nxt.reason = "an expected-error block holds output only, no `$ ` commands"
                break
            if line.strip():
                block.expected_error.append((nxt.line + 1 + k, line))
        if not block.expected_error and nxt.action != "error":
            nxt.action, nxt.reason = "error", "empty expected-error block"


# --- matching ---------------------------------------------------------------------------------

def line_pattern(expected):
    """An expected line as a regex: `...` is any text, a run of blanks is any run of blanks."""
    parts = []
    for piece in re.split(r"(\.\.\.|\s+)", expected.strip()):
        if piece == "...":
            parts.append(".*")
        elif piece and piece.isspace():
            parts.append(r"\s+")
        elif piece:
            parts.append(re.escape(piece))
    return re.compile("".join(parts))


def match_lines(expected, actual):
    """None when every expected line is found in `actual`, in order (each on its own line);
    otherwise the (line, text) of the first expected line not found."""
    out = actual.split("\n")
    pos = 0
    for line, text in expected:
        pat = line_pattern(text)
        while pos < len(out) and not pat.search(out[pos]):
            pos += 1
        if pos == len(out):
            return line, text
        pos += 1
    return None


# --- running ----------------------------------------------------------------------------------

class Shell:
    """One bash session; each command's output and exit status captured on its own."""

    def __init__(self, env, workdir):
        self.dir = workdir
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, cwd=ROOT, env=env, text=True, start_new_session=True)
        self.n = 0
        self.send("set -o pipefail")

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def run(self, command, timeout=COMMAND_TIMEOUT):
        """Returns (exit status or None when the shell died or timed out, output)."""
        self.n += 1
        script = os.path.join(self.dir, f"cmd{self.n}.sh")
        out = os.path.join(self.dir, f"out{self.n}")
        with open(script, "w") as f:
            f.write(command + "\n")
        token = f"__docs_test_done_{self.n}__"
        self.send(f". {script} >{out} 2>&1 </dev/null; echo \"{token} $?\"")
        status = self._wait(token, timeout)
        try:
            with open(out, errors="replace") as f:
                output = f.read()
        except FileNotFoundError:
            output = ""
        if status is None:
            output += "\n[docs-test: the shell exited or the command timed out]"
        return status, output

    def _wait(self, token, timeout):
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                self.close()
                return None
            line = self.proc.stdout.readline()
            if not line:
                return None
            if line.startswith(token):
                return int(line.split()[1])

    def close(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def alive(self):
        return self.proc.poll() is None


def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def run_document(path, blocks, base_env, keep_going):
    """Runs the blocks of one document; returns the list of failure texts."""
    stem = pathlib.Path(path).stem
    ns = "docs-" + re.sub(r"[^a-z0-9-]", "-", stem.lower())
    failures = []
    work = tempfile.mkdtemp(prefix=f"docs-test-{stem}-")
    env = dict(base_env)
    kubeconfig = os.path.join(work, "kubeconfig")
    shutil.copy(base_env["KUBECONFIG"], kubeconfig)
    env["KUBECONFIG"] = kubeconfig
    env["DOCS_TEST_NAMESPACE"] = ns
    env["DOCS_TMP"] = os.path.join(work, "tmp")  # scratch files of the document
    os.mkdir(env["DOCS_TMP"])
    shell = Shell(env, work)
    try:
        setup = (f"kubectl delete namespace {ns} --ignore-not-found --wait=true >/dev/null && "
                 f"kubectl create namespace {ns} >/dev/null && "
                 f"kubectl config set-context --current --namespace={ns} >/dev/null")
        status, output = shell.run(setup)
        if status != 0:
            return [f"{path}: namespace {ns} setup failed:\n{indent(output)}"]
        for block in blocks:
            failure = run_block(shell, block, work)
            if failure:
                failures.append(failure)
                if not keep_going or not shell.alive():
                    rest = [b for b in blocks if b.line > block.line and b.action in RUNNABLE]
                    if rest:
                        failures.append(f"{path}: {len(rest)} later block(s) not run "
                                        f"(--keep-going runs them)")
                    break
            elif block.action in RUNNABLE:
                print(f"  ok   {block.where()} {block.action}")
    finally:
        shell.close()
        shutil.rmtree(work, ignore_errors=True)
    return failures


RUNNABLE = {"run", "apply", "dry-run"}


def indent(text, prefix="      | "):
    text = text.rstrip("\n")
    return "\n".join(prefix + line for line in text.split("\n")) if text else prefix + "(empty)"


def run_block(shell, block, work):
    if block.action == "error":
        return f"{block.where()}: {block.reason}"
    if block.action == "run":
        for cmd in block.commands:
            status, output = shell.run(cmd.text)
            where = f"{block.path}:{cmd.line}"
            if status is None:
                return f"{where}: `$ {cmd.text}` did not finish:\n{indent(output)}"
            if status != 0 and not block.may_fail:
                return (f"{where}: `$ {cmd.text}` exited {status}:\n"
                        f"    actual output:\n{indent(output)}")
            missing = match_lines(cmd.expected, output)
            if missing:
                return (f"{where}: `$ {cmd.text}`: expected line {missing[0]} not found "
                        f"(in order):\n    expected:\n"
                        f"{indent(chr(10).join(t for _, t in cmd.expected))}\n"
                        f"    actual output (exit {status}):\n{indent(output)}")
        return None
    if block.action in ("apply", "dry-run"):
        manifest = os.path.join(work, f"block{block.line}.yaml")
        with open(manifest, "w") as f:
            f.write(block.body + "\n")
        if block.action == "apply":
            cmd = f"kubectl apply --server-side -f - <{shell_quote(manifest)}"
        else:
            cmd = f"kubectl apply --dry-run=server -f - <{shell_quote(manifest)}"
        status, output = shell.run(cmd)
        if status is None:
            return f"{block.where()}: `{cmd}` did not finish:\n{indent(output)}"
        if block.expect_error:
            if status == 0:
                return (f"{block.where()}: apply was expected to fail but succeeded:\n"
                        f"{indent(output)}")
            missing = match_lines(block.expected_error, output)
            if missing:
                return (f"{block.where()}: expected error line {missing[0]} not found:\n"
                        f"    expected:\n"
                        f"{indent(chr(10).join(t for _, t in block.expected_error))}\n"
                        f"    actual output:\n{indent(output)}")
            return None
        if status != 0:
            return (f"{block.where()}: `kubectl apply {'--server-side' if block.action == 'apply' else '--dry-run=server'}` "
                    f"failed (exit {status}):\n{indent(output)}")
    return None


def default_documents():
    return sorted(str(p) for p in (ROOT / "docs").glob("*.md"))


def local_run_env(local_dir):
    """The environment of a live local run: its env file's exports, PATH with the binaries."""
    env = dict(os.environ)
    env_file = pathlib.Path(local_dir) / "env"
    if not env_file.exists():
        sys.exit(f"docs_test: {env_file} missing: is `hack/run-local.sh up` running there?")
    for line in env_file.read_text().splitlines():
        m = re.match(r"^export (\w+)='?(.*?)'?$", line)
        if m:
            env[m.group(1)] = m.group(2)
    path = []
    if not env.get("TRAINER_BIN_DIR") and (ROOT / "build" / "bin").is_dir():
        env["TRAINER_BIN_DIR"] = str(ROOT / "build" / "bin")
    if env.get("TRAINER_BIN_DIR"):
        path.append(os.path.realpath(env["TRAINER_BIN_DIR"]))
    if env.get("TESTBED_BIN_DIR"):
        path.append(env["TESTBED_BIN_DIR"])
    env["PATH"] = os.pathsep.join(path + [env.get("PATH", "")])
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--local-dir", help="state dir of a live `hack/run-local.sh up`")
    ap.add_argument("--list", action="store_true", help="print the parsed blocks and exit")
    ap.add_argument("--keep-going", action="store_true",
                    help="run a document's later blocks after one fails")
    args = ap.parse_args()
    files = args.files or default_documents()
    parsed = [(f, parse(os.path.abspath(f), pathlib.Path(f).read_text())) for f in files]
    if args.list:
        for _, blocks in parsed:
            for b in blocks:
                extra = f" ({b.reason})" if b.reason else ""
                flags = "".join(f", {x}" for x, on in (("may-fail", b.may_fail),
                                                        ("expect-error", b.expect_error)) if on)
                print(f"{b.where()} {b.lang or '-'} {b.action}{flags}{extra}")
                for c in b.commands:
                    print(f"    $ {c.text!r} -> {len(c.expected)} expected line(s)")
        return 0 if all(b.action != "error" for _, bl in parsed for b in bl) else 1
    if not args.local_dir:
        ap.error("--local-dir is required to run the blocks (or --list)")
    env = local_run_env(args.local_dir)
    failures, counted = [], 0
    for path, blocks in parsed:
        runnable = [b for b in blocks if b.action in RUNNABLE or b.action == "error"]
        counted += len([b for b in blocks if b.action in RUNNABLE])
        print(f"== {os.path.relpath(os.path.abspath(path), ROOT)}: {len(runnable)} block(s)")
        if not runnable:
            continue
        doc_failures = run_document(os.path.relpath(os.path.abspath(path), ROOT), runnable, env,
                                    args.keep_going)
        for f in doc_failures:
            print("  FAIL " + f)
        failures += doc_failures
    print(f"docs_test: {len(parsed)} document(s), {counted} runnable block(s), "
          f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
