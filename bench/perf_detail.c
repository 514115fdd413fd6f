/*
 * perf_detail - per-layer time profile of a .rknn model through the public C API: rknn_init with
 * RKNN_FLAG_COLLECT_PERF_MASK, a few warm-up runs, then N timed runs, reading RKNN_QUERY_PERF_DETAIL
 * after each one. The runtime reports the last run only and the machine is noisy, so this prints,
 * per layer, the MEDIAN of the N samples.
 *
 * Usage: perf_detail MODEL.rknn [--iters N] [--warmup N] [--top K] [--raw] [--gops]
 *   --raw    also print the runtime's own PERF_DETAIL text of the last run
 *   --gops   also print, per layer with multiply-accumulates (convolutions, matrix products) and per
 *            (op type, kernel), GOPS = 2 x MACs / median time and its fraction of this machine's
 *            peak, measured here first: one core's AVX-512 FP32 FMA rate (float kernels) or VNNI
 *            u8 x s8 rate (kernels named *int8*), times OPENRKNN_NUM_THREADS (1 when unset)
 * Output (text):
 *   1. every layer: id, op type, name, kernel, output shape, output layout, MACs, median us
 *   1b. the sum of the layer medians, and the median of the whole layer loop (RKNN_QUERY_PERF_RUN)
 *       with the median, per run, of what it spent outside the layers' own times
 *   2. totals grouped by (op type, kernel), largest first, with their share of the sum
 *   3. the K slowest layers (default 15)
 * Threads: the runtime reads OPENRKNN_NUM_THREADS. Inputs: float32 NCHW, uniform [0, 1) from a
 * fixed seed (as rknn_bench).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rknn_api.h"

typedef struct {
  char line[256];    /* the layer's row of the report without the time column */
  char op[64];       /* OpType */
  char kernel[64];   /* Kernel */
  double* samples;   /* one per timed run, microseconds */
  double median;
  double macs;       /* MACs column */
} Layer;

typedef struct {
  char key[140];
  double total;
  int count;
} Group;

static void die(const char* what, int code) {
  fprintf(stderr, "perf_detail: %s failed (%d)\n", what, code);
  exit(1);
}

