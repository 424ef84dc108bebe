"""The papers' reported numbers, as data (copied from the papers' tables).

Every number here is checked by paper_numbers_test.py against the papers'
texts in ../shared/papers and against the figures quoted in
../shared/MODELS.md. Correlations are x 100 (the papers print .4379 or
.65; here 43.79 and 65.0). Set names follow evaluation/sts_data.py
("STS2014.tweet-news", "SICK.test"); aggregates use the keys of
evaluation/sts.py ("STS2014.mean", "STS.mean").

Sources (papers' tables; columns in the papers' order):
  * SIAMESE_CBOW_TABLE1: Kenter et al. (ACL 2016) Table 1, Pearson
    (Spearman) on 20 SemEval sets (STS2013.SMT is not in the shared data).
  * CHARAGRAM_TABLE1: Wieting et al. (EMNLP 2016) supplement Table 1; its
    year means and Average include 2013 SMT; its "SICK" is the test set.
  * SENT2VEC_TABLE1/2: Pagliardini et al. (NAACL 2018) Table 1 (transfer;
    MSRP accuracy / F1) and Table 2 (Spearman / Pearson on STS 2014, and
    SICK on test + train, unlike the SICK test set evaluated here).
  * HYBRID_SIAMESE_TABLES: Nicosia and Moschitti (CIKM 2017) Tables 1
    (Quora) and 2 (binary SNLI): test accuracy per encoder and loss.
"""

# What each paper trained on (for the page's "training data" column).
PAPER_TRAINING_DATA = {
    "siamese_cbow": "Toronto Book Corpus (74M sentences)",
    "sent2vec": "Toronto Book Corpus (70M sentences, 0.9B words)",
    "charagram": "PPDB phrase pairs (Wieting et al.)",
}

# Table 1 columns in the paper's order.
SIAMESE_CBOW_COLUMNS = ("w2v skipgram", "w2v CBOW", "skip-thought",
                        "Siamese CBOW")

# set -> {column: (pearson, spearman)} x 100.
SIAMESE_CBOW_TABLE1 = {
    "STS2012.MSRpar": ((37.40, 39.91), (34.19, 35.21), (5.60, 8.43),
                       (43.79, 43.11)),
    "STS2012.MSRvid": ((52.13, 55.19), (50.99, 54.50), (58.07, 58.29),
                       (45.22, 47.59)),
    "STS2012.surprise.OnWN": ((60.40, 64.76), (63.20, 64.40), (60.45, 64.31),
                              (64.44, 64.75)),
    "STS2012.SMTeuroparl": ((30.71, 52.38), (39.76, 53.10), (42.03, 49.99),
                            (45.03, 54.49)),
    "STS2012.surprise.SMTnews": ((44.87, 36.17), (44.62, 39.01),
                                 (39.11, 36.28), (39.02, 41.53)),
    "STS2013.FNWN": ((34.80, 34.01), (27.36, 28.67), (31.24, 35.11),
                     (23.22, 22.35)),
    "STS2013.OnWN": ((47.45, 55.09), (51.65, 60.08), (24.18, 27.66),
                     (49.85, 52.27)),
    "STS2013.SMT": ((18.38, 28.43), (24.94, 29.19), (33.78, 34.98),
                    (33.12, 33.56)),
    "STS2013.headlines": ((59.35, 60.44), (57.30, 57.66), (38.61, 39.09),
                          (65.34, 65.16)),
    "STS2014.OnWN": ((58.48, 66.76), (60.68, 68.87), (46.82, 51.61),
                     (60.73, 65.54)),
    "STS2014.deft-forum": ((31.93, 38.10), (33.39, 35.07), (37.36, 37.37),
                           (40.82, 41.88)),
    "STS2014.deft-news": ((59.06, 56.78), (57.37, 55.77), (46.17, 47.62),
                          (59.13, 57.54)),
    "STS2014.headlines": ((57.90, 55.44), (54.55, 50.95), (40.31, 39.10),
                          (63.64, 62.60)),
    "STS2014.images": ((51.31, 52.88), (50.56, 52.13), (42.57, 42.33),
                       (64.97, 64.84)),
    "STS2014.tweet-news": ((63.36, 65.44), (68.97, 66.15), (51.38, 52.97),
                           (73.15, 71.28)),
    "STS2015.answers-forums": ((18.92, 14.63), (17.67, 12.94),
                               (27.84, 19.09), (21.81, 14.69)),
    "STS2015.answers-students": ((32.33, 26.54), (33.44, 27.42),
                                 (26.61, 20.68), (36.71, 28.24)),
    "STS2015.belief": ((24.35, 26.35), (32.77, 32.80), (45.84, 33.68),
                       (47.69, 31.84)),
    "STS2015.headlines": ((18.75, 7.54), (18.06, 7.65), (12.48, 4.64),
                          (21.51, 8.46)),
    "STS2015.images": ((24.54, 16.11), (22.92, 14.38), (21.00, 12.20),
                       (25.60, 14.67)),
}

