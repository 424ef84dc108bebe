"""Generated `## Title` sections of the pages in docs/, spliced in place.

Some docs/run_*.sh scripts each write one section of a page (e.g.
docs/sent2vec.md's "Training speed") from a benchmark's files; their
heredocs import this module instead of each carrying a copy of the splicing.
"""

import os


def _find_line(doc, predicate, begin=0, end=None):
  """Offset of the first line starting in [begin, end) for which
  `predicate(line)` holds; -1 if none."""
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
  """Writes `text` (starting with the line `## title`) as that section of
  the page `path`, atomically; the rest of the page is kept byte for byte.

  The old section runs from its heading to the next `## ` line (or the end);
  without one, `text` is appended. `blank_lines` blank lines separate it from
  what precedes it. keep_from: a heading line inside the old section from
  which the old section is kept after `text` (e.g. figures of another day).
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
