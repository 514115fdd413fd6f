/*
 * rknn_demo: a plain C client of the RKNN runtime API, written the way board applications use it:
 * load the model into memory, init, query, set a UINT8 NHWC image input, run, fetch float outputs,
 * then release and destroy in the documented order. It builds unchanged against the vendor's
 * librknnrt.so or OpenRKNN's.
 *
 * usage: rknn_demo MODEL.rknn [IMAGE.ppm] [--loops N]
 *   IMAGE.ppm: a binary PPM (P6) picture, resized (bilinear) to the model's input size; without it a
 *   synthetic gradient picture is used. Prints the model's I/O attributes, the top-5 values of each
 *   output, and the run time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rknn_api.h"

static unsigned char* read_file(const char* path, uint32_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* buf = len > 0 ? (unsigned char*)malloc((size_t)len) : NULL;
  if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) { free(buf); buf = NULL; }
  fclose(f);
  *size = buf ? (uint32_t)len : 0;
  return buf;
}

/* Reads a binary PPM (P6, maxval 255). Returns RGB bytes, row-major. */
static unsigned char* read_ppm(const char* path, int* w, int* h) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  char magic[3] = {0};
  int maxval = 0;
  unsigned char* rgb = NULL;
  if (fscanf(f, "%2s", magic) == 1 && strcmp(magic, "P6") == 0) {
    int c;
    int vals[3], got = 0;
    while (got < 3 && (c = fgetc(f)) != EOF) {
      if (c == '#') { while ((c = fgetc(f)) != EOF && c != '\n') {} continue; }
      if (c >= '0' && c <= '9') { ungetc(c, f); if (fscanf(f, "%d", &vals[got]) == 1) got++; }
    }
    fgetc(f); /* single whitespace after maxval */
    if (got == 3 && vals[0] > 0 && vals[1] > 0 && vals[2] == 255) {
      *w = vals[0]; *h = vals[1]; maxval = vals[2];
      size_t n = (size_t)(*w) * (size_t)(*h) * 3;
      rgb = (unsigned char*)malloc(n);
      if (rgb && fread(rgb, 1, n, f) != n) { free(rgb); rgb = NULL; }
    }
  }
  (void)maxval;
  fclose(f);
  return rgb;
}

/* Bilinear resize of an RGB picture to (ow, oh), NHWC uint8. */
static void resize_rgb(const unsigned char* src, int sw, int sh, unsigned char* dst, int ow, int oh) {
  for (int y = 0; y < oh; ++y) {
    float fy = (y + 0.5f) * sh / oh - 0.5f;
    if (fy < 0) fy = 0;
    int y0 = (int)fy, y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
    float dy = fy - y0;
    for (int x = 0; x < ow; ++x) {
      float fx = (x + 0.5f) * sw / ow - 0.5f;
      if (fx < 0) fx = 0;
      int x0 = (int)fx, x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
      float dx = fx - x0;
      for (int c = 0; c < 3; ++c) {
        float a = src[(y0 * sw + x0) * 3 + c], b = src[(y0 * sw + x1) * 3 + c];
        float d = src[(y1 * sw + x0) * 3 + c], e = src[(y1 * sw + x1) * 3 + c];
        float v = (a * (1 - dx) + b * dx) * (1 - dy) + (d * (1 - dx) + e * dx) * dy;
        dst[(y * ow + x) * 3 + c] = (unsigned char)(v + 0.5f);
      }
    }
  }
}

static void print_attr(const char* kind, const rknn_tensor_attr* a) {
  printf("  %s index=%u name=%s n_dims=%u dims=[%u, %u, %u, %u] n_elems=%u size=%u fmt=%s type=%s qnt_type=%s zp=%d scale=%f\n",
         kind, a->index, a->name, a->n_dims, a->dims[0], a->dims[1], a->dims[2], a->dims[3], a->n_elems, a->size,
         get_format_string(a->fmt), get_type_string(a->type), get_qnt_type_string(a->qnt_type), a->zp, a->scale);
}