# Supplement Table 1 columns used here, in the paper's order.
CHARAGRAM_COLUMNS = ("charCNN", "charLSTM", "PARAGRAM-PHRASE",
                     "CHARAGRAM-PHRASE")
# row -> (charCNN, charLSTM, PARAGRAM-PHRASE, CHARAGRAM-PHRASE), Pearson x 100.
CHARAGRAM_TABLE1 = {
    "STS2012.MSRpar": (50.6, 23.6, 42.9, 59.7),
    "STS2012.MSRvid": (72.2, 47.2, 76.1, 79.6),
    "STS2012.SMTeuroparl": (50.9, 38.5, 45.5, 57.2),
    "STS2012.surprise.OnWN": (61.8, 53.0, 70.7, 68.7),
    "STS2012.surprise.SMTnews": (46.8, 38.3, 57.2, 65.2),
    "STS2012.mean": (56.5, 40.1, 58.5, 66.1),
    "STS2013.headlines": (68.1, 54.4, 72.3, 75.0),
    "STS2013.OnWN": (54.4, 33.5, 70.5, 67.8),
    "STS2013.FNWN": (26.4, 10.6, 47.5, 42.3),
    "STS2013.SMT": (42.0, 24.2, 40.3, 43.6),
    "STS2013.mean": (47.7, 30.7, 57.7, 57.2),
    "STS2014.deft-forum": (45.6, 19.4, 50.2, 62.7),
    "STS2014.deft-news": (73.5, 54.6, 73.2, 77.0),
    "STS2014.headlines": (67.4, 53.7, 69.1, 74.3),
    "STS2014.images": (68.7, 53.6, 80.0, 77.6),
    "STS2014.OnWN": (66.8, 46.1, 79.9, 77.0),
    "STS2014.tweet-news": (66.2, 53.6, 76.8, 79.1),
    "STS2014.mean": (64.7, 46.8, 71.5, 74.7),
    "STS2015.answers-forums": (47.2, 27.3, 67.4, 61.5),
    "STS2015.answers-students": (75.0, 63.1, 78.3, 78.5),
    "STS2015.belief": (65.7, 22.6, 76.0, 77.2),
    "STS2015.headlines": (72.2, 61.7, 74.5, 78.7),
    "STS2015.images": (70.0, 52.8, 82.2, 84.4),
    "STS2015.mean": (66.0, 45.5, 75.7, 76.1),
    "SICK.test": (62.9, 50.3, 72.0, 70.0),
    "Twitter2015": (48.6, 39.9, 52.7, 53.6),
    "Average": (59.2, 41.9, 66.2, 68.7),
}
# Table 1 of the Sent2Vec paper: model -> accuracies (MSRP acc / F1).
SENT2VEC_TABLE1_TASKS = ("MSRP_acc", "MSRP_f1", "MR", "CR", "SUBJ", "MPQA",
                         "TREC", "Average")
_SENT2VEC_TABLE1_ROWS = {
    "SAE": (74.3, 81.7, 62.6, 68.0, 86.1, 76.8, 80.2, 74.7),
    "SAE + embs.": (70.6, 77.9, 73.2, 75.3, 89.8, 86.2, 80.4, 79.3),
    "SDAE": (76.4, 83.4, 67.6, 74.0, 89.3, 81.3, 77.7, 78.3),
    "SDAE + embs.": (73.7, 80.7, 74.6, 78.0, 90.8, 86.9, 78.4, 80.4),
    "ParagraphVec DBOW": (72.9, 81.1, 60.2, 66.9, 76.3, 70.7, 59.4, 67.7),
    "ParagraphVec DM": (73.6, 81.9, 61.5, 68.6, 76.4, 78.1, 55.8, 69.0),
    "Skipgram": (69.3, 77.2, 73.6, 77.3, 89.2, 85.0, 82.2, 78.5),
    "C-BOW": (67.6, 76.1, 73.6, 77.3, 89.1, 85.0, 82.2, 79.1),
    "Unigram TFIDF": (73.6, 81.7, 73.7, 79.2, 90.3, 82.4, 85.0, 80.7),
    "Sent2Vec uni.": (72.2, 80.3, 75.1, 80.2, 90.6, 86.3, 83.8, 81.4),
    "Sent2Vec uni. + bi.": (72.5, 80.8, 75.8, 80.3, 91.2, 85.9, 86.4, 82.0),
    "SkipThought": (73.0, 82.0, 76.5, 80.1, 93.6, 87.1, 92.2, 83.8),
    "FastSent": (72.2, 80.3, 70.8, 78.4, 88.7, 80.6, 76.8, 77.9),
    "FastSent+AE": (71.2, 79.1, 71.8, 76.7, 88.8, 81.5, 80.4, 78.4),
    "C-PHRASE": (72.2, 79.6, 75.7, 78.8, 91.1, 86.2, 78.8, 80.5),
}
SENT2VEC_TABLE1 = {
    model: dict(zip(SENT2VEC_TABLE1_TASKS, values))
    for model, values in _SENT2VEC_TABLE1_ROWS.items()}
