/* Loads a SavedModel with the C API (TF_LoadSessionFromSavedModel: the C++
 * SavedModel loader TensorFlow Serving uses) and runs one signature by tensor
 * names, printing every output as text.
 *
 *   run_signature EXPORT_DIR N_INPUTS {INPUT_TENSOR LINES_FILE}... OUTPUT_TENSOR...
 *
 * INPUT_TENSOR / OUTPUT_TENSOR are "op_name:index" as the SignatureDef names
 * them; each LINES_FILE holds one string element per line (raw bytes, so
 * non-UTF-8 input reaches the graph unchanged). Each input is a 1-D tf.string
 * tensor. Output, per output tensor: a line "name rank dim0 dim1 ..." then the
 * values, one per line (float32 as %.9g, bool as 0/1). Exit status 1 on any error, with the message
 * on stderr.
 *
 * Built by export/c_loader_test.py with gcc against the tensorflow wheel's
 * libtensorflow_cc.so.2 and libtensorflow_framework.so.2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/tf_tstring.h"

static void die_on(TF_Status *status, const char *what) {
  if (TF_GetCode(status) != TF_OK) {
    fprintf(stderr, "%s: %s\n", what, TF_Message(status));
    exit(1);
  }
}

static TF_Output tensor_by_name(TF_Graph *graph, const char *name) {
  char op_name[1024];
  const char *colon = strrchr(name, ':');
  size_t length = colon ? (size_t)(colon - name) : strlen(name);
  if (length >= sizeof(op_name)) {
    fprintf(stderr, "tensor name too long: %s\n", name);
    exit(1);
  }
  memcpy(op_name, name, length);
  op_name[length] = '\0';
  TF_Output output = {TF_GraphOperationByName(graph, op_name),
                      colon ? atoi(colon + 1) : 0};
  if (output.oper == NULL) {
    fprintf(stderr, "no operation %s in the graph\n", op_name);
    exit(1);
  }
  return output;
}

/* A 1-D string tensor with one element per line of `path`. */
static TF_Tensor *string_tensor_from_lines(const char *path) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) {
    perror(path);
    exit(1);
  }
  size_t capacity = 16, count = 0;
  char **lines = malloc(capacity * sizeof(char *));
  size_t *lengths = malloc(capacity * sizeof(size_t));
  char *line = NULL;
  size_t line_capacity = 0;
  ssize_t read;
  while ((read = getline(&line, &line_capacity, file)) != -1) {
    if (read > 0 && line[read - 1] == '\n') read--;
    if (count == capacity) {
      capacity *= 2;
      lines = realloc(lines, capacity * sizeof(char *));
      lengths = realloc(lengths, capacity * sizeof(size_t));
    }
    lines[count] = malloc(read + 1);
    memcpy(lines[count], line, read);
    lengths[count++] = (size_t)read;
  }
  free(line);
  fclose(file);
  int64_t dims[1] = {(int64_t)count};
  TF_Tensor *tensor =
      TF_AllocateTensor(TF_STRING, dims, 1, count * sizeof(TF_TString));
  TF_TString *elements = (TF_TString *)TF_TensorData(tensor);
  for (size_t i = 0; i < count; ++i) {
    TF_StringInit(&elements[i]);
    TF_StringCopy(&elements[i], lines[i], lengths[i]);
    free(lines[i]);
  }
  free(lines);
  free(lengths);
  return tensor;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s EXPORT_DIR N_INPUTS {TENSOR FILE}... OUTPUT...\n",
            argv[0]);
    return 1;
  }
  const char *export_dir = argv[1];
  int n_inputs = atoi(argv[2]);
  int n_outputs = argc - 3 - 2 * n_inputs;
  if (n_inputs < 1 || n_outputs < 1) {
    fprintf(stderr, "need at least one input and one output\n");
    return 1;
  }
  TF_Status *status = TF_NewStatus();
  TF_Graph *graph = TF_NewGraph();
  TF_SessionOptions *options = TF_NewSessionOptions();
  const char *tags[] = {"serve"};
  TF_Session *session = TF_LoadSessionFromSavedModel(
      options, NULL, export_dir, tags, 1, graph, NULL, status);
  die_on(status, "TF_LoadSessionFromSavedModel");

  TF_Output *inputs = malloc(n_inputs * sizeof(TF_Output));
  TF_Tensor **input_values = malloc(n_inputs * sizeof(TF_Tensor *));
  for (int i = 0; i < n_inputs; ++i) {
    inputs[i] = tensor_by_name(graph, argv[3 + 2 * i]);
    input_values[i] = string_tensor_from_lines(argv[4 + 2 * i]);
  }
  TF_Output *outputs = malloc(n_outputs * sizeof(TF_Output));
  TF_Tensor **output_values = calloc(n_outputs, sizeof(TF_Tensor *));
  for (int i = 0; i < n_outputs; ++i) {
    outputs[i] = tensor_by_name(graph, argv[3 + 2 * n_inputs + i]);
  }
  TF_SessionRun(session, NULL, inputs, input_values, n_inputs, outputs,
                output_values, n_outputs, NULL, 0, NULL, status);
  die_on(status, "TF_SessionRun");

  for (int i = 0; i < n_outputs; ++i) {
    TF_Tensor *value = output_values[i];
    TF_DataType type = TF_TensorType(value);
    if (type != TF_FLOAT && type != TF_BOOL) {
      fprintf(stderr, "output %s is neither float32 nor bool\n",
              argv[3 + 2 * n_inputs + i]);
      return 1;
    }
    int rank = TF_NumDims(value);
    printf("%s %d", argv[3 + 2 * n_inputs + i], rank);
    for (int d = 0; d < rank; ++d) printf(" %lld", (long long)TF_Dim(value, d));
    printf("\n");
    size_t n = TF_TensorElementCount(value);
    if (type == TF_FLOAT) {
      const float *data = (const float *)TF_TensorData(value);
      for (size_t k = 0; k < n; ++k) printf("%.9g\n", data[k]);
    } else {
      const unsigned char *data = (const unsigned char *)TF_TensorData(value);
      for (size_t k = 0; k < n; ++k) printf("%d\n", data[k] ? 1 : 0);
    }
    TF_DeleteTensor(value);
  }
  for (int i = 0; i < n_inputs; ++i) TF_DeleteTensor(input_values[i]);
  TF_CloseSession(session, status);
  TF_DeleteSession(session, status);
  TF_DeleteGraph(graph);
  TF_DeleteSessionOptions(options);
  TF_DeleteStatus(status);
  free(inputs);
  free(input_values);
  free(outputs);
  free(output_values);
  return 0;
}
