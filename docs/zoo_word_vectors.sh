# Sourced by docs/run_charagram.sh: the
# word vectors PARAGRAM-PHRASE starts from. The model dir that
# `bash docs/train_zoo_word_vectors.sh` chose on STS-B dev
# (docs/records/zoo_word_vectors.json), else WORD_VECTORS (a model dir), else the
# Siamese CBOW best flags' run. Sets WORD_VECTORS and PARAGRAM_INIT (the
# trainer flags: --word_vectors and, from its model_config.json, the width
# as --embedding_dim).
WORD_VECTOR_CHOICE="${WORD_VECTOR_CHOICE:-docs/records/zoo_word_vectors.json}"
if [ -z "${WORD_VECTORS:-}" ] && [ -f "$WORD_VECTOR_CHOICE" ]; then
  WORD_VECTORS=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["model_dir"])' \
                 "$WORD_VECTOR_CHOICE")
fi
WORD_VECTORS="${WORD_VECTORS:-runs/siamese_cbow_best}"
PARAGRAM_INIT="--word_vectors=$WORD_VECTORS"
if [ -f "$WORD_VECTORS/model_config.json" ]; then
  PARAGRAM_INIT+=" --embedding_dim=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["model"]["embedding_dim"])' \
                    "$WORD_VECTORS/model_config.json")"
fi