# The rows shown beside the zoo's models (word-vector averages, Sent2Vec,
# and the best ordered-sentence model).
SENT2VEC_TABLE1_SHOWN = ("C-BOW", "Skipgram", "Sent2Vec uni.",
                         "Sent2Vec uni. + bi.", "SkipThought")

# Table 2 of the Sent2Vec paper: model -> {set: (spearman, pearson)} x 100.
SENT2VEC_TABLE2_SETS = ("STS2014.deft-news", "STS2014.deft-forum",
                        "STS2014.OnWN", "STS2014.tweet-news",
                        "STS2014.images", "STS2014.headlines", "SICK",
                        "Average")
_SENT2VEC_TABLE2_ROWS = {
    "Skipgram": ((56, 59), (42, 42), (73, 70), (71, 74), (65, 67), (55, 58),
                 (60, 69), (60, 63)),
    "C-BOW": ((57, 61), (43, 44), (72, 69), (71, 75), (71, 73), (55, 59),
              (60, 69), (60, 65)),
    "Sent2Vec uni.": ((62, 67), (49, 49), (75, 72), (70, 75), (78, 82),
                      (61, 63), (61, 70), (65, 68)),
    "Sent2Vec uni. + bi.": ((62, 67), (51, 51), (71, 68), (70, 75), (75, 79),
                            (59, 62), (62, 70), (65, 67)),
    "SkipThought": ((44, 45), (14, 15), (39, 34), (42, 43), (55, 60),
                    (43, 44), (57, 60), (42, 43)),
    "Siamese C-BOW": ((58, 59), (42, 41), (66, 61), (71, 73), (65, 65),
                      (63, 64), None, None),
}
SENT2VEC_TABLE2 = {
    model: {name: (None if v is None else (float(v[0]), float(v[1])))
            for name, v in zip(SENT2VEC_TABLE2_SETS, values)}
    for model, values in _SENT2VEC_TABLE2_ROWS.items()}

# Nicosia and Moschitti (CIKM 2017): table -> encoder -> (contrastive,
# logistic, joint) test accuracy.
HYBRID_SIAMESE_TABLES = {
    "Quora (paper, Table 1)": {"lstm": (85.26, 81.98, 85.71),
                               "gru": (86.72, 83.00, 86.82),
                               "cnn": (83.1, 83.04, 83.95),
                               "bigru": (85.74, 84.38, 86.06)},
    "SNLI binary (paper, Table 2)": {"lstm": (84.58, 88.25, 89.08),
                                     "gru": (84.96, 88.53, 90.58),
                                     "cnn": (80.78, 90.99, 92.00),
                                     "bigru": (85.58, 91.40, 91.97)},
}


def siamese_cbow_reference(column: str = "Siamese CBOW") -> dict:
  """{set: (pearson, spearman)} of one Table 1 column (evaluation.sts refs)."""
  i = SIAMESE_CBOW_COLUMNS.index(column)
  return {name: values[i] for name, values in SIAMESE_CBOW_TABLE1.items()}


def charagram_reference(column: str = "CHARAGRAM-PHRASE") -> dict:
  """{row key: pearson} of one supplement Table 1 column (sets, year means)."""
  i = CHARAGRAM_COLUMNS.index(column)
  return {name: values[i] for name, values in CHARAGRAM_TABLE1.items()
          if name.startswith(("STS", "SICK"))}


def sent2vec_sts_reference(model: str = "Sent2Vec uni.") -> dict:
  """{row key: (pearson, spearman)} of Table 2 (STS 2014 sets and mean).

  SICK is left out: the paper's SICK figure is on test + train, not the
  SICK test set evaluated here.
  """
  # Table 2's Average includes SICK too: it is left out with it.
  return {name: (value[1], value[0])
          for name, value in SENT2VEC_TABLE2[model].items()
          if value is not None and name not in ("SICK", "Average")}
