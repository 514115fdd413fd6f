/*
 * rknn_bench - whole-model latency, load time and peak memory of a .rknn model, measured through the
 * public C API only (rknn_api.h + librknnrt.so), the way a client program uses the runtime.
 *
 * Usage: rknn_bench MODEL.rknn [--iters N] [--warmup N] [--min-time-ms MS] [--max-iters N]
 *                   [--input FILE.f32] [--label NAME]
 *
 * Prints one JSON line on stdout:
 *   {"runtime":"openrknn","model":...,"threads":T,"load_ms":...,"first_ms":...,"n":...,
 *    "median_ms":...,"min_ms":...,"max_ms":...,"run_median_ms":...,
 *    "rss_start_mb":...,"rss_load_mb":...,"rss_peak_mb":...}
 *
 * What is measured:
 *   load_ms       wall time of rknn_init() from the file path (size 0): read, verify, plan, pack weights.
 *   first_ms      the first inference (inputs_set + run + outputs_get + outputs_release).
 *   median/min/max_ms  one inference each, same four calls, after `warmup` untimed ones; at least
 *                 `iters` samples and at least `min-time-ms` of sampling, at most `max-iters`.
 *                 This is what a client pays per frame, and what ort_bench.js measures for
 *                 ONNX Runtime's session.run() (which also copies inputs in and outputs out).
 *   run_median_ms rknn_run() alone.
 *   rss_*_mb      getrusage(RUSAGE_SELF).ru_maxrss (peak resident set of the process, MiB) before
 *                 rknn_init, after it, and after all runs.
 * Threads: the runtime reads OPENRKNN_NUM_THREADS; it is echoed as "threads" (0 when unset).
 * Inputs: every input gets float32 NCHW data, seeded uniform [0, 1) unless --input gives a raw
 * little-endian float32 file (single-input models).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "rknn_api.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double peak_rss_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is in KiB on Linux */
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, size_t n) {
  qsort(v, n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* xorshift32: a fixed, portable pseudo-random sequence for the input data. */
static uint32_t next_random(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

static void die(const char* what, int code) {
  fprintf(stderr, "rknn_bench: %s failed (%d)\n", what, code);
  exit(1);
}

static long parse_count(const char* opt, const char* value) {
  char* end = NULL;
  errno = 0;
  long v = value ? strtol(value, &end, 10) : -1;
  if (!value || errno || *end || v < 0) {
    fprintf(stderr, "rknn_bench: %s needs a non-negative integer\n", opt);
    exit(2);
  }
  return v;
}

static float* read_f32_file(const char* path, size_t count) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "rknn_bench: cannot open %s: %s\n", path, strerror(errno));
    exit(1);
  }
  float* data = malloc(count * sizeof(float));
  size_t got = data ? fread(data, sizeof(float), count, f) : 0;
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != count || extra) {
    fprintf(stderr, "rknn_bench: %s does not hold exactly %zu floats\n", path, count);
    exit(1);
  }
  return data;
}

typedef struct {
  rknn_context ctx;
  uint32_t n_inputs, n_outputs;
  rknn_input* inputs;
  rknn_output* outputs;
} Bench;

/* One inference as a client does it; returns the time spent in rknn_run alone. */
static double infer(Bench* b) {
  int ret = rknn_inputs_set(b->ctx, b->n_inputs, b->inputs);
  if (ret != RKNN_SUCC) die("rknn_inputs_set", ret);
  double t0 = now_ms();
  ret = rknn_run(b->ctx, NULL);
  double run_ms = now_ms() - t0;
  if (ret != RKNN_SUCC) die("rknn_run", ret);
  for (uint32_t i = 0; i < b->n_outputs; ++i) {
    memset(&b->outputs[i], 0, sizeof(rknn_output));
    b->outputs[i].want_float = 1;
  }
  ret = rknn_outputs_get(b->ctx, b->n_outputs, b->outputs, NULL);
  if (ret != RKNN_SUCC) die("rknn_outputs_get", ret);
  ret = rknn_outputs_release(b->ctx, b->n_outputs, b->outputs);
  if (ret != RKNN_SUCC) die("rknn_outputs_release", ret);
  return run_ms;
}