static long parse_count(const char* opt, const char* value) {
  char* end = NULL;
  errno = 0;
  long v = value ? strtol(value, &end, 10) : -1;
  if (!value || errno || *end || v < 0) {
    fprintf(stderr, "perf_detail: %s needs a non-negative integer\n", opt);
    exit(2);
  }
  return v;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int cmp_group_desc(const void* a, const void* b) {
  double x = ((const Group*)a)->total, y = ((const Group*)b)->total;
  return (x < y) - (x > y);
}

/* Sorts v[0..n) and returns its median (n > 0). */
static double median_of(double* v, long n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const Layer* g_layers;
static int cmp_layer_index_desc(const void* a, const void* b) {
  double x = g_layers[*(const int*)a].median, y = g_layers[*(const int*)b].median;
  return (x < y) - (x > y);
}

/* One core's peak in GOPS (2 ops per multiply-accumulate): independent accumulator chains of
 * AVX-512 FMA (fp32) or VNNI vpdpbusd (int8) for about 0.1 s. 0 where the CPU has no such unit. */
#if defined(__x86_64__)
#include <immintrin.h>
#include <time.h>
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
__attribute__((target("avx512f"), noinline)) static double peak_fp32_gops(void) {
  if (!__builtin_cpu_supports("avx512f")) return 0;
  enum { kChains = 12 };
  const long iters = 5000000;
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps((float)j);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-3f);
  const double t0 = now_s();
  for (long i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  const double t = now_s() - t0;
  __m512 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm512_add_ps(sum, acc[j]);
  volatile float sink = _mm512_reduce_add_ps(sum);
  (void)sink;
  return 2.0 * 16 * kChains * (double)iters / t / 1e9;
}
__attribute__((target("avx512f,avx512vnni"), noinline)) static double peak_int8_gops(void) {
  if (!__builtin_cpu_supports("avx512vnni")) return 0;
  enum { kChains = 12 };
  const long iters = 5000000;
  __m512i acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_epi32(j);
  const __m512i u = _mm512_set1_epi8(3), w = _mm512_set1_epi8(-2);
  const double t0 = now_s();
  for (long i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_dpbusd_epi32(acc[j], u, w);
  const double t = now_s() - t0;
  __m512i sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm512_add_epi32(sum, acc[j]);
  volatile int sink = _mm512_reduce_add_epi32(sum);
  (void)sink;
  return 2.0 * 64 * kChains * (double)iters / t / 1e9;
}
#else
static double peak_fp32_gops(void) { return 0; }
static double peak_int8_gops(void) { return 0; }
#endif

static uint32_t next_random(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

/* Splits the report into layer rows. The row format (src/runtime/context_query.cc) is
 * "ID OpType Name Kernel OutputShape Layout MACs Time(us)" separated by blanks; the header row and the
 * "Total ..." row are skipped. Returns the number of rows parsed, filling times[] (and, when
 * layers is not NULL, the descriptive fields). */
static int parse_report(const char* text, Layer* layers, int max_layers, double* times) {
  int n = 0;
  const char* p = text;
  while (*p && n < max_layers) {
    const char* eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char row[512];
    if (len >= sizeof(row)) len = sizeof(row) - 1;
    memcpy(row, p, len);
    row[len] = '\0';
    p = eol ? eol + 1 : p + len;
    if (row[0] < '0' || row[0] > '9') continue; /* header, total */
    char* last = strrchr(row, ' ');
    if (!last) continue;
    times[n] = strtod(last + 1, NULL);
    if (layers) {
      while (last > row && last[-1] == ' ') --last;
      *last = '\0';
      snprintf(layers[n].line, sizeof(layers[n].line), "%s", row);
      char* macs = strrchr(row, ' ');
      layers[n].macs = macs ? strtod(macs + 1, NULL) : 0;
      char id[32], name[256];
      if (sscanf(row, "%31s %63s %255s %63s", id, layers[n].op, name, layers[n].kernel) != 4) {
        snprintf(layers[n].op, sizeof(layers[n].op), "?");
        snprintf(layers[n].kernel, sizeof(layers[n].kernel), "?");
      }
    }
    ++n;
  }
  return n;
}

int main(int argc, char** argv) {
  const char* model_path = NULL;
  long iters = 20, warmup = 3, top = 15;
  int raw = 0, gops = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--iters")) iters = parse_count(a, v), ++i;
    else if (!strcmp(a, "--warmup")) warmup = parse_count(a, v), ++i;
    else if (!strcmp(a, "--top")) top = parse_count(a, v), ++i;
    else if (!strcmp(a, "--raw")) raw = 1;
    else if (!strcmp(a, "--gops")) gops = 1;
    else if (a[0] != '-' && !model_path) model_path = a;
    else {
      fprintf(stderr, "usage: perf_detail MODEL.rknn [--iters N] [--warmup N] [--top K] [--raw] [--gops]\n");
      return 2;
    }
  }
  if (!model_path) {
    fprintf(stderr, "perf_detail: no model given\n");
    return 2;
  }
  if (iters < 1) iters = 1;

  rknn_context ctx;
  int ret = rknn_init(&ctx, (void*)model_path, 0, RKNN_FLAG_COLLECT_PERF_MASK, NULL);
  if (ret != RKNN_SUCC) die("rknn_init", ret);
  rknn_input_output_num io;
  memset(&io, 0, sizeof(io));
  ret = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io));
  if (ret != RKNN_SUCC) die("rknn_query(IN_OUT_NUM)", ret);
  rknn_input* inputs = calloc(io.n_input ? io.n_input : 1, sizeof(rknn_input));
  rknn_output* outputs = calloc(io.n_output ? io.n_output : 1, sizeof(rknn_output));
  uint32_t seed = 42;
  for (uint32_t i = 0; i < io.n_input; ++i) {
    rknn_tensor_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.index = i;
    ret = rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr));
    if (ret != RKNN_SUCC) die("rknn_query(INPUT_ATTR)", ret);
    float* data = malloc((size_t)attr.n_elems * sizeof(float) + 1);
    for (uint32_t k = 0; k < attr.n_elems; ++k) data[k] = (float)(next_random(&seed) >> 8) / 16777216.0f;
    inputs[i].index = i;
    inputs[i].buf = data;
    inputs[i].size = attr.n_elems * (uint32_t)sizeof(float);
    inputs[i].type = RKNN_TENSOR_FLOAT32;
    inputs[i].fmt = RKNN_TENSOR_NCHW;
  }

  enum { kMaxLayers = 4096 };
  Layer* layers = calloc(kMaxLayers, sizeof(Layer));
  double* times = malloc(kMaxLayers * sizeof(double));
  /* Per run: the layer loop (RKNN_QUERY_PERF_RUN) and what it spent outside the layers' times. */
  double* run_us = malloc((size_t)(iters > 0 ? iters : 1) * sizeof(double));
  double* outside_us = malloc((size_t)(iters > 0 ? iters : 1) * sizeof(double));
  int n_layers = -1;
  const char* last_text = NULL;
  for (long it = -warmup; it < iters; ++it) {
    ret = rknn_inputs_set(ctx, io.n_input, inputs);
    if (ret != RKNN_SUCC) die("rknn_inputs_set", ret);
    ret = rknn_run(ctx, NULL);
    if (ret != RKNN_SUCC) die("rknn_run", ret);
    memset(outputs, 0, (io.n_output ? io.n_output : 1) * sizeof(rknn_output));
    for (uint32_t i = 0; i < io.n_output; ++i) outputs[i].want_float = 1;
    ret = rknn_outputs_get(ctx, io.n_output, outputs, NULL);
    if (ret != RKNN_SUCC) die("rknn_outputs_get", ret);
    rknn_outputs_release(ctx, io.n_output, outputs);
    if (it < 0) continue;
    rknn_perf_detail detail;
    memset(&detail, 0, sizeof(detail));
    ret = rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail));
    if (ret != RKNN_SUCC || !detail.perf_data) die("rknn_query(PERF_DETAIL)", ret);
    last_text = detail.perf_data;
    int n = parse_report(detail.perf_data, n_layers < 0 ? layers : NULL, kMaxLayers, times);
    if (n_layers < 0) {
      n_layers = n;
      for (int l = 0; l < n_layers; ++l) layers[l].samples = malloc((size_t)iters * sizeof(double));
    } else if (n != n_layers) {
      fprintf(stderr, "perf_detail: the report changed from %d to %d layers\n", n_layers, n);
      return 1;
    }
    for (int l = 0; l < n_layers; ++l) layers[l].samples[it] = times[l];
    rknn_perf_run run;
    memset(&run, 0, sizeof(run));
    ret = rknn_query(ctx, RKNN_QUERY_PERF_RUN, &run, sizeof(run));
    if (ret != RKNN_SUCC) die("rknn_query(PERF_RUN)", ret);
    run_us[it] = (double)run.run_duration;
    outside_us[it] = run_us[it];
    for (int l = 0; l < n; ++l) outside_us[it] -= times[l];
  }
  if (raw && last_text) printf("%s\n", last_text);

  double sum = 0;
  for (int l = 0; l < n_layers; ++l) {
    layers[l].median = median_of(layers[l].samples, iters);
    sum += layers[l].median;
  }
  const char* threads_env = getenv("OPENRKNN_NUM_THREADS");
  printf("# %s: %d layers, median of %ld runs, threads %s\n", model_path, n_layers, iters,
         threads_env ? threads_env : "(default)");
  printf("## layers (median us)\n");
  for (int l = 0; l < n_layers; ++l) printf("%s %10.1f\n", layers[l].line, layers[l].median);
  printf("Sum of layer medians (us): %.1f\n", sum);
  if (iters > 0) {
    /* What the loop has beyond the layers' own times is the runtime's work between them. */
    printf("Layer loop of rknn_run (us, RKNN_QUERY_PERF_RUN): median %.1f, of which outside the layers %.1f\n",
           median_of(run_us, iters), median_of(outside_us, iters));
  }

  Group* groups = calloc((size_t)(n_layers > 0 ? n_layers : 1), sizeof(Group));
  int n_groups = 0;
  for (int l = 0; l < n_layers; ++l) {
    char key[140];
    snprintf(key, sizeof(key), "%s %s", layers[l].op, layers[l].kernel);
    int g = 0;
    while (g < n_groups && strcmp(groups[g].key, key)) ++g;
    if (g == n_groups) snprintf(groups[n_groups++].key, sizeof(groups[0].key), "%s", key);
    groups[g].total += layers[l].median;
    groups[g].count += 1;
  }
  qsort(groups, (size_t)n_groups, sizeof(Group), cmp_group_desc);
  printf("## by op type and kernel\n%-48s %6s %12s %7s\n", "OpType Kernel", "count", "total_us", "share");
  for (int g = 0; g < n_groups; ++g)
    printf("%-48s %6d %12.1f %6.1f%%\n", groups[g].key, groups[g].count, groups[g].total,
           sum > 0 ? 100.0 * groups[g].total / sum : 0.0);

  int* order = malloc((size_t)(n_layers > 0 ? n_layers : 1) * sizeof(int));
  for (int l = 0; l < n_layers; ++l) order[l] = l;
  g_layers = layers;
  qsort(order, (size_t)n_layers, sizeof(int), cmp_layer_index_desc);
  printf("## top %ld layers\n", top);
  for (int k = 0; k < n_layers && k < top; ++k) printf("%s %10.1f\n", layers[order[k]].line, layers[order[k]].median);

  if (gops) {
    const long threads = threads_env ? strtol(threads_env, NULL, 10) : 1;
    const double cores = threads > 0 ? (double)threads : 1.0;
    double peak_f = 0, peak_i = 0;
    peak_fp32_gops(); /* a first, discarded round: the core ramps its clock up */
    peak_int8_gops();
    for (int rep = 0; rep < 5; ++rep) {  /* the best run: the least disturbed one */
      const double f = peak_fp32_gops(), i8 = peak_int8_gops();
      if (f > peak_f) peak_f = f;
      if (i8 > peak_i) peak_i = i8;
    }
    peak_f *= cores;
    peak_i *= cores;
    printf("## GOPS (2 x MACs / median time) against the measured peak of %.0f cores: fp32 FMA %.1f GOPS, "
           "int8 VNNI %.1f GOPS\n", cores, peak_f, peak_i);
    printf("%-48s %6s %12s %10s %8s %7s\n", "OpType Kernel", "count", "GMACs", "total_us", "GOPS", "peak");
    for (int g = 0; g < n_groups; ++g) {
      double macs = 0, us = 0;
      for (int l = 0; l < n_layers; ++l) {
        char key[140];
        snprintf(key, sizeof(key), "%s %s", layers[l].op, layers[l].kernel);
        if (strcmp(key, groups[g].key) || layers[l].macs <= 0) continue;
        macs += layers[l].macs;
        us += layers[l].median;
      }
      if (macs <= 0 || us <= 0) continue;
      const double r = 2.0 * macs / us / 1e3, peak = strstr(groups[g].key, "int8") ? peak_i : peak_f;
      printf("%-48s %6d %12.3f %10.1f %8.1f %6.1f%%\n", groups[g].key, groups[g].count, macs / 1e9, us, r,
             peak > 0 ? 100.0 * r / peak : 0.0);
    }
    printf("## GOPS per layer (layers with MACs, slowest first)\n");
    for (int k = 0; k < n_layers; ++k) {
      const Layer* L = &layers[order[k]];
      if (L->macs <= 0 || L->median <= 0) continue;
      const double r = 2.0 * L->macs / L->median / 1e3, peak = strstr(L->kernel, "int8") ? peak_i : peak_f;
      printf("%s %10.1f %8.1f GOPS %6.1f%%\n", L->line, L->median, r, peak > 0 ? 100.0 * r / peak : 0.0);
    }
  }

  ret = rknn_destroy(ctx);
  if (ret != RKNN_SUCC) die("rknn_destroy", ret);
  for (int l = 0; l < n_layers; ++l) free(layers[l].samples);
  for (uint32_t i = 0; i < io.n_input; ++i) free(inputs[i].buf);
  free(inputs);
  free(outputs);
  free(layers);
  free(times);
  free(groups);
  free(order);
  return 0;
}
