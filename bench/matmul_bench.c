/* Matmul API throughput: C = A x B through rknn_matmul_api.h only (plain C client).
 * Usage: matmul_bench [K] [N] [loops]. Prints GOPS (2*M*K*N operations per run) for
 * RKNN_INT8_MM_INT8_TO_INT32 and RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 at M = 1, 4, 16, 64 with one
 * and two threads (core masks RKNN_NPU_CORE_0 and RKNN_NPU_CORE_0_1 on the emulated RK3588).
 * OPENRKNN_MATMUL_REFERENCE=1 in the environment measures the scalar reference kernel instead of
 * the default (oneDNN) path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rknn_matmul_api.h"

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Returns GOPS, or a negative value on failure (after printing why). */
static double bench_one(rknn_matmul_type type, int M, int K, int N, rknn_core_mask mask, int loops) {
    rknn_matmul_info info;
    rknn_matmul_io_attr io;
    rknn_matmul_ctx ctx = 0;
    rknn_tensor_mem *a, *b, *c;
    double t0, best = 1e30;
    int i, ret;
    memset(&info, 0, sizeof(info));
    info.M = M;
    info.K = K;
    info.N = N;
    info.type = type;
    info.B_layout = RKNN_MM_LAYOUT_NORM;
    info.AC_layout = RKNN_MM_LAYOUT_NORM;
    ret = rknn_matmul_create(&ctx, &info, &io);
    if (ret != RKNN_SUCC) {
        fprintf(stderr, "rknn_matmul_create failed: %d\n", ret);
        return -1;
    }
    rknn_matmul_set_core_mask(ctx, mask);
    a = rknn_create_mem(ctx, io.A.size);
    b = rknn_create_mem(ctx, io.B.size);
    c = rknn_create_mem(ctx, io.C.size);
    if (!a || !b || !c) {
        fprintf(stderr, "rknn_create_mem failed\n");
        rknn_matmul_destroy(ctx);
        return -1;
    }
    /* Small values: 0x3c00 is 1.0 in fp16, int8 1. */
    if (type == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32) {
        for (i = 0; i < (int)(io.A.size / 2); i++) ((unsigned short*)a->virt_addr)[i] = 0x3000 + (i & 0xff);
        for (i = 0; i < (int)(io.B.size / 2); i++) ((unsigned short*)b->virt_addr)[i] = 0x2c00 + (i & 0xff);
    } else {
        for (i = 0; i < (int)io.A.size; i++) ((signed char*)a->virt_addr)[i] = (signed char)(i % 7 - 3);
        for (i = 0; i < (int)io.B.size; i++) ((signed char*)b->virt_addr)[i] = (signed char)(i % 5 - 2);
    }
    rknn_matmul_set_io_mem(ctx, a, &io.A);
    rknn_matmul_set_io_mem(ctx, b, &io.B);
    rknn_matmul_set_io_mem(ctx, c, &io.C);
    ret = rknn_matmul_run(ctx); /* warm-up */
    for (i = 0; i < loops && ret == RKNN_SUCC; i++) {
        double dt;
        t0 = now_sec();
        ret = rknn_matmul_run(ctx);
        dt = now_sec() - t0;
        if (dt < best) best = dt;
    }
    rknn_destroy_mem(ctx, a);
    rknn_destroy_mem(ctx, b);
    rknn_destroy_mem(ctx, c);
    rknn_matmul_destroy(ctx);
    if (ret != RKNN_SUCC) {
        fprintf(stderr, "rknn_matmul_run failed: %d\n", ret);
        return -1;
    }
    return 2.0 * M * K * N / best * 1e-9;
}

int main(int argc, char** argv) {
    int K = argc > 1 ? atoi(argv[1]) : 4096;
    int N = argc > 2 ? atoi(argv[2]) : 4096;
    int loops = argc > 3 ? atoi(argv[3]) : 5;
    const int Ms[4] = {1, 4, 16, 64};
    const char* ref = getenv("OPENRKNN_MATMUL_REFERENCE");
    const rknn_matmul_type types[2] = {RKNN_INT8_MM_INT8_TO_INT32, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32};
    const rknn_core_mask masks[2] = {RKNN_NPU_CORE_0, RKNN_NPU_CORE_0_1};
    int t, m, th;
    printf("kernel: %s, best of %d runs\n", ref && atoi(ref) ? "reference (OPENRKNN_MATMUL_REFERENCE=1)" : "default",
           loops);
    printf("%-36s %5s %6s %6s %8s %10s\n", "type", "M", "K", "N", "threads", "GOPS(best)");
    for (t = 0; t < 2; t++)
        for (m = 0; m < 4; m++)
            for (th = 0; th < 2; th++) {
                double g = bench_one(types[t], Ms[m], K, N, masks[th], loops);
                if (g < 0) return 1;
                printf("%-36s %5d %6d %6d %8d %10.2f\n", get_matmul_type_string(types[t]), Ms[m], K, N, th + 1, g);
            }
    return 0;
}