int main(int argc, char** argv) {
  const char* model_path = NULL;
  const char* input_path = NULL;
  const char* label = NULL;
  long iters = 30, warmup = 5, min_time_ms = 2000, max_iters = 1000;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--iters")) iters = parse_count(a, v), ++i;
    else if (!strcmp(a, "--warmup")) warmup = parse_count(a, v), ++i;
    else if (!strcmp(a, "--min-time-ms")) min_time_ms = parse_count(a, v), ++i;
    else if (!strcmp(a, "--max-iters")) max_iters = parse_count(a, v), ++i;
    else if (!strcmp(a, "--input") && v) input_path = v, ++i;
    else if (!strcmp(a, "--label") && v) label = v, ++i;
    else if (a[0] != '-' && !model_path) model_path = a;
    else {
      fprintf(stderr, "usage: rknn_bench MODEL.rknn [--iters N] [--warmup N] [--min-time-ms MS] "
                      "[--max-iters N] [--input FILE.f32] [--label NAME]\n");
      return 2;
    }
  }
  if (!model_path) {
    fprintf(stderr, "rknn_bench: no model given\n");
    return 2;
  }
  if (iters < 1) iters = 1;
  if (max_iters < iters) max_iters = iters;
  const char* threads_env = getenv("OPENRKNN_NUM_THREADS");

  Bench b;
  memset(&b, 0, sizeof(b));
  double rss_start = peak_rss_mb();
  double t0 = now_ms();
  int ret = rknn_init(&b.ctx, (void*)model_path, 0, 0, NULL);
  double load_ms = now_ms() - t0;
  if (ret != RKNN_SUCC) die("rknn_init", ret);
  double rss_load = peak_rss_mb();

  rknn_input_output_num io;
  memset(&io, 0, sizeof(io));
  ret = rknn_query(b.ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io));
  if (ret != RKNN_SUCC) die("rknn_query(IN_OUT_NUM)", ret);
  b.n_inputs = io.n_input;
  b.n_outputs = io.n_output;
  if (input_path && b.n_inputs != 1) {
    fprintf(stderr, "rknn_bench: --input needs a single-input model (this one has %u)\n", b.n_inputs);
    return 1;
  }
  b.inputs = calloc(b.n_inputs, sizeof(rknn_input));
  b.outputs = calloc(b.n_outputs ? b.n_outputs : 1, sizeof(rknn_output));
  uint32_t seed = 42;
  for (uint32_t i = 0; i < b.n_inputs; ++i) {
    rknn_tensor_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.index = i;
    ret = rknn_query(b.ctx, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr));
    if (ret != RKNN_SUCC) die("rknn_query(INPUT_ATTR)", ret);
    float* data;
    if (input_path) {
      data = read_f32_file(input_path, attr.n_elems);
    } else {
      data = malloc((size_t)attr.n_elems * sizeof(float) + 1);
      for (uint32_t k = 0; k < attr.n_elems; ++k) data[k] = (float)(next_random(&seed) >> 8) / 16777216.0f;
    }
    b.inputs[i].index = i;
    b.inputs[i].buf = data;
    b.inputs[i].size = attr.n_elems * (uint32_t)sizeof(float);
    b.inputs[i].type = RKNN_TENSOR_FLOAT32;
    /* NCHW = the model's original layout: the data is the same random field either way. */
    b.inputs[i].fmt = RKNN_TENSOR_NCHW;
  }

  t0 = now_ms();
  infer(&b);
  double first_ms = now_ms() - t0;
  for (long i = 0; i < warmup; ++i) infer(&b);

  double* samples = malloc((size_t)max_iters * sizeof(double));
  double* run_samples = malloc((size_t)max_iters * sizeof(double));
  long n = 0;
  double start = now_ms();
  while (n < max_iters && (n < iters || now_ms() - start < (double)min_time_ms)) {
    t0 = now_ms();
    run_samples[n] = infer(&b);
    samples[n] = now_ms() - t0;
    ++n;
  }
  double min_ms = samples[0], max_ms = samples[0];
  for (long i = 1; i < n; ++i) {
    if (samples[i] < min_ms) min_ms = samples[i];
    if (samples[i] > max_ms) max_ms = samples[i];
  }
  double median_ms = median(samples, (size_t)n);
  double run_median_ms = median(run_samples, (size_t)n);
  double rss_peak = peak_rss_mb();

  ret = rknn_destroy(b.ctx);
  if (ret != RKNN_SUCC) die("rknn_destroy", ret);
  for (uint32_t i = 0; i < b.n_inputs; ++i) free(b.inputs[i].buf);
  free(b.inputs);
  free(b.outputs);
  free(samples);
  free(run_samples);

  const char* name = label ? label : model_path;
  printf("{\"runtime\":\"openrknn\",\"model\":\"");
  for (const char* p = name; *p; ++p) { /* JSON-escape the few characters a path may hold */
    if (*p == '"' || *p == '\\') putchar('\\');
    if ((unsigned char)*p >= 0x20) putchar(*p);
  }
  printf("\",\"threads\":%d,\"load_ms\":%.3f,\"first_ms\":%.3f,\"n\":%ld,\"median_ms\":%.4f,"
         "\"min_ms\":%.4f,\"max_ms\":%.4f,\"run_median_ms\":%.4f,\"rss_start_mb\":%.1f,"
         "\"rss_load_mb\":%.1f,\"rss_peak_mb\":%.1f}\n",
         threads_env ? atoi(threads_env) : 0, load_ms, first_ms, n, median_ms, min_ms, max_ms,
         run_median_ms, rss_start, rss_load, rss_peak);
  return 0;
}
