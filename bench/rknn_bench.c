/*
 * rknn_bench - whole-model latency, load time and peak memory of a .rknn model, measured through the
 * public C API only (rknn_api.h + librknnrt.so), the way a client program uses the runtime.
 *
 * Usage: rknn_bench MODEL.rknn [--iters N] [--warmup N] [--min-time-ms MS] [--max-iters N]
 *                   [--input FILE.f32] [--label NAME] [--core-mask MASK]
 *                   [--zero-copy | --native | --native-nhwc | --uint8-nhwc]
 *
 * Prints one JSON line on stdout:
 *   {"runtime":"openrknn","model":...,"mode":...,"threads":T,"load_ms":...,"first_ms":...,"n":...,
 *    "median_ms":...,"min_ms":...,"max_ms":...,"run_median_ms":...,"io_median_ms":...,
 *    "rss_start_mb":...,"rss_load_mb":...,"rss_peak_mb":...,"cpu_per_wall":...}
 *
 * What is measured:
 *   load_ms       wall time of rknn_init() from the file path (size 0): read, verify, plan, pack weights.
 *   first_ms      the first inference (inputs_set + run + outputs_get + outputs_release).
 *   median/min/max_ms  one inference each, same four calls, after `warmup` untimed ones; at least
 *                 `iters` samples and at least `min-time-ms` of sampling, at most `max-iters`.
 *                 This is what a client pays per frame, and what ort_bench.py measures for
 *                 ONNX Runtime's session.run() (which also copies inputs in and outputs out).
 *   run_median_ms rknn_run() alone.
 *   set_median_ms copy modes: rknn_inputs_set alone (0 in the zero-copy modes).
 *   io_median_ms  per frame, the frame's time minus its own rknn_run time (paired): what the copy
 *                 calls around rknn_run cost (about 0 in the zero-copy modes, whose conversions
 *                 happen inside rknn_run).
 *   mode          how frames reach the runtime (bench/zero_copy_compare.sh compares them):
 *     copy        (default) rknn_inputs_set of float32 NCHW + rknn_run + rknn_outputs_get(want_float)
 *                 + rknn_outputs_release, as above.
 *     uint8_nhwc  --uint8-nhwc: copy mode with each input given as a UINT8 NHWC image (the random
 *                 field scaled to 0..255), as a camera or decoded-image client passes it: the runtime
 *                 applies mean/std and quantizes it in rknn_inputs_set.
 *     zero_copy   --zero-copy: every input and output bound once, before timing, to an
 *                 rknn_create_mem buffer with rknn_set_io_mem and the NORMAL attributes (input float32
 *                 NCHW, output float32 in the model's layout: the same data as copy mode). A frame is
 *                 rknn_run alone: the client writes its frame into the input buffer and reads results
 *                 from the output buffer in place.
 *     native      --native: the same, with native attributes: the input as NATIVE_INPUT_ATTR reports
 *                 it (NHWC, the model's input type: INT8 codes for a quantized input, pass_through),
 *                 outputs as NATIVE_OUTPUT_ATTR reports them (NC1HWC2 for 4-D outputs, the model's
 *                 output type, no dequantization). --native-nhwc takes NATIVE_NHWC_OUTPUT_ATTR instead.
 *                 Input values are the same seeded uniform field, converted to the native type.
 *   rss_*_mb      getrusage(RUSAGE_SELF).ru_maxrss (peak resident set of the process, MiB) before
 *                 rknn_init, after it, and after all runs.
 *   cpu_per_wall  the process's CPU time (all threads, user + system) over the timed inferences
 *                 divided by their wall time: how many cores the runtime kept busy, threads that
 *                 spin-wait included. It shows the threads a core mask really gave a run (the
 *                 runtime runs small models on one thread whatever the mask, docs/decisions.md).
 * Threads: the runtime reads OPENRKNN_NUM_THREADS; it is echoed as "threads" (0 when unset).
 * --core-mask calls rknn_set_core_mask(MASK) right after rknn_init (its time counts in load_ms), as
 * clients do; echoed as "core_mask" (-1 when not given).
 * Inputs: every input gets float32 NCHW data, seeded uniform [0, 1) unless --input gives a raw
 * little-endian float32 file (single-input models; copy and zero_copy modes).
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

/* CPU time of the whole process (every thread, user + system), ms. */
static double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
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

typedef enum { MODE_COPY, MODE_ZERO_COPY, MODE_NATIVE, MODE_NATIVE_NHWC, MODE_UINT8_NHWC } Mode;
static const char* const kModeNames[] = {"copy", "zero_copy", "native", "native_nhwc", "uint8_nhwc"};

