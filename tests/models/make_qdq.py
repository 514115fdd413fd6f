#!/usr/bin/python3
"""Hand-written static INT8 QDQ quantization (no onnxruntime python package needed).
(From the team's shared reference tools; scripts/prepare_test_models.sh runs it.)

Usage:
    .venv/bin/python make_qdq.py [MODELS_DIR] [--models resnet18,resnet50,mobilenet_v2] [--calib N] [--act uint8|int8]

    MODELS_DIR defaults to anchors-work/models; reads NAME.onnx (from export_torchvision.py), writes
    NAME_qdq.onnx. Needs Debian python3-onnx and python3-torch (torch is only used as the numeric engine of a
    tiny ONNX interpreter for calibration). Deterministic: same inputs -> byte-identical output.

Scheme (the layout ONNX Runtime's QDQ selectors fuse into QLinearConv / QLinearAdd / QLinearGlobalAveragePool
/ QGemm, i.e. MLAS int8 kernels; ORT 'all' optimization then also converts them to NHWC):
  * weights: per-output-channel symmetric int8 (range [-127, 127], zero point 0), stored as int8 initializers
    feeding DequantizeLinear(axis=0). Gemm weights: per-tensor symmetric int8.
  * biases: int32, scale = input_scale * weight_scale[c], zero point 0, DequantizeLinear(axis=0).
  * activations: per-tensor asymmetric uint8 (default; `--act int8` for signed), min/max calibrated on N seeded
    uniform [0,1) 1x3x224x224 images (the benchmark input distribution). Every activation tensor that feeds a
    Conv / Gemm / Add / MaxPool / GlobalAveragePool / Flatten gets one QuantizeLinear -> DequantizeLinear pair.
  * Relu / Clip(0,6) directly after a Conv or Add (single consumer) are removed and absorbed into the
    producer's output quantization: the calibrated range of the activation *output* (min 0) makes the uint8
    saturation implement the ReLU/ReLU6 clamp (what onnxruntime.quantization does with removable activations).
  * MaxPool / Flatten outputs reuse their input's scale/zero point (so ORT can run them directly on uint8).
  * Final Gemm output (logits) stays float.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper

SHAPE = (1, 3, 224, 224)


# --------------------------------------------------------------------------- tiny torch-backed ONNX interpreter
def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def sym_pads(pads):
    n = len(pads) // 2
    if list(pads[:n]) != list(pads[n:]):
        raise NotImplementedError("asymmetric pads")
    return list(pads[:n])


def run_graph(model, x, record=None):
    """Evaluate the float graph on x (torch tensor). record: dict name -> [min, max] updated in place."""
    env = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in model.graph.initializer}
    env[model.graph.input[0].name] = x
    for n in model.graph.node:
        a = attrs(n)
        ins = [env[i] if i else None for i in n.input]
        op = n.op_type
        if op == "Constant":
            y = torch.from_numpy(numpy_helper.to_array(a["value"]).copy())
        elif op == "Conv":
            y = F.conv2d(ins[0], ins[1], ins[2] if len(ins) > 2 else None, stride=a.get("strides", 1),
                         padding=sym_pads(a.get("pads", [0, 0, 0, 0])), dilation=a.get("dilations", 1),
                         groups=a.get("group", 1))
        elif op == "Relu":
            y = torch.relu(ins[0])
        elif op == "Clip":
            lo = ins[1].item() if len(ins) > 1 and ins[1] is not None else None
            hi = ins[2].item() if len(ins) > 2 and ins[2] is not None else None
            y = torch.clamp(ins[0], lo, hi)
        elif op == "Add":
            y = ins[0] + ins[1]
        elif op == "MaxPool":
            y = F.max_pool2d(ins[0], a["kernel_shape"], a.get("strides", 1), sym_pads(a.get("pads", [0, 0, 0, 0])),
                             ceil_mode=bool(a.get("ceil_mode", 0)))
        elif op == "GlobalAveragePool":
            y = ins[0].mean(dim=(2, 3), keepdim=True)
        elif op == "Flatten":
            y = torch.flatten(ins[0], a.get("axis", 1))
        elif op == "Gemm":
            A = ins[0].t() if a.get("transA", 0) else ins[0]
            B = ins[1].t() if a.get("transB", 0) else ins[1]
            y = a.get("alpha", 1.0) * (A @ B)
            if len(ins) > 2 and ins[2] is not None:
                y = y + a.get("beta", 1.0) * ins[2]
        else:
            raise NotImplementedError(f"interpreter: op {op} ({n.name})")
        env[n.output[0]] = y
        if record is not None and op != "Constant":
            lo, hi = float(y.min()), float(y.max())
            r = record.setdefault(n.output[0], [lo, hi])
            r[0], r[1] = min(r[0], lo), max(r[1], hi)
    if record is not None:
        r = record.setdefault(model.graph.input[0].name, [float(x.min()), float(x.max())])
        r[0], r[1] = min(r[0], float(x.min())), max(r[1], float(x.max()))
    return env[model.graph.output[0].name]


# --------------------------------------------------------------------------- quantization helpers
def act_params(lo, hi, signed):
    lo, hi = min(lo, 0.0), max(hi, 0.0)  # range must contain 0 exactly
    qmin, qmax = (-128, 127) if signed else (0, 255)
    scale = (hi - lo) / (qmax - qmin) if hi > lo else 1.0
    zp = int(round(qmin - lo / scale))
    zp = max(qmin, min(qmax, zp))
    return np.float32(scale), zp


def quantize_model(model, ranges, signed_act=False):
    g = model.graph
    consts = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    nodes = list(g.node)
    for n in nodes:
        if n.op_type == "Constant":
            consts[n.output[0]] = numpy_helper.to_array(attrs(n)["value"])

    def consumers(name):
        return [n for n in nodes if name in n.input]

    graph_outputs = {o.name for o in g.output}
    # 1) absorb Relu / Clip(0, x) that directly follow a Conv / Add into the producer's output quantization
    producer = {o: n for n in nodes for o in n.output}
    removed = set()
    for n in nodes:
        if n.op_type not in ("Relu", "Clip"):
            continue
        if n.op_type == "Clip":
            lo = consts.get(n.input[1]) if len(n.input) > 1 and n.input[1] else None
            if lo is None or float(lo) != 0.0:
                continue
        p = producer.get(n.input[0])
        if p is None or p.op_type not in ("Conv", "Add") or len(consumers(n.input[0])) != 1 \
                or n.input[0] in graph_outputs:
            continue
        p.output[0] = n.output[0]  # producer now writes the activation's output tensor directly
        producer[n.output[0]] = p
        removed.add(id(n))
    nodes = [n for n in nodes if id(n) not in removed]
    # drop Constant nodes that nobody uses any more (the Clip bounds)
    used = {i for n in nodes for i in n.input}
    nodes = [n for n in nodes if not (n.op_type == "Constant" and n.output[0] not in used)]

    new_inits, new_nodes = [], []
    qparams = {}  # activation tensor -> (scale, zp)
    dq_name = {}  # activation tensor -> dequantized tensor name

    def add_init(name, arr):
        new_inits.append(numpy_helper.from_array(arr, name))
        return name

    def qdq_activation(t, params=None):
        if t in dq_name:
            return dq_name[t]
        if params is None:  # MaxPool / Flatten outputs inherit their input's params
            params = qparams.get(t) or act_params(*ranges[t], signed_act)
        qparams[t] = params
        s, zp = params
        base = t.replace("/", "_").strip("_")
        sname = add_init(base + "_scale", np.array(s, dtype=np.float32))
        zname = add_init(base + "_zp", np.array(zp, dtype=np.int8 if signed_act else np.uint8))
        new_nodes.append(helper.make_node("QuantizeLinear", [t, sname, zname], [base + "_q"], name=base + "_Q"))
        new_nodes.append(helper.make_node("DequantizeLinear", [base + "_q", sname, zname], [base + "_dq"],
                                          name=base + "_DQ"))
        dq_name[t] = base + "_dq"
        return dq_name[t]

    def dq_weight(wname, x_scale, bname=None, per_channel=True):
        w = consts[wname].astype(np.float32)
        axes = tuple(range(1, w.ndim))
        amax = np.abs(w).max(axis=axes) if per_channel else np.array(np.abs(w).max())
        ws = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
        shaped = ws.reshape((-1,) + (1,) * (w.ndim - 1)) if per_channel else ws
        wq = np.clip(np.round(w / shaped), -127, 127).astype(np.int8)
        base = wname.replace("/", "_").replace(":", "_").strip("_")
        add_init(base + "_int8", wq)
        add_init(base + "_wscale", ws)
        add_init(base + "_wzp", np.zeros(ws.shape, dtype=np.int8))
        kw = {"axis": 0} if per_channel else {}
        new_nodes.append(helper.make_node("DequantizeLinear", [base + "_int8", base + "_wscale", base + "_wzp"],
                                          [base + "_wdq"], name=base + "_DQ", **kw))
        out = [base + "_wdq"]
        if bname:
            b = consts[bname].astype(np.float32)
            bs = (np.float32(x_scale) * ws).astype(np.float32)
            bs = np.broadcast_to(bs, b.shape).astype(np.float32) if per_channel else bs
            bq = np.round(b / bs).astype(np.int32)
            bb = bname.replace("/", "_").replace(":", "_").strip("_")
            add_init(bb + "_int32", bq)
            add_init(bb + "_bscale", bs)
            add_init(bb + "_bzp", np.zeros(bs.shape, dtype=np.int32))
            new_nodes.append(helper.make_node("DequantizeLinear", [bb + "_int32", bb + "_bscale", bb + "_bzp"],
                                              [bb + "_bdq"], name=bb + "_DQ", **kw))
            out.append(bb + "_bdq")
        return out

    for n in nodes:  # topological order is preserved
        op = n.op_type
        if op in ("Conv", "Gemm"):
            x = n.input[0]
            xd = qdq_activation(x)
            per_channel = op == "Conv"
            if op == "Gemm" and (attrs(n).get("transA", 0) or not attrs(n).get("transB", 0)):
                raise NotImplementedError("Gemm layout")
            wb = dq_weight(n.input[1], qparams[x][0], n.input[2] if len(n.input) > 2 and n.input[2] else None,
                           per_channel)
            n.input[0] = xd
            n.input[1] = wb[0]
            if len(wb) > 1:
                n.input[2] = wb[1]
        elif op == "Add":
            for i, t in enumerate(list(n.input)):
                if t not in consts:
                    n.input[i] = qdq_activation(t)
        elif op in ("MaxPool", "Flatten"):
            t = n.input[0]
            n.input[0] = qdq_activation(t)
            qparams[n.output[0]] = qparams[t]  # same params on the output -> ORT drops the Q/DQ around it
        elif op == "GlobalAveragePool":
            n.input[0] = qdq_activation(n.input[0])
        new_nodes.append(n)

    g.ClearField("node")
    g.node.extend(new_nodes)
    used = {i for n in new_nodes for i in n.input}
    keep = [i for i in g.initializer if i.name in used]
    g.ClearField("initializer")
    g.initializer.extend(keep + new_inits)
    return model


def main():
    args = sys.argv[1:]
    names, calib, signed = ["resnet18", "resnet50", "mobilenet_v2"], 16, False
    if "--models" in args:
        i = args.index("--models"); names = args[i + 1].split(","); del args[i:i + 2]
    if "--calib" in args:
        i = args.index("--calib"); calib = int(args[i + 1]); del args[i:i + 2]
    if "--act" in args:
        i = args.index("--act"); signed = args[i + 1] == "int8"; del args[i:i + 2]
    d = args[0] if args else "anchors-work/models"
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in names:
        model = onnx.load(os.path.join(d, name + ".onnx"))
        ref_x = os.path.join(d, name + ".in.f32")
        gen = torch.Generator().manual_seed(7)
        ranges = {}
        with torch.no_grad():
            for _ in range(calib):
                run_graph(model, torch.rand(SHAPE, generator=gen), ranges)
            if os.path.exists(ref_x):  # sanity: interpreter == PyTorch reference
                x = torch.from_numpy(np.fromfile(ref_x, dtype="<f4").reshape(SHAPE))
                y = run_graph(model, x).numpy().ravel()
                yref = np.fromfile(os.path.join(d, name + ".out.f32"), dtype="<f4")
                print(f"{name}: interpreter vs torch max|diff| {np.abs(y - yref).max():.2e}")
        qmodel = quantize_model(model, ranges, signed)
        onnx.checker.check_model(qmodel)
        out = os.path.join(d, name + "_qdq.onnx")
        onnx.save(qmodel, out)
        ops = {}
        for n in qmodel.graph.node:
            ops[n.op_type] = ops.get(n.op_type, 0) + 1
        print(f"{name}: wrote {out} ({os.path.getsize(out) / 1e6:.1f} MB), {calib} calibration images, "
              f"activations {'int8' if signed else 'uint8'}; ops {ops}")


if __name__ == "__main__":
    main()
