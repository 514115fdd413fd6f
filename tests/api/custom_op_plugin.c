/* A custom-operator plugin as the vendor's SDK builds them (a shared library exporting
 * get_rknn_custom_op, linked against librknnrt.so), for rknn_convert --custom-op-lib in
 * tests/api/custom_op_test.cc: cstSigmoid, y = 1 / (1 + exp(-alpha * x)), alpha read with
 * rknn_custom_op_get_op_attr in init and kept in priv_data until destroy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rknn_custom_op.h"

static int sig_init(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                    rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
  rknn_custom_op_attr alpha;
  float* state = (float*)malloc(sizeof(float));
  if (!state) return RKNN_ERR_MALLOC_FAIL;
  rknn_custom_op_get_op_attr(op_ctx, "alpha", &alpha);
  /* An absent alpha is an error here, so that a lookup that misses the converter's contexts shows. */
  if (alpha.n_elems != 1 || alpha.dtype != RKNN_TENSOR_FLOAT32) {
    free(state);
    return RKNN_ERR_PARAM_INVALID;
  }
  *state = *(const float*)alpha.data;
  op_ctx->priv_data = state;
  return RKNN_SUCC;
}

static int sig_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                       rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
  const float alpha = *(const float*)op_ctx->priv_data;
  const float* x = (const float*)((char*)inputs[0].mem.virt_addr + inputs[0].mem.offset);
  float* y = (float*)((char*)outputs[0].mem.virt_addr + outputs[0].mem.offset);
  for (uint32_t i = 0; i < outputs[0].attr.n_elems; ++i) y[i] = 1.0f / (1.0f + expf(-alpha * x[i]));
  return RKNN_SUCC;
}

static int sig_destroy(rknn_custom_op_context* op_ctx) {
  free(op_ctx->priv_data);
  op_ctx->priv_data = NULL;
  return RKNN_SUCC;
}

RKNN_CUSTOM_OP_EXPORT rknn_custom_op* get_rknn_custom_op(void) {
  static rknn_custom_op op;
  memset(&op, 0, sizeof op);
  op.version = 1;
  op.target = RKNN_TARGET_TYPE_CPU;
  strncpy(op.op_type, "cstSigmoid", sizeof op.op_type - 1);
  op.init = sig_init;
  op.compute = sig_compute;
  op.destroy = sig_destroy;
  return &op;
}
