"""Markdown table from the JSON lines that rknn_bench and ort_bench.py print.

Usage: python3 bench/bench_table.py RESULTS.jsonl [--precision fp16|fp32|int8]

One row per model and requested thread count T (ONNX Runtime's intra-op threads; our core mask with
T NPU cores, run_bench.sh). CPU/wall is the cores each runtime kept busy during the timed runs: it
shows where ours ran one thread under a two-core mask (models under 200 M MACs). In INT8 mode the
'ORT runs' column says whether ONNX Runtime ran a QDQ INT8 model (the preparation's, or our calibration
exported with rknn_convert --export-qdq) or the fp32 one. With several passes (run_bench.sh --repeat) a row shows the pass
with the lowest median per runtime (the least disturbed one on a shared machine), the median load time
over the passes and the largest peak RSS. The ratio is ours / ONNX Runtime: below 1 is faster. The last
column is ours / the published single-core RK3588 NPU latency of the vendor model zoo (SDK 2.3.2), for
the models and precisions that have one.
"""
import argparse
import json
import statistics

# Vendor model zoo, one RK3588 NPU core, ms: INT8 models, and PP-OCRv4 rec in fp16.
NPU_MS = {
    "int8": {"mobilenet_v2": 2.2, "resnet50": 9.1, "ppocrv4_det": 19.7},
    "fp16": {"ppocrv4_rec": 13.5},
}


def ms(x):
    if x is None:
        return "-"
    return f"{x:.{3 if x < 1 else 2 if x < 10 else 1}f}"


def summary(results):
    if not results:
        return {}
    best = min(results, key=lambda r: r["median_ms"])
    return {
        "median": best["median_ms"], "min": best["min_ms"], "max": best["max_ms"],
        "load": statistics.median(r["load_ms"] for r in results),
        "rss": max(r["rss_peak_mb"] for r in results),
        "rss_above": max(r["rss_peak_mb"] - r["rss_start_mb"] for r in results),
        "passes": len(results),
        "cpu": best.get("cpu_per_wall"),
        "onnx": best.get("onnx", ""),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("results")
    p.add_argument("--precision", default="fp16", choices=["fp16", "fp32", "int8"])
    args = p.parse_args()
    with open(args.results) as f:
        rows = [json.loads(line) for line in f if line.strip()]

    def key(r):
        return r.get("requested_threads", r["threads"])
    keys = list(dict.fromkeys((r["model"], key(r)) for r in rows))
    int8 = args.precision == "int8"
    print("| model | threads (ours: core mask) | " + ("ORT runs | " if int8 else "") +
          "ORT ms | ours ms | ours / ORT | CPU/wall ORT, ours | ORT load ms | ours load ms | "
          "ORT peak RSS MB (above start) | ours peak RSS MB (above start) | passes | ours / NPU |")
    print("|---|---|" + ("---|" if int8 else "") + "---|---|---|---|---|---|---|---|---|---|")
    masks = {1: "0", 2: "0_1", 3: "0_1_2"}
    for model, threads in keys:
        def pick(runtime):
            return summary([r for r in rows
                            if r["model"] == model and key(r) == threads and r["runtime"] == runtime])
        ort, ours = pick("onnxruntime"), pick("openrknn")
        ratio = f"{ours['median'] / ort['median']:.2f}" if ort and ours else "-"

        def cell(s):
            return f"**{ms(s['median'])}** ({ms(s['min'])}–{ms(s['max'])})" if s else "failed"

        def rss(s):
            return f"{s['rss']:.0f} ({s['rss_above']:.0f})" if s else "-"
        def cpu(s):
            return f"{s['cpu']:.1f}" if s and s.get("cpu") is not None else "-"
        npu_ref = NPU_MS.get(args.precision, {}).get(model)
        npu = f"{ours['median'] / npu_ref:.2f} (NPU {npu_ref})" if npu_ref and ours else "-"
        onnx = ort.get("onnx", "")
        ort_runs = ("INT8 (our QDQ export) | " if "export_qdq" in onnx else "INT8 (QDQ) | " if "_qdq" in onnx
                    else "fp32 | ") if int8 else ""
        print(f"| {model} | {threads} ({masks.get(threads, 'ALL')}) | {ort_runs}{cell(ort)} | {cell(ours)} | {ratio} | "
              f"{cpu(ort)}, {cpu(ours)} | {ms(ort.get('load'))} | "
              f"{ms(ours.get('load'))} | {rss(ort)} | {rss(ours)} | "
              f"{max(ort.get('passes', 0), ours.get('passes', 0))} | {npu} |")


if __name__ == "__main__":
    main()