typedef struct {
  rknn_context ctx;
  Mode mode;
  uint32_t n_inputs, n_outputs;
  rknn_input* inputs;
  rknn_output* outputs;
  rknn_tensor_mem** mems; /* zero-copy modes: n_inputs input buffers, then n_outputs output buffers */
  double last_set_ms;     /* copy modes: the last frame's rknn_inputs_set time */
} Bench;

/* IEEE half from float, round to nearest even (native FLOAT16 inputs). */
static uint16_t half_from_float(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof(x));
  uint32_t sign = (x >> 16) & 0x8000u, mag = x & 0x7FFFFFFFu;
  if (mag >= 0x7F800000u) return (uint16_t)(sign | 0x7C00u | (mag > 0x7F800000u ? 0x200u : 0u));
  if (mag >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* rounds to >= 65520: infinity */
  if (mag < 0x38800000u) { /* subnormal half (or zero): scale by 2^24 and round */
    float a;
    uint32_t m = mag;
    memcpy(&a, &m, sizeof(a));
    return (uint16_t)(sign | (uint32_t)(a * 16777216.0f + 0.5f)); /* half-up: fine for bench data */
  }
  uint32_t r = mag - 0x38000000u; /* rebias exponent 127 -> 15 */
  r = (r + 0xFFFu + ((r >> 13) & 1u)) >> 13;
  return (uint16_t)(sign | r);
}

static size_t type_bytes(rknn_tensor_type t) {
  switch (t) {
    case RKNN_TENSOR_FLOAT16: case RKNN_TENSOR_INT16: case RKNN_TENSOR_UINT16: return 2;
    case RKNN_TENSOR_INT8: case RKNN_TENSOR_UINT8: case RKNN_TENSOR_BOOL: return 1;
    case RKNN_TENSOR_INT64: return 8;
    default: return 4;
  }
}

/* Fills `count` elements of type t at dst with the seeded uniform [0, 1) field (quantized with the
 * attribute's scale and zero point for 8-bit types). */
static void fill_native(void* dst, size_t count, const rknn_tensor_attr* a, uint32_t* seed) {
  for (size_t k = 0; k < count; ++k) {
    float v = (float)(next_random(seed) >> 8) / 16777216.0f;
    if (a->type == RKNN_TENSOR_FLOAT16) {
      ((uint16_t*)dst)[k] = half_from_float(v);
    } else if (a->type == RKNN_TENSOR_INT8 || a->type == RKNN_TENSOR_UINT8) {
      float q = a->scale > 0 ? (float)(long)(v / a->scale + 0.5f) + (float)a->zp : v; /* v >= 0 */
      float lo = a->type == RKNN_TENSOR_INT8 ? -128.0f : 0.0f, hi = a->type == RKNN_TENSOR_INT8 ? 127.0f : 255.0f;
      q = q < lo ? lo : q > hi ? hi : q;
      if (a->type == RKNN_TENSOR_INT8) ((int8_t*)dst)[k] = (int8_t)q;
      else ((uint8_t*)dst)[k] = (uint8_t)q;
    } else if (a->type == RKNN_TENSOR_FLOAT32) {
      ((float*)dst)[k] = v;
    } else {
      memset((char*)dst + k * type_bytes(a->type), 0, type_bytes(a->type));
    }
  }
}

static rknn_tensor_mem* create_mem_or_die(rknn_context ctx, uint32_t bytes) {
  rknn_tensor_mem* m = rknn_create_mem(ctx, bytes);
  if (!m || !m->virt_addr) die("rknn_create_mem", -1);
  return m;
}

/* Zero-copy modes: binds every input and output to its own rknn_create_mem buffer, once. Inputs are
 * filled here (copy of the float32 data in zero_copy mode, the native type in native modes). */
