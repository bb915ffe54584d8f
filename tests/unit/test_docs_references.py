"""Every reference to a document resolves inside the repository (issue 21).

Over the tracked text files (not the sample messages in sample_data/, whose README is
checked, nor the benchmark reports in benchmarks/results/):

- no reference to the shared files outside the repository that sections used to be
  numbered in (the contract and the producers' format notes): the contract is
  docs/contract.md, the producer notes docs/producers/, and sections are named by
  their headings;
- every path ``docs/<name>.md`` names a file that exists;
- every ``<file>.md, "Section"`` or ``README, "Section"`` names a heading of that file
  (case-insensitive; the heading may go on after the name, as "Limits" names
  "Limits: oversized and hostile input"); a reference may run over lines of a comment;
- every relative Markdown link ``[text](path#anchor)`` in a Markdown file points to a
  file that exists and, with an anchor into a Markdown file, to one of its headings.

Plain text only: no Spark, no dbt.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
THIS_FILE = Path(__file__).resolve().relative_to(ROOT).as_posix()
SKIPPED_DIRS = ("sample_data/", "benchmarks/results/")

# What pointed outside the repository: the shared contract and format notes, and the
# section numbers of theirs ("§4"). Built from parts so that this file does not match.
OUTSIDE = re.compile(
    "|".join(("CONTRACT" + r"\.md", "FORMATS" + r"\.md", r"\b[A-Z]+\s*" + "§", "§" + r"\s*\d"))
)
DOCS_PATH = re.compile(r"(?<![\w/.-])docs/[\w.-]+\.md\b")
# `<file>.md, "Section"`, `README, "Section"`, `README "Section"`, with ' or " (escaped
# inside a shell string too).
SECTION_REF = re.compile(
    r"""(?P<doc>\bREADME\b(?!\.)|(?<![\w./-])(?:[\w.-]+/)*[\w.-]+\.md)"""
    r""",?[ ]+\\?(?P<q>["'])(?P<section>(?:(?!(?P=q)|\\)[^\n]){1,100}?)\\?(?P=q)"""
)
# A line break inside a comment or a docstring, with the next line's comment marker.
CONTINUATION = re.compile(r"[ \t]*\n[ \t]*(?:(?:#+|--|//|\*)[ \t]+)?")
MD_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\((?P<target>[^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^#{1,6}[ \t]+(?P<text>.+?)[ \t]*#*[ \t]*$")


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def tracked_text_files() -> dict[str, str]:
    """Path → text of every tracked text file that the checks read."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError) as exc:  # not a git checkout
        pytest.skip(f"git ls-files failed: {exc}")
    files = {}
    for path in filter(None, listed.split("\0")):
        if path == THIS_FILE:
            continue
        if path.startswith(SKIPPED_DIRS) and not (path.startswith("sample_data/") and path.endswith(".md")):
            continue
        file = ROOT / path
        if not file.is_file():  # deleted in the work tree, not yet in the index
            continue
        data = file.read_bytes()
        if b"\0" in data:
            continue
        try:
            files[path] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return files


@cache
def all_files() -> dict[str, str]:
    return tracked_text_files()


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def outside_code(markdown: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of a Markdown text, leaving out fenced code blocks."""
    fenced = False
    for number, line in enumerate(markdown.split("\n"), start=1):
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def normalize(text: str) -> str:
    return " ".join(text.replace("`", "").replace("*", "").lower().split())


def headings(markdown: str) -> list[str]:
    return [m["text"] for _, line in outside_code(markdown) if (m := HEADING.match(line))]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = heading.strip().lower().replace("`", "")
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for heading in headings(markdown):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def has_section(markdown: str, section: str) -> bool:
    wanted = normalize(section)
    return any(normalize(h).startswith(wanted) for h in headings(markdown))


def flatten(text: str) -> tuple[str, list[int]]:
    """The text with each line break of a comment or docstring (and the next line's
    comment marker) as one space, and the offset in `text` of each character."""
    out: list[str] = []
    where: list[int] = []
    last = 0
    for m in CONTINUATION.finditer(text):
        out.append(text[last : m.start()])
        where.extend(range(last, m.start()))
        out.append(" ")
        where.append(m.start())
        last = m.end()
    out.append(text[last:])
    where.extend(range(last, len(text)))
    return "".join(out), where


def resolve(referrer: str, target: str, files: dict[str, str]) -> str | None:
    """The repository path `target` names from `referrer`: relative to the referrer's
    folder, else to the root. None when neither exists."""
    folder = Path(referrer).parent
    for candidate in (folder / target, Path(target)):
        path = (ROOT / candidate).resolve()
        try:
            relative = path.relative_to(ROOT).as_posix()
        except ValueError:
            continue
        if relative in files or path.exists():
            return relative
    return None


def outside_references(path: str, text: str) -> list[Problem]:
    return [
        Problem(path, line_of(text, m.start()), f"{m.group()!r} points outside the repository")
        for m in OUTSIDE.finditer(text)
    ]


def missing_docs(path: str, text: str) -> list[Problem]:
    return [
        Problem(path, line_of(text, m.start()), f"{m.group()} does not exist")
        for m in DOCS_PATH.finditer(text)
        if not (ROOT / m.group()).is_file()
    ]


def missing_sections(path: str, text: str, files: dict[str, str]) -> list[Problem]:
    problems = []
    flat, where = flatten(text)
    for m in SECTION_REF.finditer(flat):
        line = line_of(text, where[m.start()])
        doc = "README.md" if m["doc"] == "README" else m["doc"]
        target = resolve(path, doc, files)
        if target is None:
            problems.append(Problem(path, line, f"{m['doc']} does not exist"))
        elif not has_section(files.get(target) or (ROOT / target).read_text(encoding="utf-8"), m["section"]):
            problems.append(Problem(path, line, f"{target} has no heading {m['section']!r}"))
    return problems


def broken_links(path: str, text: str, files: dict[str, str]) -> list[Problem]:
    problems = []
    for number, line in outside_code(text):
        for m in MD_LINK.finditer(line):
            target = m["target"]
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            resolved = resolve(path, file, files) if file else path
            if resolved is None:
                problems.append(Problem(path, number, f"link to {file}: no such file"))
                continue
            if anchor and resolved.endswith(".md"):
                body = files.get(resolved) or (ROOT / resolved).read_text(encoding="utf-8")
                if anchor not in anchors(body):
                    problems.append(Problem(path, number, f"link to {target}: no such heading in {resolved}"))
    return problems


def report(problems: list[Problem]) -> str:
    return "\n".join(map(str, problems))


def test_nothing_points_to_the_shared_files_outside_the_repository() -> None:
    problems = [p for path, text in all_files().items() for p in outside_references(path, text)]
    assert not problems, report(problems)


def test_every_docs_path_exists() -> None:
    problems = [p for path, text in all_files().items() for p in missing_docs(path, text)]
    assert not problems, report(problems)


def test_every_section_reference_names_a_heading() -> None:
    files = all_files()
    problems = [p for path, text in files.items() for p in missing_sections(path, text, files)]
    assert not problems, report(problems)


def test_every_relative_markdown_link_resolves() -> None:
    files = all_files()
    problems = [
        p for path, text in files.items() if path.endswith(".md") for p in broken_links(path, text, files)
    ]
    assert not problems, report(problems)


# The checks themselves, on made-up text: each must find what it is for.

DOC = "# Title\n\n## Limits: oversized and hostile input\n\n```\n## not a heading\n```\n"


def test_the_checks_find_broken_references() -> None:
    files = {"docs/x.md": DOC}
    forbidden = "(" + "CONTRACT" + " §4)"
    assert outside_references("a.py", forbidden)
    assert missing_docs("a.py", "see docs/no-such-page.md")
    assert not missing_docs("a.py", "see docs/contract.md")
    assert not missing_sections("a.py", '(docs/x.md, "Limits")', files)
    assert not missing_sections("a.sql", '-- as (docs/x.md, "Limits:\n-- oversized")', files)
    assert not missing_sections("a.sh", 'echo "docs/x.md, \\"title\\")"', files)
    assert missing_sections("a.py", '(docs/x.md, "Not a heading")', files)
    assert missing_sections("a.py", "(docs/x.md, 'not a heading')", files)
    assert missing_sections("a.py", '(docs/gone.md, "Limits")', files)
    assert not broken_links("docs/y.md", "[l](x.md#limits-oversized-and-hostile-input)", files)
    assert broken_links("docs/y.md", "[l](x.md#not-a-heading)", files)
    assert broken_links("docs/y.md", "[l](gone.md)", files)
    assert not broken_links("docs/y.md", "[l](https://example.org/gone.md)", files)
