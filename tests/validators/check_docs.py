"""Checks the project's docs: each keeps to its size, ARCHITECTURE.md's codemap names nothing that is
not there, the docs speak of the product as it is (no words of history), and every
relative link resolves. Prints every problem and exits 1 when there is any; standard library only.

    python3 tests/validators/check_docs.py [REPO]      # REPO defaults to this checkout

The rules:
- README.md and ARCHITECTURE.md are at most 15,000 bytes, BENCHMARKS.md at most 25,000.
- Every repository path ARCHITECTURE.md names in backticks exists. It names rooms (crates and folders)
  and their roles, not every file: a file's own first doc line says what it holds.
- README.md, ARCHITECTURE.md, DESIGN.md, BENCHMARKS.md and docs/*.md hold no words of history ("session",
  "previously", "used to", "no longer", "issue 12", a dated heading, …) outside code: how the product got
  where it is lives in git. Code spans and blocks are names and commands, so they are not read for this.
- A relative Markdown link in those docs points at a file that exists, and its `#fragment`, if any, at a
  heading of that file.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

SIZE_CAPS = {"README.md": 15_000, "ARCHITECTURE.md": 15_000, "BENCHMARKS.md": 25_000}

# Words that tell the order in which work happened rather than what the product is.
HISTORY = [
    (r"\bsessions?\b", "a work session"),
    (r"\bpreviously\b", "history"),
    (r"\bused to\b", "history"),
    (r"\bno longer\b", "history"),
    (r"\bformerly\b", "history"),
    (r"\banymore\b", "history"),
    (r"\buntil now\b", "history"),
    (r"\bthen we\b", "a story"),
    (r"\b(before|after) (this|that|the) (change|session|issue)\b", "history"),
    (r"\bwe (changed|added|removed|dropped|landed|tried|took|chose to)\b", "a story"),
    (r"\blanded\b", "history"),
    (r"\bissues? #?\d+\b", "an issue number"),
]
DATED_HEADING = re.compile(r"^#{1,6} .*\b(19|20)\d\d-\d\d")

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
INDENTED_CODE = re.compile(r"(?:(?<=\n\n)|\A)(?:(?: {4}|\t).*(?:\n|\Z))+")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"(?<!\!)\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)


def tracked_files(root: Path) -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True
        ).stdout.decode()
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        # Not a git checkout: walk the tree, leaving out what the build and the tools make.
        skip = {"target", "node_modules", ".git", ".venv", ".venv-cooklang", ".work", ".wrangler"}
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in skip and not d.startswith("dist")]
            for name in filenames:
                files.append(str(Path(dirpath, name).relative_to(root)))
    return sorted(f for f in files if (root / f).is_file())


def without_code(text: str) -> str:
    """The prose of a Markdown file: code blocks and spans blanked, line breaks kept."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    text = FENCE.sub(blank, text)
    text = INDENTED_CODE.sub(blank, text)
    return CODE_SPAN.sub(blank, text)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, seen = set(), {}
    for line in without_code_blocks(path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def without_code_blocks(text: str) -> str:
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    return INDENTED_CODE.sub(blank, FENCE.sub(blank, text))


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def check(root: Path) -> list[str]:
    problems = []
    docs = [root / name for name in ("README.md", "ARCHITECTURE.md", "DESIGN.md", "BENCHMARKS.md")]
    docs += sorted((root / "docs").glob("*.md"))
    for doc in docs:
        if not doc.is_file():
            problems.append(f"{doc.relative_to(root)}: missing")

    for name, cap in SIZE_CAPS.items():
        path = root / name
        if path.is_file() and (size := path.stat().st_size) > cap:
            problems.append(f"{name}: {size:,} bytes, over its {cap:,}")

    files = tracked_files(root)
    arch = root / "ARCHITECTURE.md"
    if arch.is_file():
        text = arch.read_text(encoding="utf-8")
        spans = [(m.group(2).strip(), m.start()) for m in CODE_SPAN.finditer(without_code_blocks(text))]
        top = {f.split("/")[0] for f in files}
        checked_ext = (".rs", ".sh", ".py", ".mjs", ".toml", ".sql", ".yml", ".md")
        for span, at in spans:
            if not re.fullmatch(r"[\w.\-/]+", span) or span.startswith(("/", "-")):
                continue
            first = span.split("/")[0]
            looks_like_path = ("/" in span and first in top) or (
                "/" not in span and span.endswith(checked_ext)
            )
            if looks_like_path and not (root / span).exists():
                problems.append(f"ARCHITECTURE.md:{line_of(text, at)}: `{span}` does not exist")

    for doc in docs:
        if not doc.is_file():
            continue
        rel = doc.relative_to(root)
        text = doc.read_text(encoding="utf-8")
        prose = without_code(text)
        for pattern, what in HISTORY:
            for m in re.finditer(pattern, prose, re.I):
                problems.append(f"{rel}:{line_of(prose, m.start())}: \"{m.group(0)}\" ({what})")
        for m in re.finditer(r"^.*$", without_code_blocks(text), re.M):
            if DATED_HEADING.match(m.group(0)):
                problems.append(f"{rel}:{line_of(text, m.start())}: a dated heading: {m.group(0).strip()}")

        linkable = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), without_code_blocks(text))
        targets = [(m.group(1), m.start()) for pat in (LINK, IMAGE, REF_DEF) for m in pat.finditer(linkable)]
        for target, at in targets:
            if re.match(r"^[a-z][a-z0-9+.\-]*:", target, re.I):
                continue  # http:, https:, mailto:, …
            path_part, _, fragment = target.partition("#")
            path_part = path_part.split("?")[0]
            dest = (doc.parent / path_part).resolve() if path_part else doc
            where = f"{rel}:{line_of(text, at)}"
            if not dest.exists():
                problems.append(f"{where}: the link `{target}` points at a missing file")
            elif fragment and dest.is_file() and dest.suffix == ".md" and fragment not in anchors(dest):
                problems.append(f"{where}: the link `{target}` names no heading of {dest.name}")
    return problems


def main() -> int:
    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"docs: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("docs: every check passes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