static void bind_io_mems(Bench* b, uint32_t* seed) {
  b->mems = calloc(b->n_inputs + b->n_outputs, sizeof(rknn_tensor_mem*));
  const int native = b->mode == MODE_NATIVE || b->mode == MODE_NATIVE_NHWC;
  for (uint32_t i = 0; i < b->n_inputs; ++i) {
    rknn_tensor_attr a;
    memset(&a, 0, sizeof(a));
    a.index = i;
    int ret = rknn_query(b->ctx, native ? RKNN_QUERY_NATIVE_INPUT_ATTR : RKNN_QUERY_INPUT_ATTR, &a, sizeof(a));
    if (ret != RKNN_SUCC) die("rknn_query(INPUT_ATTR)", ret);
    rknn_tensor_mem* m;
    if (native) {
      size_t bytes = a.size_with_stride > a.size ? a.size_with_stride : a.size;
      m = create_mem_or_die(b->ctx, (uint32_t)bytes);
      fill_native(m->virt_addr, bytes / type_bytes(a.type), &a, seed);
      a.pass_through = 1;
    } else {
      m = create_mem_or_die(b->ctx, b->inputs[i].size);
      memcpy(m->virt_addr, b->inputs[i].buf, b->inputs[i].size);
      a.type = RKNN_TENSOR_FLOAT32;
      a.fmt = RKNN_TENSOR_NCHW;
      a.pass_through = 0;
    }
    ret = rknn_set_io_mem(b->ctx, m, &a);
    if (ret != RKNN_SUCC) die("rknn_set_io_mem(input)", ret);
    b->mems[i] = m;
  }
  for (uint32_t i = 0; i < b->n_outputs; ++i) {
    rknn_tensor_attr a;
    memset(&a, 0, sizeof(a));
    a.index = i;
    int cmd = b->mode == MODE_NATIVE ? RKNN_QUERY_NATIVE_OUTPUT_ATTR
              : b->mode == MODE_NATIVE_NHWC ? RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR : RKNN_QUERY_OUTPUT_ATTR;
    int ret = rknn_query(b->ctx, (rknn_query_cmd)cmd, &a, sizeof(a));
    if (ret != RKNN_SUCC) die("rknn_query(OUTPUT_ATTR)", ret);
    size_t bytes;
    if (native) {
      bytes = a.size_with_stride > a.size ? a.size_with_stride : a.size;
    } else {
      a.type = RKNN_TENSOR_FLOAT32;  /* dequantized / widened by the runtime, like want_float */
      bytes = (size_t)a.n_elems * sizeof(float);
    }
    rknn_tensor_mem* m = create_mem_or_die(b->ctx, (uint32_t)bytes);
    ret = rknn_set_io_mem(b->ctx, m, &a);
    if (ret != RKNN_SUCC) die("rknn_set_io_mem(output)", ret);
    b->mems[b->n_inputs + i] = m;
  }
}

