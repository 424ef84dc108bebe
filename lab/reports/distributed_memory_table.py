"""docs/distributed.md's table of Sent2Vec's memory per process by strategy
(written by `make docs`, lab/docs.py)."""


def parameter_server_memory(source_rows, target_rows, dim, num_ps,
                            block_rows=0, bytes_per_number=4):
  """Bytes per process of a Sent2Vec run with tables over `num_ps` servers
  (docs/distributed.md): "source", "target" (whole tables), "per_ps" (the
  largest shard of each), "worker" (`block_rows` rows, the most one step
  reads) and "mirrored_replica" (both tables)."""
  row = dim * bytes_per_number
  largest_shard = lambda rows: -(-rows // num_ps)  # Ceiling division.
  return {"source": source_rows * row, "target": target_rows * row,
          "per_ps": (largest_shard(source_rows)
                     + largest_shard(target_rows)) * row,
          "worker": block_rows * row,
          "mirrored_replica": (source_rows + target_rows) * row}


# The paper's Wikipedia and Twitter Sent2Vec models: d from its Table 5,
# table rows from the sizes of the released model files (rounded; how:
# docs/distributed.md).
PAPER_SENT2VEC_MODELS = (
    # (name, d, file bytes, unigram file bytes of the corpus at its d,
    #  unigram d, words per sentence)
    ("Wikipedia uni", 600, 5e9, 5e9, 600, 1.7e9 / 69e6),
    ("Wikipedia uni+bi", 700, 16e9, 5e9, 600, 1.7e9 / 69e6),
    ("Twitter uni", 700, 13e9, 13e9, 700, 19.7e9 / 1.2e9),
    ("Twitter uni+bi", 700, 23e9, 13e9, 700, 19.7e9 / 1.2e9),
)


def paper_memory_table(num_ps=(2, 4, 8), block_lines=64, num_negatives=10):
  """docs/distributed.md's table (markdown lines) of bytes per process for
  PAPER_SENT2VEC_MODELS; a worker's block of `block_lines` sentences of
  mean length L names at most its source entries and every word as a
  target with its positive and `num_negatives` negative rows."""
  mb = lambda n: f"{n / 1e6:,.0f} MB"
  lines = ["| model | d | words V | buckets B | source + target tables | "
           "mirrored: per replica | "
           + " | ".join(f"per ps, {n} ps" for n in num_ps)
           + f" | worker, {block_lines}-line block |",
           "|---" * (6 + len(num_ps) + 1) + "|"]
  for name, dim, file_bytes, unigram_bytes, unigram_dim, length in (
      PAPER_SENT2VEC_MODELS):
    words = round(unigram_bytes / (8 * unigram_dim))
    buckets = 0
    if file_bytes != unigram_bytes:
      buckets = round(file_bytes / (4 * dim)) - 2 * words
    entries = length if buckets == 0 else 2 * length - 1
    block_rows = round(block_lines * (entries + length * (1 + num_negatives)))
    sizes = [parameter_server_memory(words + buckets + 1, words + 1, dim, n,
                                     block_rows) for n in num_ps]
    lines.append(
        f"| {name} | {dim} | {words / 1e6:.2f}M | {buckets / 1e6:.2f}M | "
        f"{mb(sizes[0]['source'] + sizes[0]['target'])} | "
        f"{mb(sizes[0]['mirrored_replica'])} | "
        + " | ".join(mb(size["per_ps"]) for size in sizes)
        + f" | {mb(sizes[0]['worker'])} ({block_rows:,} rows) |")
  return lines


def part(context):
  """The page's table (lab/docs.py)."""
  del context
  return "\n".join(paper_memory_table()) + "\n"
