"""Generated sections of the markdown pages in docs/, spliced in place.

Some docs/run_*.sh scripts each generate one `## Title` section of a page
(docs/sent2vec.md's "Compact exports", "Training speed" and "Training
memory") from the runs/ files of a benchmark. `replace_section` writes such a
section into the page: it replaces the old section of that title (from its
heading line up to the next `## ` heading line) or, when the page has none,
appends it at the end; everything else in the page is kept byte for byte. A
subsection of the old section can be kept after the new text (`keep_from`:
the speed section keeps the figures stored on another day).

The heredocs of those scripts import this module, as
`from sentzoo.reports import doc_sections`, instead of each carrying its own
copy of the splicing and of `cpu_model`.
"""

import os
import platform


def cpu_model(cpuinfo="/proc/cpuinfo"):
  """The CPU's "model name" from `cpuinfo`, else `platform.machine()`."""
  try:
    with open(cpuinfo, encoding="utf-8") as f:
      for line in f:
        if line.startswith("model name"):
          return line.split(":", 1)[1].strip()
  except OSError:
    pass
  return platform.machine()


def _find_line(doc, predicate, begin=0, end=None):
  """Offset of the first line of `doc` that starts at or after `begin`,
  before `end` (default: the end of `doc`), for which `predicate(line)` is
  true (the line without its newline); -1 if none."""
  end = len(doc) if end is None else end
  offset = 0
  for line in doc.split("\n"):
    if offset >= end:
      break
    if offset >= begin and predicate(line):
      return offset
    offset += len(line) + 1
  return -1


def replace_section(path, title, text, keep_from=None, blank_lines=2):
  """Writes `text` as the section `## title` of the markdown file `path`.

  The old section is the part of the page from the line `## title` up to
  the next line that starts with `## ` (or the end of the page). The page is
  rewritten as: what precedes the old section, without its trailing
  newlines; `blank_lines` blank lines; `text` as given; then, if anything
  follows, one newline and what follows. So a `text` that ends with one
  newline is followed by one blank line, one that ends with two by two.
  Without an old section, `text` is appended at the end of the page in the
  same way. The file is replaced atomically (written to `path + ".tmp"`,
  then `os.replace`).

  Args:
    path: the markdown file; it must exist.
    title: the section's title, without the `## `.
    text: the whole new section, starting with its line `## title`.
    keep_from: a heading line (e.g. "### Ours only, another day"): if the
      old section has that line, the old section from that line on is kept
      after `text`, as what follows it. None: nothing of the old section is
      kept.
    blank_lines: how many blank lines separate the section from what
      precedes it (none when nothing precedes it).

  Raises:
    ValueError: `text` does not start with the line `## title`.
  """
  heading = "## " + title
  first_line = text.split("\n", 1)[0]
  if first_line != heading:
    raise ValueError(f"the text of section {title!r} must start with the "
                     f"line {heading!r}, not {first_line!r}")
  with open(path, encoding="utf-8") as f:
    doc = f.read()
  start = _find_line(doc, lambda line: line == heading)
  if start < 0:
    head, tail = doc, ""
  else:
    head = doc[:start]
    body = start + len(heading)
    end = _find_line(doc, lambda line: line.startswith("## "), body)
    end = len(doc) if end < 0 else end
    tail = doc[end:]
    if keep_from is not None:
      kept = _find_line(doc, lambda line: line == keep_from, body, end)
      if kept >= 0:
        tail = doc[kept:]
  head = head.rstrip("\n")
  separator = "\n" * (blank_lines + 1) if head else ""
  tmp = path + ".tmp"
  with open(tmp, "w", encoding="utf-8") as f:
    f.write(head + separator + text + ("\n" + tail if tail else ""))
  os.replace(tmp, path)