/* One inference as a client does it; returns the time spent in rknn_run alone. */
static double infer(Bench* b) {
  if (b->mode != MODE_COPY && b->mode != MODE_UINT8_NHWC) { /* buffers bound once: a frame is rknn_run alone */
    double t0 = now_ms();
    int ret = rknn_run(b->ctx, NULL);
    double run_ms = now_ms() - t0;
    if (ret != RKNN_SUCC) die("rknn_run", ret);
    return run_ms;
  }
  double t0 = now_ms();
  int ret = rknn_inputs_set(b->ctx, b->n_inputs, b->inputs);
  b->last_set_ms = now_ms() - t0;
  if (ret != RKNN_SUCC) die("rknn_inputs_set", ret);
  t0 = now_ms();
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
  long core_mask = -1; /* -1: rknn_set_core_mask is not called */
  Mode mode = MODE_COPY;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--iters")) iters = parse_count(a, v), ++i;
    else if (!strcmp(a, "--warmup")) warmup = parse_count(a, v), ++i;
    else if (!strcmp(a, "--min-time-ms")) min_time_ms = parse_count(a, v), ++i;
    else if (!strcmp(a, "--max-iters")) max_iters = parse_count(a, v), ++i;
    else if (!strcmp(a, "--input") && v) input_path = v, ++i;
    else if (!strcmp(a, "--label") && v) label = v, ++i;
    else if (!strcmp(a, "--core-mask")) core_mask = parse_count(a, v), ++i;
    else if (!strcmp(a, "--zero-copy")) mode = MODE_ZERO_COPY;
    else if (!strcmp(a, "--native")) mode = MODE_NATIVE;
    else if (!strcmp(a, "--native-nhwc")) mode = MODE_NATIVE_NHWC;
    else if (!strcmp(a, "--uint8-nhwc")) mode = MODE_UINT8_NHWC;
    else if (a[0] != '-' && !model_path) model_path = a;
    else {
      fprintf(stderr, "usage: rknn_bench MODEL.rknn [--iters N] [--warmup N] [--min-time-ms MS] "
                      "[--max-iters N] [--input FILE.f32] [--label NAME] [--core-mask MASK] "
                      "[--zero-copy | --native | --native-nhwc | --uint8-nhwc]\n");
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
  b.mode = mode;
  double rss_start = peak_rss_mb();
  double t0 = now_ms();
  int ret = rknn_init(&b.ctx, (void*)model_path, 0, 0, NULL);
  if (ret != RKNN_SUCC) die("rknn_init", ret);
  if (core_mask >= 0) {
    ret = rknn_set_core_mask(b.ctx, (rknn_core_mask)core_mask);
    if (ret != RKNN_SUCC) die("rknn_set_core_mask", ret);
  }
  double load_ms = now_ms() - t0;
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
    if (mode == MODE_UINT8_NHWC) { /* the same field as image bytes, in place (a byte per float) */
      unsigned char* bytes = (unsigned char*)data;
      for (uint32_t k = 0; k < attr.n_elems; ++k) bytes[k] = (unsigned char)(data[k] * 255.0f);
      b.inputs[i].size = attr.n_elems;
      b.inputs[i].type = RKNN_TENSOR_UINT8;
      b.inputs[i].fmt = RKNN_TENSOR_NHWC;
    }
  }

  if (mode != MODE_COPY && mode != MODE_UINT8_NHWC) bind_io_mems(&b, &seed);

  t0 = now_ms();
  infer(&b);
  double first_ms = now_ms() - t0;
  for (long i = 0; i < warmup; ++i) infer(&b);

  double* samples = malloc((size_t)max_iters * sizeof(double));
  double* run_samples = malloc((size_t)max_iters * sizeof(double));
  double* io_samples = malloc((size_t)max_iters * sizeof(double));
  double* set_samples = malloc((size_t)max_iters * sizeof(double));
  long n = 0;
  double start = now_ms(), cpu_start = cpu_ms();
  while (n < max_iters && (n < iters || now_ms() - start < (double)min_time_ms)) {
    t0 = now_ms();
    run_samples[n] = infer(&b);
    samples[n] = now_ms() - t0;
    io_samples[n] = samples[n] - run_samples[n];
    set_samples[n] = b.last_set_ms;
    ++n;
  }
  const double cpu_per_wall = (cpu_ms() - cpu_start) / (now_ms() - start);
  double min_ms = samples[0], max_ms = samples[0];
  for (long i = 1; i < n; ++i) {
    if (samples[i] < min_ms) min_ms = samples[i];
    if (samples[i] > max_ms) max_ms = samples[i];
  }
  double median_ms = median(samples, (size_t)n);
  double run_median_ms = median(run_samples, (size_t)n);
  double io_median_ms = median(io_samples, (size_t)n);
  double set_median_ms = median(set_samples, (size_t)n);
  double rss_peak = peak_rss_mb();

  if (b.mems) {
    for (uint32_t i = 0; i < b.n_inputs + b.n_outputs; ++i) {
      ret = rknn_destroy_mem(b.ctx, b.mems[i]);
      if (ret != RKNN_SUCC) die("rknn_destroy_mem", ret);
    }
    free(b.mems);
  }
  ret = rknn_destroy(b.ctx);
  if (ret != RKNN_SUCC) die("rknn_destroy", ret);
  for (uint32_t i = 0; i < b.n_inputs; ++i) free(b.inputs[i].buf);
  free(b.inputs);
  free(b.outputs);
  free(samples);
  free(run_samples);
  free(io_samples);
  free(set_samples);

  const char* name = label ? label : model_path;
  printf("{\"runtime\":\"openrknn\",\"model\":\"");
  for (const char* p = name; *p; ++p) { /* JSON-escape the few characters a path may hold */
    if (*p == '"' || *p == '\\') putchar('\\');
    if ((unsigned char)*p >= 0x20) putchar(*p);
  }
  printf("\",\"mode\":\"%s\",\"core_mask\":%ld,\"threads\":%d,\"load_ms\":%.3f,\"first_ms\":%.3f,\"n\":%ld,\"median_ms\":%.4f,"
         "\"min_ms\":%.4f,\"max_ms\":%.4f,\"run_median_ms\":%.4f,\"set_median_ms\":%.4f,\"io_median_ms\":%.4f,\"rss_start_mb\":%.1f,"
         "\"rss_load_mb\":%.1f,\"rss_peak_mb\":%.1f,\"cpu_per_wall\":%.2f}\n",
         kModeNames[mode], core_mask, threads_env ? atoi(threads_env) : 0, load_ms, first_ms, n, median_ms, min_ms, max_ms,
         run_median_ms, set_median_ms, io_median_ms, rss_start, rss_load, rss_peak, cpu_per_wall);
  return 0;
}
