"""The zoo's models, declared once: what each is, and where each part lives.

A model of the zoo is a `ModelSpec` in `SPECS`. Its name is the model type a
trainer writes to model_config.json, and it names the model's files by
convention (docs/adding_a_model.md lists them; tools/adding_a_model_test.py
checks that every registered model has them):

  trainers/<name>.py         the trainer: its own flags and `build_plan`
                             (trainers/trainer.py runs the shared rest);
  trainers/<name>_step.py    the train step (loss and update);
  export/<name>.py           `build_module(model_dir, config)`: the SavedModel;
  configs/<name>_*.flags     flagfiles (at least one);
  docs/<name>.md             the model's page.

The fields below say what the convention cannot: the paper, the model
classes and data pipelines the model is built from, and the evaluation sets
its trainer reports at the end. Everything here is data (module paths, not
imports), so any layer of the code can read it.
"""

import dataclasses
from typing import Tuple


@dataclasses.dataclass(frozen=True)
class ModelSpec:
  """One model of the zoo.

  Attributes:
    name: the model type (model_config.json's "model_type") and the stem of
      its trainer, train step, exporter, configs and docs page.
    title: the model's name in tables.
    paper: the citation of the paper it implements.
    models: the files of models/ that define its Keras models and loss.
    inputs: the files of inputs/ that make its data pipeline.
    eval_sets: sentence-similarity sets its trainer scores the export on at
      the end (evaluation.sts_data's groups, and "twitter_pit" for Twitter
      PIT 2015 test); empty for a pair model, which reports accuracy on its
      task's test split instead.
    sentence_encoder: whether the export's serving signature maps sentences
      to vectors (False: it scores sentence pairs).
    configs: the glob of its flagfiles, where they do not follow
      configs/<name>_*.flags.
  """
  name: str
  title: str
  paper: str
  models: Tuple[str, ...]
  inputs: Tuple[str, ...]
  eval_sets: Tuple[str, ...]
  sentence_encoder: bool = True
  configs: str = ""

  @property
  def trainer_module(self) -> str:
    return f"trainers.{self.name}"

  @property
  def export_module(self) -> str:
    return f"export.{self.name}"

  @property
  def docs_page(self) -> str:
    return f"docs/{self.name}.md"

  @property
  def config_glob(self) -> str:
    return self.configs or f"configs/{self.name}_*.flags"


SIAMESE_CBOW = ModelSpec(
    name="siamese_cbow",
    title="Siamese CBOW",
    paper=("Kenter, Borisov, de Rijke. Siamese CBOW: Optimizing Word "
           "Embeddings for Sentence Representations. ACL 2016."),
    models=("models/siamese_cbow.py",),
    inputs=("inputs/corpus.py", "inputs/siamese_cbow_data.py"),
    eval_sets=("sts", "sick", "stsb"),
)

HYBRID_SIAMESE = ModelSpec(
    name="hybrid_siamese",
    title="Hybrid siamese + MLP",
    paper=("Nicosia, Moschitti. Accurate Sentence Matching with Hybrid "
           "Siamese Networks. CIKM 2017."),
    models=("models/hybrid_siamese.py",),
    inputs=("inputs/pair_datasets.py", "inputs/word_vectors.py"),
    eval_sets=(),
    sentence_encoder=False,
    # Named by task and encoder: hybrid_msrp_gru.flags, ...
    configs="configs/hybrid_*.flags",
)

CHARAGRAM = ModelSpec(
    name="charagram",
    title="CHARAGRAM",
    paper=("Wieting, Bansal, Gimpel, Livescu. CHARAGRAM: Embedding Words and "
           "Sentences via Character n-grams. EMNLP 2016."),
    models=("models/charagram.py", "models/paragram_phrase.py", "models/char_cnn.py",
            "models/char_lstm.py", "models/paraphrase_margin_loss.py"),
    inputs=("inputs/ppdb.py", "inputs/char_ngrams.py", "inputs/word_vectors.py"),
    eval_sets=("sts", "sick", "stsb", "twitter_pit"),
)

SENT2VEC = ModelSpec(
    name="sent2vec",
    title="Sent2Vec",
    paper=("Pagliardini, Gupta, Jaggi. Unsupervised Learning of Sentence "
           "Embeddings using Compositional n-Gram Features. NAACL 2018."),
    models=("models/sent2vec.py",),
    inputs=("inputs/corpus.py", "inputs/sent2vec_featurizer.py",
            "inputs/sent2vec_data.py", "inputs/token_cache.py"),
    # STS-B dev as well: settings are chosen on it, and
    # lab.reports.word_vector_choice reads it from the final evaluation.
    eval_sets=("sts", "sick", "stsb"),
)

SPECS = {spec.name: spec for spec in (SIAMESE_CBOW, HYBRID_SIAMESE, CHARAGRAM,
                                      SENT2VEC)}


def get(name: str) -> ModelSpec:
  """The spec of model type `name`; KeyError naming the known ones."""
  try:
    return SPECS[name]
  except KeyError:
    raise KeyError(f"unknown model type {name!r}; the zoo has "
                   f"{', '.join(sorted(SPECS))}") from None
