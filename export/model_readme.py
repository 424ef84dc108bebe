"""The README.md every export carries: its model card, written for people.

`saved_model_writer.write` puts it beside saved_model.pb, made from the same
dict as assets.extra/model_card.json, so the two cannot disagree. Sections:
intended use, training data (with the data's licence), tokenisation,
limits, scores, how to load it.
"""

import collections.abc
import json

README = "README.md"

# Licences of the data sets the zoo trains on, by a name that appears in the
# training settings (corpus files, data flags); ../shared/data/README.md.
_DATA_LICENCES = (
    ("part0", "Project Gutenberg book sentences: public domain"),
    ("gutenberg", "Project Gutenberg book sentences: public domain"),
    ("ppdb", "PPDB 2.0: CC BY 3.0"),
    ("sick", "SICK 2014: CC BY-NC-SA 3.0 (non-commercial)"),
    ("msrp", "Microsoft Research Paraphrase Corpus: Microsoft Research "
             "data licence (research use)"),
    ("twitter", "SemEval-2015 Twitter paraphrase corpus: research use"),
    ("stsbenchmark", "STS Benchmark: the licences of its sources (mostly "
                     "CC BY-SA; research use)"),
)


def data_licences(card):
  """The licences of the training data named in the card's settings."""
  text = json.dumps(_plain(card.get("training", {})),
                    sort_keys=True).lower()
  found = []
  for key, licence in _DATA_LICENCES:
    if key in text and licence not in found:
      found.append(licence)
  return found


def _scores(card):
  evaluation = card.get("evaluation") or {}
  sets = evaluation.get("sets") or {}
  if not sets:
    note = evaluation.get("note", "the export was written without "
                                  "evaluation data (--data_dir)")
    return [f"No scores in this export: {note}."]
  lines = ["| set | Pearson x100 | Spearman x100 |", "|---|---:|---:|"]
  for name, score in sorted(sets.items()):
    lines.append(f"| {name} | {score.get('pearson', '')} | "
                 f"{score.get('spearman', '')} |")
  return lines


def _plain(value):
  """`value` with tf.Module's tracked dict/list wrappers made plain."""
  if isinstance(value, collections.abc.Mapping):
    return {str(k): _plain(v) for k, v in value.items()}
  if (isinstance(value, collections.abc.Sequence) and
      not isinstance(value, (str, bytes))):
    return [_plain(v) for v in value]
  return value


def render(card):
  """The README.md text of an export whose model card is `card`."""
  card = _plain(card)
  model_type = card.get("model_type", "sentence encoder")
  signature = card.get("signature", {}).get("serving_default", {})
  outputs = signature.get("outputs", {})
  quantization = card.get("quantization", {})
  limits = card.get("input_limits", {})
  tokenization = card.get("tokenization", {})
  training = card.get("training", {})
  licences = data_licences(card)
  lines = [f"# {model_type} export", ""]
  if card.get("paper"):
    lines += [f"Model: {card['paper']}", ""]
  lines += [
      "## Intended use", "",
      "Sentence embeddings for English text: semantic similarity, search, "
      "clustering and features for a classifier. Raw strings in, one "
      "vector per sentence out:", "",
      f"- inputs: {json.dumps(signature.get('inputs', {}))}",
      f"- outputs: {json.dumps(outputs)}", "",
      "```python",
      "import sentzoo",
      "model = sentzoo.load(\"<this folder>\")",
      "vectors = model.encode([\"A man plays a guitar.\"])",
      "```", "",
      "Not for: languages other than English, text far from the training "
      "data, or decisions about people without a human check.", "",
      "## Training data", ""]
  corpus = training.get("corpus_files")
  if corpus:
    lines.append(f"- corpus files: {', '.join(map(str, corpus))}")
  for key in ("num_epochs", "total_steps", "learning_rate"):
    if key in training:
      lines.append(f"- {key}: {training[key]}")
  lines += ["- data licence: " + ("; ".join(licences) if licences else
                                  "not recorded in the settings: check the "
                                  "licence of the data it was trained on"),
            "", "All settings: `assets.extra/model_card.json` "
            "(\"training\").", "", "## Tokenisation", ""]
  if tokenization.get("description"):
    lines.append(tokenization["description"] + ".")
  settings = {k: v for k, v in tokenization.items() if k != "description"}
  if settings:
    lines.append(f"Settings: {json.dumps(settings, sort_keys=True)}.")
  if card.get("vocabulary_size"):
    lines.append(f"Vocabulary: {card['vocabulary_size']:,} words.")
  lines += ["", "## Limits", ""]
  if limits:
    lines.append(
        f"- each input is cut to {limits.get('max_bytes_per_sentence')} "
        f"bytes, then to its first {limits.get('max_tokens_per_sentence')} "
        "tokens (longer input is truncated, never rejected)")
  lines.append("- words outside the vocabulary are dropped; a sentence with "
               "no known word gets the zero vector")
  if quantization.get("inference_only"):
    lines.append(f"- **inference only**: the table is stored as "
                 f"{quantization.get('mode')} and has no trainable "
                 "variables, so `hub.KerasLayer(trainable=True)` does not "
                 "fine-tune it; fine-tune the float32 export")
  lines += ["", "## Scores", ""] + _scores(card) + [""]
  return "\n".join(lines)