int main(int argc, char** argv) {
  const char* model_path = NULL;
  const char* image_path = NULL;
  int loops = 1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--loops") == 0 && i + 1 < argc) loops = atoi(argv[++i]);
    else if (!model_path) model_path = argv[i];
    else image_path = argv[i];
  }
  if (!model_path || loops < 1) {
    fprintf(stderr, "usage: %s MODEL.rknn [IMAGE.ppm] [--loops N]\n", argv[0]);
    return 2;
  }

  int status = 1;
  rknn_context ctx = 0;
  rknn_input_output_num io_num;
  rknn_output* outputs = NULL;
  unsigned char* input_data = NULL;
  memset(&io_num, 0, sizeof(io_num));

  uint32_t model_size = 0;
  unsigned char* model = read_file(model_path, &model_size);
  if (!model) { fprintf(stderr, "cannot read %s\n", model_path); return 1; }
  int ret = rknn_init(&ctx, model, model_size, 0, NULL);
  free(model); /* the runtime keeps its own copy */
  if (ret != RKNN_SUCC) { printf("rknn_init failed! ret=%d\n", ret); goto out; }

  rknn_sdk_version ver;
  if (rknn_query(ctx, RKNN_QUERY_SDK_VERSION, &ver, sizeof(ver)) == RKNN_SUCC)
    printf("sdk version: %s driver version: %s\n", ver.api_version, ver.drv_version);
  ret = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num));
  if (ret != RKNN_SUCC) { printf("rknn_query IN_OUT_NUM failed! ret=%d\n", ret); goto out; }
  printf("model input num: %u, output num: %u\n", io_num.n_input, io_num.n_output);

  rknn_tensor_attr in_attr;
  memset(&in_attr, 0, sizeof(in_attr));
  in_attr.index = 0;
  ret = rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &in_attr, sizeof(in_attr));
  if (ret != RKNN_SUCC) { printf("rknn_query INPUT_ATTR failed! ret=%d\n", ret); goto out; }
  print_attr("input", &in_attr);
  outputs = (rknn_output*)calloc(io_num.n_output, sizeof(rknn_output));
  for (uint32_t i = 0; i < io_num.n_output; ++i) {
    rknn_tensor_attr a;
    memset(&a, 0, sizeof(a));
    a.index = i;
    if (rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)) != RKNN_SUCC) goto out;
    print_attr("output", &a);
  }

  if (in_attr.n_dims != 4 || in_attr.fmt != RKNN_TENSOR_NHWC || in_attr.dims[3] != 3) {
    printf("this demo feeds 3-channel images; the model's first input is not one\n");
    goto out;
  }
  int H = (int)in_attr.dims[1], W = (int)in_attr.dims[2];
  input_data = (unsigned char*)malloc((size_t)H * W * 3);
  if (image_path) {
    int iw = 0, ih = 0;
    unsigned char* rgb = read_ppm(image_path, &iw, &ih);
    if (!rgb) { fprintf(stderr, "cannot read PPM picture %s\n", image_path); goto out; }
    resize_rgb(rgb, iw, ih, input_data, W, H);
    free(rgb);
  } else {
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        for (int c = 0; c < 3; ++c) input_data[(y * W + x) * 3 + c] = (unsigned char)((x * 255 / W + y * 255 / H * c) & 0xff);
  }

  rknn_input input;
  memset(&input, 0, sizeof(input));
  input.index = 0;
  input.type = RKNN_TENSOR_UINT8;
  input.fmt = RKNN_TENSOR_NHWC;
  input.size = (uint32_t)(H * W * 3);
  input.buf = input_data;
  ret = rknn_inputs_set(ctx, 1, &input);
  if (ret != RKNN_SUCC) { printf("rknn_inputs_set failed! ret=%d\n", ret); goto out; }

  for (int l = 0; l < loops; ++l) {
    ret = rknn_run(ctx, NULL);
    if (ret != RKNN_SUCC) { printf("rknn_run failed! ret=%d\n", ret); goto out; }
    rknn_perf_run perf;
    if (rknn_query(ctx, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf)) == RKNN_SUCC)
      printf("run %d: %.3f ms\n", l, perf.run_duration / 1000.0);
  }

  for (uint32_t i = 0; i < io_num.n_output; ++i) outputs[i].want_float = 1;
  ret = rknn_outputs_get(ctx, io_num.n_output, outputs, NULL);
  if (ret != RKNN_SUCC) { printf("rknn_outputs_get failed! ret=%d\n", ret); goto out; }
  for (uint32_t i = 0; i < io_num.n_output; ++i) {
    const float* v = (const float*)outputs[i].buf;
    uint32_t n = outputs[i].size / 4;
    int top[5] = {-1, -1, -1, -1, -1};
    for (int k = 0; k < 5; ++k) {
      for (uint32_t j = 0; j < n; ++j) {
        int used = 0;
        for (int q = 0; q < k; ++q) used |= top[q] == (int)j;
        if (!used && (top[k] < 0 || v[j] > v[top[k]])) top[k] = (int)j;
      }
    }
    printf("output %u (%u values) top-5:", i, n);
    for (int k = 0; k < 5 && top[k] >= 0; ++k) printf(" [%d] %.4f", top[k], v[top[k]]);
    printf("\n");
  }
  status = 0;

out:
  if (outputs) {
    if (ctx) rknn_outputs_release(ctx, io_num.n_output, outputs);
    free(outputs);
  }
  free(input_data);
  if (ctx) rknn_destroy(ctx);
  return status;
}
