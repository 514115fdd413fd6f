"""rknn.api.RKNN: conversion (config/load_onnx/build/export_rknn), the in-process runtime,
eval_perf/eval_memory, and the error paths (../shared/docs/python-api-contract.md, sections 2-3)."""
import json
import os

import numpy as np
import onnx
import onnx.utils
import pytest

from conftest import (FP16_ATOL, MEAN, ROOT, STD, assert_fp16_close, assert_fp32_close, convert, cosine, error_lines,
                      make_add_model, make_chain_model, make_conv_model, make_matmul_model, normalise, ort_run,
                      random_image)
from openrknn import _capi as C
from openrknn.runtime import Context
from rknn.api import RKNN
from rknnlite.api import RKNNLite


def _lite_run(rknn_path_or_bytes, inputs, **kwargs):
    r = RKNNLite()
    assert r.load_rknn(rknn_path_or_bytes) == 0
    assert r.init_runtime() == 0
    out = r.inference(inputs, **kwargs)
    r.release()
    assert out is not None
    return out


# ---------------------------------------------------------------------------------------------
# conversion flow


@pytest.mark.parametrize("platform", ["rk3588", "RK3566", "rv1106"])
def test_convert_export_and_run_with_rknnlite(tmp_path, conv_onnx, platform):
    """config(mean, std, target_platform) -> load_onnx -> build(False) -> export_rknn ->
    RKNNLite: uint8 NHWC image, mean/std applied by the runtime."""
    r = RKNN()
    assert r.config(mean_values=[MEAN], std_values=[STD], target_platform=platform) == 0  # as rknn-toolkit2 2.5.0
    assert r.load_onnx(model=conv_onnx) == 0
    assert r.build(do_quantization=False) == 0
    out_path = tmp_path / "conv.rknn"
    assert r.export_rknn(str(out_path)) == 0
    r.release()
    assert out_path.stat().st_size > 0

    img = random_image(seed=20)
    got = _lite_run(str(out_path), [img])
    want = ort_run(conv_onnx, {"x": normalise(img)})[0]
    assert_fp16_close(got[0], want)
    # and the mean/std matter: the un-normalised image gives something else
    raw = ort_run(conv_onnx, {"x": img.astype(np.float32).transpose(0, 3, 1, 2)})[0]
    assert np.max(np.abs(got[0] - raw)) > 10 * FP16_ATOL


def test_convert_float32_exact(tmp_path, conv_onnx):
    """float_dtype='float32': fp32 everywhere, so rtol 1e-4 / atol 1e-5 against ONNX Runtime."""
    data = convert(conv_onnx, tmp_path / "c32.rknn", mean_values=[MEAN], std_values=[STD], float_dtype="float32")
    img = random_image(seed=21)
    got = _lite_run(data, [img])[0]
    assert_fp32_close(got, ort_run(conv_onnx, {"x": normalise(img)})[0])


def test_fp16_default_rounds_outputs(tmp_path, conv_onnx):
    """The default float_dtype stores floats as fp16: every output value is an fp16 value, which
    fp32 conversion does not give (so the two settings are really different)."""
    img = random_image(seed=22)
    got16 = _lite_run(convert(conv_onnx, tmp_path / "a.rknn", mean_values=[MEAN], std_values=[STD]), [img])[0]
    got32 = _lite_run(convert(conv_onnx, tmp_path / "b.rknn", mean_values=[MEAN], std_values=[STD],
                              float_dtype="float32"), [img])[0]
    assert np.array_equal(got16, got16.astype(np.float16).astype(np.float32))
    assert not np.array_equal(got32, got32.astype(np.float16).astype(np.float32))


def test_rknn_simulator_runs_built_model(conv_onnx):
    """evaluation flow: the same RKNN object runs what it built (init_runtime() without a target)."""
    r = RKNN()
    r.config(mean_values=[MEAN], std_values=[STD], target_platform="rk3588", float_dtype="float32")
    assert r.load_onnx(conv_onnx) == 0
    assert r.build(do_quantization=False) == 0
    assert r.init_runtime() == 0
    img = random_image(seed=23)
    out = r.inference(inputs=[img])
    assert isinstance(out, list) and out[0].dtype == np.float32
    assert_fp32_close(out[0], ort_run(conv_onnx, {"x": normalise(img)})[0])
    # get_frame_id, data_format and pass-through as in RKNNLite
    with_id = r.inference([img], get_frame_id=True)
    assert isinstance(with_id[-1], int) and np.array_equal(with_id[0], out[0])
    nchw = np.ascontiguousarray(img.transpose(0, 3, 1, 2))
    assert np.array_equal(r.inference([nchw], data_format="nchw")[0], out[0])
    assert np.array_equal(r.inference([nchw], data_format=["nchw"])[0], out[0])
    r.release()


def test_rknn_load_rknn_then_init_runtime(conv_rknn, conv_onnx):
    """The model zoo's flow: RKNN() -> load_rknn -> init_runtime() -> inference runs on this CPU."""
    r = RKNN()
    assert r.load_rknn(conv_rknn) == 0
    assert r.init_runtime() == 0
    img = random_image(seed=24)
    out = r.inference([img], data_format="nhwc")
    r.release()
    assert_fp16_close(out[0], ort_run(conv_onnx, {"x": normalise(img)})[0])


def test_rknn_pass_through_takes_native_data(tmp_path, conv_onnx):
    data = convert(conv_onnx, tmp_path / "pt.rknn", mean_values=[MEAN], std_values=[STD])
    r = RKNN()
    assert r.load_rknn(data) == 0 and r.init_runtime() == 0
    x = np.random.default_rng(25).standard_normal((1, 3, 8, 8)).astype(np.float32)
    native = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).astype(np.float16)
    # the native input (FLOAT16 NHWC) as raw bytes: the array's dtype does not matter with pass-through
    out = r.inference([native.view(np.uint16)], inputs_pass_through=[1])
    r.release()
    assert_fp16_close(out[0], ort_run(conv_onnx, {"x": x})[0])


def test_export_rknn_after_load_rknn_roundtrip(tmp_path, conv_rknn):
    r = RKNN()
    assert r.load_rknn(conv_rknn) == 0
    assert r.export_rknn(str(tmp_path / "copy.rknn")) == 0
    r.release()
    with open(conv_rknn, "rb") as a, open(tmp_path / "copy.rknn", "rb") as b:
        assert a.read() == b.read()


def test_two_input_add(tmp_path):
    onnx_path = make_add_model(tmp_path / "add.onnx")
    data = convert(onnx_path, tmp_path / "add.rknn", float_dtype="float32")
    rng = np.random.default_rng(26)
    a = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    b = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    want = a + b
    nhwc = lambda t: np.ascontiguousarray(t.transpose(0, 2, 3, 1))  # noqa: E731
    assert_fp32_close(_lite_run(data, [nhwc(a), nhwc(b)])[0], want)
    assert_fp32_close(_lite_run(data, [a, b], data_format="nchw")[0], want)
    assert_fp32_close(_lite_run(data, [a, nhwc(b)], data_format=["nchw", "nhwc"])[0], want)
    assert_fp32_close(_lite_run(data, [nhwc(a), b], data_format=["nhwc", "nchw"])[0], want)
    # and ONNX Runtime agrees with numpy
    assert_fp32_close(ort_run(onnx_path, {"a": a, "b": b})[0], want)


def test_two_input_add_wrong_count(tmp_path, capfd):
    data = convert(make_add_model(tmp_path / "add.onnx"), tmp_path / "add.rknn")
    r = RKNNLite()
    assert r.load_rknn(data) == 0 and r.init_runtime() == 0
    assert r.inference([np.zeros((1, 4, 4, 3), np.float32)]) is None
    assert any("2 input" in line for line in error_lines(capfd.readouterr().err))
    r.release()


def test_2d_matmul_input(tmp_path):
    onnx_path, w = make_matmul_model(tmp_path / "mm.onnx")
    data = convert(onnx_path, tmp_path / "mm.rknn", float_dtype="float32")
    x = np.random.default_rng(27).standard_normal((2, 6)).astype(np.float32)
    want = x @ w
    got = _lite_run(data, [x])[0]
    assert_fp32_close(got, want)
    # data_format does not transpose inputs that are not 4-D
    assert_fp32_close(_lite_run(data, [x], data_format="nchw")[0], want)
    assert_fp32_close(_lite_run(data, [x], data_format="nhwc")[0], want)
    # fp16 storage
    got16 = _lite_run(convert(onnx_path, tmp_path / "mm16.rknn"), [x])[0]
    assert_fp16_close(got16, want, atol=2e-2)


def test_2d_matmul_wrong_size(tmp_path, capfd):
    onnx_path, _ = make_matmul_model(tmp_path / "mm.onnx")
    data = convert(onnx_path, tmp_path / "mm.rknn")
    r = RKNNLite()
    assert r.load_rknn(data) == 0 and r.init_runtime() == 0
    assert r.inference([np.zeros((2, 7), np.float32)]) is None
    assert error_lines(capfd.readouterr().err)
    r.release()


def test_custom_string_is_stored(tmp_path, conv_onnx):
    data = convert(conv_onnx, tmp_path / "cs.rknn", custom_string="hello openrknn")
    ctx = Context(data)
    try:
        assert ctx.custom_string() == "hello openrknn"
    finally:
        ctx.destroy()


def test_no_effect_keywords_accepted_with_one_warning(capfd, conv_onnx, tmp_path):
    r = RKNN()
    r.config(optimization_level=2, quant_img_RGB2BGR=True, single_core_mode=True, target_platform="rk3588")
    r.config(optimization_level=2)
    err = capfd.readouterr().err
    warn = [line for line in err.splitlines() if line.startswith("W ")]
    assert sum("optimization_level" in line for line in warn) == 1
    assert any("quant_img_RGB2BGR" in line for line in warn)
    assert not error_lines(err)
    # and the conversion still works
    assert r.load_onnx(conv_onnx) == 0 and r.build(do_quantization=False) == 0
    r.release()


# ---------------------------------------------------------------------------------------------
# INT8


def _write_dataset(directory, shape, n=4, seed=30, relative=True):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        p = directory / f"sample_{i}.npy"
        np.save(p, rng.standard_normal(shape).astype(np.float32))
        lines.append(p.name if relative else str(p))
    ds = directory / "dataset.txt"
    ds.write_text("# calibration samples\n" + "\n".join(lines) + "\n")
    return str(ds)


@pytest.mark.parametrize("layout", ["nchw", "nhwc-no-batch"])
def test_int8_build_with_npy_dataset(tmp_path, layout):
    onnx_path = make_conv_model(tmp_path / "conv8.onnx", cin=3, cout=8, hw=8, seed=31)
    shape = (1, 3, 8, 8) if layout == "nchw" else (8, 8, 3)
    dataset = _write_dataset(tmp_path, shape)
    data = convert(onnx_path, tmp_path / "conv8.rknn", do_quantization=True, dataset=dataset)
    # the model is INT8: its input and output are reported INT8 by rknn_query
    ctx = Context(data)
    try:
        assert ctx.inputs[0].type == C.RKNN_TENSOR_INT8
        assert ctx.outputs[0].type == C.RKNN_TENSOR_INT8
    finally:
        ctx.destroy()
    x = np.random.default_rng(32).standard_normal((1, 3, 8, 8)).astype(np.float32)
    out = _lite_run(data, [x], data_format="nchw")
    assert out[0].dtype == np.float32  # float32 even for INT8 models
    want = ort_run(onnx_path, {"x": x})[0]
    assert cosine(out[0], want) > 0.98


def test_accuracy_analysis_writes_the_vendor_table_and_our_json(tmp_path, capfd):
    onnx_path = make_conv_model(tmp_path / "conv8.onnx", cin=3, cout=8, hw=8, seed=33)
    dataset = _write_dataset(tmp_path, (1, 3, 8, 8))
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(onnx_path) == 0
    assert r.accuracy_analysis(inputs=[str(tmp_path / "sample_0.npy")]) == -1  # nothing built yet
    assert any(line.startswith("E accuracy_analysis") for line in error_lines(capfd.readouterr().err))
    assert r.build(do_quantization=True, dataset=dataset) == 0
    snap = tmp_path / "snapshot"
    assert r.accuracy_analysis(inputs=[str(tmp_path / "sample_0.npy")], output_dir=str(snap)) == 0
    report = json.loads((snap / "accuracy.json").read_text())
    out_name = onnx.load(onnx_path).graph.output[0].name
    rows = {row["tensor"]: row for row in report["rows"]}
    assert "x" in rows and out_name in rows
    # The "entire" row of the output is the INT8 model's output against float on that sample:
    # the same comparison made here with the runtime and ONNX Runtime.
    x = np.load(tmp_path / "sample_0.npy")
    assert r.init_runtime() == 0
    got = r.inference([x], data_format="nchw")[0]
    want = ort_run(onnx_path, {"x": x})[0]
    entire = rows[out_name]["entire"]
    assert 0.98 < entire["cosine"] < 1.0
    assert abs(entire["cosine"] - cosine(got, want)) < 1e-4
    assert abs(entire["euclidean"] - float(np.linalg.norm(got.astype(np.float64) - want))) < 1e-3 * (
        1 + float(np.linalg.norm(want)))
    text = (snap / "error_analysis.txt").read_text()
    assert "entire" in text and "single" in text and "euc" in text
    assert any(line.startswith("[") and out_name in line for line in text.splitlines())
    # one file per model input; a board target is refused
    assert r.accuracy_analysis(inputs=[str(tmp_path / "sample_0.npy")] * 2, output_dir=str(snap)) == -1
    assert "2 input files given, the model has 1 input" in capfd.readouterr().err
    assert r.accuracy_analysis(inputs=[str(tmp_path / "sample_0.npy")], target="rk3588") == -1
    assert error_lines(capfd.readouterr().err)
    r.release()


def _conv_sigmoid_model(path, seed=35):
    """x [1,3,8,8] -> Conv 'conv' (8 channels) -> Sigmoid 's' -> y: the converter fuses the
    activation into the Conv and splits it again for INT8 (node 'conv_Sigmoid'; an int8 Conv applies
    only Relu, Clip, LeakyRelu, HardSwish and HardSigmoid itself)."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array((rng.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32), "W")
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["y"], name="s")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, str(path))
    return str(path)


def test_hybrid_quantization_steps(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)  # the step-1 files go to the current directory, as the vendor's do
    onnx_path = _conv_sigmoid_model(tmp_path / "m.onnx")
    dataset = _write_dataset(tmp_path, (1, 3, 8, 8))
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.hybrid_quantization_step1(dataset=dataset) == -1  # no model loaded
    assert r.load_onnx(onnx_path) == 0
    assert r.hybrid_quantization_step1() == -1  # no data set
    assert len(error_lines(capfd.readouterr().err)) == 2
    assert r.hybrid_quantization_step1(dataset=dataset) == 0
    cfg = (tmp_path / "m.quantization.cfg").read_text()
    assert "custom_quantize_layers: {}" in cfg  # no proposal asked
    assert "#   'conv_Sigmoid': Sigmoid" in cfg and "#   'conv'\n" in cfg
    assert (tmp_path / "m.model").is_file() and (tmp_path / "m.data").stat().st_size > 0
    r.release()

    # the user keeps the split activation in float
    (tmp_path / "m.quantization.cfg").write_text(cfg.replace("custom_quantize_layers: {}",
                                                             "custom_quantize_layers:\n    'conv_Sigmoid': float16"))
    h = RKNN()
    assert h.hybrid_quantization_step2("m.model", "m.data", "m.quantization.cfg") == 0
    assert h.export_rknn(str(tmp_path / "h.rknn")) == 0
    assert h.accuracy_analysis(inputs=[str(tmp_path / "sample_0.npy")], output_dir=str(tmp_path / "snap")) == 0
    rows = {row["node"]: row for row in json.loads((tmp_path / "snap" / "accuracy.json").read_text())["rows"]}
    assert rows["conv_Sigmoid"]["precision"] == "float"
    with open(tmp_path / "h.rknn", "rb") as f:
        ctx = Context(f.read())
    try:  # the Conv stays int8 (its input is), the activation after it gives a float output
        assert ctx.inputs[0].type == C.RKNN_TENSOR_INT8
        assert ctx.outputs[0].type in (C.RKNN_TENSOR_FLOAT16, C.RKNN_TENSOR_FLOAT32)
    finally:
        ctx.destroy()
    assert h.init_runtime() == 0
    x = np.load(tmp_path / "sample_1.npy")
    assert cosine(h.inference([x], data_format="nchw")[0], ort_run(onnx_path, {"x": x})[0]) > 0.99
    h.release()

    # a layer name the model lacks, a dtype that is not float, missing files: -1 and one E line each
    capfd.readouterr()
    for text in ("custom_quantize_layers:\n    'nope': float16\n", "custom_quantize_layers:\n    'conv': int8\n"):
        (tmp_path / "bad.cfg").write_text(text)
        assert RKNN().hybrid_quantization_step2("m.model", "m.data", "bad.cfg") == -1
    assert RKNN().hybrid_quantization_step2("missing.model", "m.data", "m.quantization.cfg") == -1
    err = error_lines(capfd.readouterr().err)
    assert len(err) == 3 and all(e.startswith("E hybrid_quantization_step2") for e in err), err
    assert "'nope'" in err[0]


def test_hybrid_quantization_proposal_lists_layers_step2_accepts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    onnx_path = _conv_sigmoid_model(tmp_path / "m.onnx", seed=36)
    dataset = _write_dataset(tmp_path, (1, 3, 8, 8))
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(onnx_path) == 0
    assert r.hybrid_quantization_step1(dataset=dataset, proposal=True) == 0
    cfg = (tmp_path / "m.quantization.cfg").read_text()
    block = cfg.split("custom_quantize_layers:", 1)[1].split("# the model's int8 layers", 1)[0]
    proposed = [line.strip() for line in block.splitlines() if line.strip().endswith(": float16")]
    assert proposed, cfg
    h = RKNN()
    assert h.hybrid_quantization_step2("m.model", "m.data", "m.quantization.cfg") == 0


def test_int8_with_mean_std_uint8_image(tmp_path):
    onnx_path = make_conv_model(tmp_path / "conv8.onnx", cin=3, cout=8, hw=8, seed=33)
    rng = np.random.default_rng(34)
    lines = []
    for i in range(4):  # uint8 NHWC .npy samples are normalised with mean/std like images
        p = tmp_path / f"img_{i}.npy"
        np.save(p, rng.integers(0, 256, (1, 8, 8, 3), dtype=np.uint8))
        lines.append(str(p))
    ds = tmp_path / "ds.txt"
    ds.write_text("\n".join(lines) + "\n")
    data = convert(onnx_path, tmp_path / "q.rknn", do_quantization=True, dataset=str(ds),
                   mean_values=[MEAN], std_values=[STD])
    img = random_image(seed=35)
    out = _lite_run(data, [img])[0]
    assert cosine(out, ort_run(onnx_path, {"x": normalise(img)})[0]) > 0.98


def test_int8_without_dataset_fails(conv_onnx, capfd):
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(conv_onnx) == 0
    assert r.build(do_quantization=True) == -1
    assert error_lines(capfd.readouterr().err)
    r.release()


def test_int8_dataset_missing_file(conv_onnx, tmp_path, capfd):
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(conv_onnx) == 0
    assert r.build(do_quantization=True, dataset=str(tmp_path / "nope.txt")) == -1
    assert any("nope.txt" in line for line in error_lines(capfd.readouterr().err))
    r.release()


def test_int8_dataset_names_missing_sample(conv_onnx, tmp_path, capfd):
    ds = tmp_path / "ds.txt"
    ds.write_text("missing_sample.npy\n")
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(conv_onnx) == 0
    assert r.build(do_quantization=True, dataset=str(ds)) == -1
    assert any("missing_sample.npy" in line for line in error_lines(capfd.readouterr().err))
    r.release()


# ---------------------------------------------------------------------------------------------
# subgraph cuts


@pytest.fixture
def chain(tmp_path):
    return make_chain_model(tmp_path / "chain.onnx")


def _extract(src, tmp_path, inputs, outputs):
    dst = str(tmp_path / "part.onnx")
    # extract_model needs the shapes of the cut tensors: it runs shape inference on its own
    onnx.utils.extract_model(src, dst, inputs, outputs)
    return dst


def _build_cut(onnx_path, **load_kwargs):
    r = RKNN()
    r.config(target_platform="rk3588", float_dtype="float32")
    assert r.load_onnx(onnx_path, **load_kwargs) == 0
    assert r.build(do_quantization=False) == 0
    assert r.init_runtime() == 0
    return r


def test_cut_inputs_and_outputs_at_intermediate(chain, tmp_path):
    r = _build_cut(chain, inputs=["r1"], outputs=["c2"], input_size_list=[[1, 4, 8, 8]])
    part = _extract(chain, tmp_path, ["r1"], ["c2"])
    a = np.abs(np.random.default_rng(40).standard_normal((1, 4, 8, 8))).astype(np.float32)
    out = r.inference([a], data_format="nchw")
    r.release()
    assert len(out) == 1
    assert_fp32_close(out[0], ort_run(part, {"r1": a})[0])


def test_cut_uses_stored_shapes(tmp_path):
    """With value_info for the cut tensor, input_size_list is not needed."""
    src = make_chain_model(tmp_path / "chain_vi.onnx", with_value_info=True)
    r = _build_cut(src, inputs=["p1"], outputs=["c2"])
    part = _extract(src, tmp_path, ["p1"], ["c2"])
    a = np.random.default_rng(41).standard_normal((1, 4, 4, 4)).astype(np.float32)
    out = r.inference([np.ascontiguousarray(a.transpose(0, 2, 3, 1))])  # NHWC by default
    r.release()
    assert_fp32_close(out[0], ort_run(part, {"p1": a})[0])


def test_cut_outputs_only_two_outputs(chain, tmp_path):
    r = _build_cut(chain, outputs=["r1", "y"])
    part = _extract(chain, tmp_path, ["x"], ["r1", "y"])
    x = np.random.default_rng(42).standard_normal((1, 3, 8, 8)).astype(np.float32)
    out = r.inference([x], data_format="nchw")
    r.release()
    want = ort_run(part, {"x": x})
    assert len(out) == 2
    assert_fp32_close(out[0], want[0])
    assert_fp32_close(out[1], want[1])


@pytest.mark.parametrize("where", ["inputs", "outputs"])
def test_cut_at_unknown_tensor_fails_with_name(chain, capfd, where):
    r = RKNN()
    r.config(target_platform="rk3588")
    kwargs = {"inputs": ["no_such_tensor"], "outputs": ["y"], "input_size_list": [[1, 3, 8, 8]]} \
        if where == "inputs" else {"outputs": ["no_such_tensor"]}
    assert r.load_onnx(chain, **kwargs) == 0  # names are checked by build
    assert r.build(do_quantization=False) == -1
    err = error_lines(capfd.readouterr().err)
    assert any("no_such_tensor" in line for line in err), err
    assert r.export_rknn("/nonexistent-dir/x.rknn") == -1  # nothing was built
    r.release()


# ---------------------------------------------------------------------------------------------
# eval_perf, eval_memory, versions


@pytest.mark.parametrize("perf_debug", [False, True])
def test_eval_perf_lists_layers(chain, capfd, perf_debug):
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(chain) == 0 and r.build(do_quantization=False) == 0
    assert r.init_runtime(perf_debug=perf_debug) == 0
    assert r.inference([random_image(seed=50)]) is not None
    text = r.eval_perf(is_print=False)
    r.release()
    assert isinstance(text, str)
    assert "Conv" in text and "MaxPool" in text
    assert capfd.readouterr().out == ""  # is_print=False prints nothing


def test_eval_perf_prints_and_works_without_inference(chain, capfd):
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(chain) == 0 and r.build(do_quantization=False) == 0 and r.init_runtime() == 0
    text = r.eval_perf()
    r.release()
    assert "MaxPool" in text
    assert "MaxPool" in capfd.readouterr().out


def test_eval_memory(conv_onnx, capfd):
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(conv_onnx) == 0 and r.build(do_quantization=False) == 0 and r.init_runtime() == 0
    mem = r.eval_memory(is_print=False)
    r.release()
    assert set(mem) == {"weight_memory", "internal_memory", "other_memory", "total_memory"}
    assert all(isinstance(v, int) and v >= 0 for v in mem.values())
    assert mem["total_memory"] >= mem["weight_memory"]
    assert mem["weight_memory"] >= 4 * 3 * 3 * 3 * 2  # the conv's weights in fp16 at least
    assert mem["total_memory"] >= mem["weight_memory"] + mem["internal_memory"]


@pytest.mark.parametrize("method", ["eval_perf", "eval_memory", "get_sdk_version"])
def test_runtime_queries_before_init(conv_onnx, capfd, method):
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(conv_onnx) == 0 and r.build(do_quantization=False) == 0
    assert getattr(r, method)() is None
    assert error_lines(capfd.readouterr().err)
    r.release()


def test_sdk_version_and_devices(conv_rknn):
    r = RKNN()
    assert r.load_rknn(conv_rknn) == 0 and r.init_runtime() == 0
    v = r.get_sdk_version()
    r.release()
    assert isinstance(v, str) and v.strip()
    assert RKNN().list_devices() == ([], [])


# ---------------------------------------------------------------------------------------------
# error paths


def test_build_before_load_onnx(capfd):
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.build(do_quantization=False) == -1
    err = error_lines(capfd.readouterr().err)
    assert err and "load_onnx" in err[0]


def test_load_onnx_missing_file(tmp_path, capfd):
    r = RKNN()
    assert r.load_onnx(str(tmp_path / "missing.onnx")) == -1
    err = error_lines(capfd.readouterr().err)
    assert err and "missing.onnx" in err[0]
    assert r.build(do_quantization=False) == -1  # nothing loaded


def test_load_onnx_not_onnx(tmp_path, capfd):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00\x01 this is not a protobuf" * 10)
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(str(bad)) == 0  # the converter reads it at build()
    assert r.build(do_quantization=False) == -1
    assert error_lines(capfd.readouterr().err)


@pytest.mark.parametrize("kwargs", [dict(input_size_list=[[1, 3, 0, 8]]), dict(input_size_list=[1, 3, 8, 8]),
                                    dict(inputs="x"), dict(outputs=[1]),
                                    dict(input_initial_val=[np.zeros((1, 3, 8, 8), np.float32)])])
def test_load_onnx_bad_arguments(conv_onnx, capfd, kwargs):
    assert RKNN().load_onnx(conv_onnx, **kwargs) == -1
    assert error_lines(capfd.readouterr().err)


def test_unknown_config_keyword_raises_typeerror():
    r = RKNN()
    with pytest.raises(TypeError, match="no_such_option"):
        r.config(no_such_option=1)
    r.config(mean_values=[MEAN])  # known keywords are fine


def test_unknown_target_platform(conv_onnx, capfd):
    r = RKNN()
    r.config(target_platform="rk9999")
    assert r.load_onnx(conv_onnx) == 0
    assert r.build(do_quantization=False) == -1
    err = error_lines(capfd.readouterr().err)
    assert any("rk9999" in line for line in err), err


def test_init_runtime_board_target(conv_rknn, capfd):
    r = RKNN()
    assert r.load_rknn(conv_rknn) == 0
    assert r.init_runtime(target="rk3588", device_id="515e9b401c060c0b") == -1
    err = error_lines(capfd.readouterr().err)
    assert err and "CPU" in err[0]
    assert r.init_runtime() == 0
    r.release()


def test_init_runtime_without_model(capfd):
    assert RKNN().init_runtime() == -1
    assert error_lines(capfd.readouterr().err)


def test_inference_before_init_runtime(conv_rknn, capfd):
    r = RKNN()
    assert r.load_rknn(conv_rknn) == 0
    assert r.inference([random_image()]) is None
    assert error_lines(capfd.readouterr().err)


def test_export_rknn_without_model(tmp_path, capfd):
    r = RKNN()
    path = tmp_path / "x.rknn"
    assert r.export_rknn(str(path)) == -1
    assert error_lines(capfd.readouterr().err)
    assert not path.exists()


def test_export_rknn_unwritable_path(conv_rknn, tmp_path, capfd):
    r = RKNN()
    assert r.load_rknn(conv_rknn) == 0
    assert r.export_rknn(str(tmp_path / "no" / "such" / "dir" / "x.rknn")) == -1
    assert error_lines(capfd.readouterr().err)


def test_export_encrypted_rknn_model(conv_rknn, tmp_path, capfd):
    r = RKNN()
    out = tmp_path / "enc.rknn"
    assert r.export_encrypted_rknn_model(conv_rknn, str(out)) == -1
    assert error_lines(capfd.readouterr().err)
    assert not out.exists()


@pytest.mark.parametrize("call", [
    pytest.param(lambda r, d: r.reg_custom_op(object()), id="reg_custom_op"),
    pytest.param(lambda r, d: r.load_tflite(os.path.join(d, "m.tflite")), id="load_tflite"),
    pytest.param(lambda r, d: r.load_tensorflow(os.path.join(d, "m.pb")), id="load_tensorflow"),
    pytest.param(lambda r, d: r.load_caffe(os.path.join(d, "m.prototxt")), id="load_caffe"),
    pytest.param(lambda r, d: r.load_darknet(os.path.join(d, "m.cfg"), os.path.join(d, "m.weights")),
                 id="load_darknet"),
])
def test_not_implemented_members(call, tmp_path, capfd, request):
    r = RKNN()
    assert call(r, str(tmp_path)) == -1
    err = error_lines(capfd.readouterr().err)
    name = request.node.callspec.id
    assert err and err[0].startswith(f"E {name}"), err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_load_pytorch_missing_file(tmp_path, capfd):
    r = RKNN()
    assert r.load_pytorch(str(tmp_path / "missing.pt"), [[1, 3, 8, 8]]) == -1
    err = error_lines(capfd.readouterr().err)
    assert err and err[0].startswith("E load_pytorch")
    assert r.build(do_quantization=False) == -1  # nothing loaded


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch.onnx's notes on TorchScript inputs
def test_load_pytorch_torchscript(tmp_path):
    """A TorchScript file (torch.jit.save) with input_size_list: the outputs equal torch's own."""
    import torch
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(4, 2, 1)).eval()
    pt = tmp_path / "net.pt"
    torch.jit.save(torch.jit.trace(net, torch.zeros(1, 3, 8, 8)), str(pt))
    x = np.random.default_rng(70).standard_normal((1, 3, 8, 8)).astype(np.float32)
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    r = RKNN()
    r.config(target_platform="rk3588", float_dtype="float32")
    assert r.load_pytorch(str(pt), input_size_list=[[1, 3, 8, 8]]) == 0
    assert r.build(do_quantization=False) == 0
    assert r.init_runtime() == 0
    out = r.inference([x], data_format="nchw")
    r.release()
    assert_fp32_close(out[0], want)


@pytest.mark.parametrize("kwargs, message", [(dict(rknn_batch_size="4"), "rknn_batch_size must be a positive integer"),
                                             (dict(auto_hybrid=True), "applies to models calibrated on a data set")])
def test_build_options_refused(conv_onnx, capfd, kwargs, message):
    r = RKNN()
    r.config(target_platform="rk3588")
    assert r.load_onnx(conv_onnx) == 0
    assert r.build(do_quantization=False, **kwargs) == -1
    err = error_lines(capfd.readouterr().err)
    assert len(err) == 1 and message in err[0], err


def test_release_twice(conv_rknn):
    r = RKNN()
    assert r.load_rknn(conv_rknn) == 0 and r.init_runtime() == 0
    r.release()
    r.release()
    assert r.inference([random_image()]) is None


# ---------------------------------------------------------------------------------------------
# a real model


def test_ppocr_cls_real_model(tmp_path):
    """PP-OCR's direction classifier (tests/models/work, scripts/prepare_test_models.sh): dynamic
    batch pinned with input_size_list, mean/std 127.5, fp16; uint8 NHWC image via RKNNLite."""
    models = os.environ.get("ORKNN_MODELS_DIR", os.path.join(ROOT, "tests", "models", "work"))
    onnx_path = os.path.join(models, "ppocr_cls.onnx")
    assert os.path.isfile(onnx_path), f"{onnx_path} is missing: run scripts/prepare_test_models.sh"
    mean, std = [127.5] * 3, [127.5] * 3
    data = convert(onnx_path, tmp_path / "cls.rknn", mean_values=[mean], std_values=[std],
                   load_kwargs=dict(input_size_list=[[1, 3, 48, 192]]))
    rng = np.random.default_rng(60)
    # a smooth image (gradients plus noise), closer to real input than white noise
    yy, xx = np.mgrid[0:48, 0:192]
    base = np.stack([(xx * 1.3) % 256, (yy * 5.0) % 256, ((xx + yy) * 0.9) % 256], axis=-1)
    img = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)[None]
    r = RKNNLite()
    assert r.load_rknn(data) == 0 and r.init_runtime(core_mask=RKNNLite.NPU_CORE_0_1_2) == 0
    out = r.inference([img])
    r.release()
    want = ort_run(onnx_path, {"x": normalise(img, mean, std)})[0]
    assert out[0].shape == want.shape == (1, 2)
    assert_fp16_close(out[0], want)


def test_codegen_project_builds_and_matches_python(conv_rknn, tmp_path, capfd):
    """The C project codegen writes builds with CMake against the package's headers and library, and
    its client (examples/rknn_demo.c) prints the same outputs as RKNNLite on the same picture."""
    import re
    import shutil
    import subprocess
    r = RKNN()
    assert r.codegen(str(tmp_path / "none")) == -1  # no model yet
    assert r.load_rknn(conv_rknn) == 0
    img = random_image(shape=(8, 8, 3), seed=41)
    np.save(tmp_path / "img.npy", img)
    out = tmp_path / "app"
    assert r.codegen(str(out), inputs=[str(tmp_path / "img.npy")]) == 0
    assert sorted(os.listdir(out)) == ["CMakeLists.txt", "input.ppm", "model.rknn", "rknn_demo.c"]
    assert r.codegen(str(out)) == -1  # not empty, no overwrite
    assert r.codegen(str(out), inputs=[str(tmp_path / "nope.png")], overwrite=True) == -1
    assert len(error_lines(capfd.readouterr().err)) == 3
    cmake = shutil.which("cmake")
    assert cmake, "cmake is needed to build the generated project"
    subprocess.run([cmake, "-S", str(out), "-B", str(out / "build")], check=True, capture_output=True)
    subprocess.run([cmake, "--build", str(out / "build")], check=True, capture_output=True)
    text = subprocess.run([str(out / "build" / "rknn_app"), str(out / "model.rknn"), str(out / "input.ppm")],
                          check=True, capture_output=True, text=True).stdout
    top = re.search(r"output 0 \((\d+) values\) top-5:(.*)", text)
    assert top, text
    printed = [(int(i), float(v)) for i, v in re.findall(r"\[(\d+)\] ([-\d.]+)", top.group(2))]
    lite = RKNNLite()
    assert lite.load_rknn(conv_rknn) == 0 and lite.init_runtime() == 0
    want = lite.inference([img])[0].reshape(-1)
    lite.release()
    assert int(top.group(1)) == want.size and len(printed) == 5
    for i, v in printed:
        assert abs(want[i] - v) <= 6e-5, (i, v, want[i])
    assert printed[0][1] == pytest.approx(float(want.max()), abs=6e-5)


def test_dynamic_shape_model_switches_sets_by_input_shape(tmp_path, capfd):
    """A model built with config(dynamic_input=...) takes each listed shape; inference picks the
    set from the inputs' shapes (rknn_set_input_shapes), in any order, and refuses others."""
    onnx_path = make_conv_model(tmp_path / "dyn.onnx", seed=51)
    model = onnx.load(onnx_path)
    for vi in (model.graph.input[0], model.graph.output[0]):
        for d in (2, 3):
            vi.type.tensor_type.shape.dim[d].dim_param = "hw"
    onnx.save(model, onnx_path)
    r = RKNN()
    r.config(target_platform="rk3588", float_dtype="float32", dynamic_input=[[[1, 3, 8, 8]], [[1, 3, 16, 16]]])
    assert r.load_onnx(onnx_path) == 0 and r.build(do_quantization=False) == 0
    assert r.export_rknn(str(tmp_path / "dyn.rknn")) == 0
    lite = RKNNLite()
    assert lite.load_rknn(str(tmp_path / "dyn.rknn")) == 0 and lite.init_runtime() == 0
    rng = np.random.default_rng(52)
    for hw in (16, 8, 8, 16):
        x = rng.standard_normal((1, 3, hw, hw)).astype(np.float32)
        (y,) = lite.inference([x], data_format="nchw")
        assert y.shape == (1, 4, hw, hw)
        assert_fp32_close(y, ort_run(onnx_path, {"x": x})[0])
        img = rng.integers(0, 256, (hw, hw, 3), dtype=np.uint8)  # NHWC uint8, no mean/std: the values
        (z,) = lite.inference([img])
        assert_fp32_close(z, ort_run(onnx_path, {"x": img.astype(np.float32).transpose(2, 0, 1)[None]})[0])
    capfd.readouterr()
    assert lite.inference([np.zeros((1, 3, 12, 12), np.float32)], data_format="nchw") is None
    err = error_lines(capfd.readouterr().err)
    assert len(err) == 1 and "shape sets are [[[1, 8, 8, 3]], [[1, 16, 16, 3]]]" in err[0], err
    # eval_perf runs the built model on the first set's zeros before any inference
    assert r.init_runtime() == 0 and "Conv" in r.eval_perf(is_print=False)
    lite.release()
    r.release()


def test_build_auto_hybrid_keeps_layers_float_to_reach_the_cosine(tmp_path, capfd):
    """build(auto_hybrid=True) with config(auto_hybrid_cos_thresh=...): with a target INT8 cannot
    reach, the Conv stays float (the model's input is then float), and the output meets it."""
    onnx_path = make_conv_model(tmp_path / "c.onnx", cin=3, cout=8, hw=8, seed=71)
    dataset = _write_dataset(tmp_path, (1, 3, 8, 8))
    x = np.load(tmp_path / "sample_0.npy")
    want = ort_run(onnx_path, {"x": x})[0]
    types = {}
    for thresh in (0.5, 0.999999):
        r = RKNN()
        r.config(target_platform="rk3588", auto_hybrid_cos_thresh=thresh)
        assert r.load_onnx(onnx_path) == 0
        assert r.build(do_quantization=True, dataset=dataset, auto_hybrid=True) == 0
        assert r.export_rknn(str(tmp_path / "h.rknn")) == 0
        with open(tmp_path / "h.rknn", "rb") as f:
            ctx = Context(f.read())
        types[thresh] = ctx.inputs[0].type
        ctx.destroy()
        assert r.init_runtime() == 0
        got = r.inference([x], data_format="nchw")[0]
        assert cosine(got, want) >= min(thresh, 0.9999), (thresh, cosine(got, want))
        r.release()
    assert types[0.5] == C.RKNN_TENSOR_INT8  # met by INT8 alone
    assert types[0.999999] != C.RKNN_TENSOR_INT8  # the Conv kept float


@pytest.mark.parametrize("quant", [False, True])
def test_build_rknn_batch_size(tmp_path, quant):
    """build(rknn_batch_size=3): the model takes three images at once, each computed as alone (INT8:
    calibrated on the single samples of the data set)."""
    onnx_path = make_conv_model(tmp_path / "c.onnx", cin=3, cout=8, hw=8, seed=81)
    dataset = _write_dataset(tmp_path, (1, 3, 8, 8))
    r = RKNN()
    r.config(target_platform="rk3588", float_dtype="float32")
    assert r.load_onnx(onnx_path) == 0
    assert r.build(do_quantization=quant, dataset=dataset if quant else None, rknn_batch_size=3) == 0
    assert r.init_runtime() == 0
    x = np.random.default_rng(82).standard_normal((3, 3, 8, 8)).astype(np.float32)
    (y,) = r.inference([x], data_format="nchw")
    assert y.shape == (3, 8, 8, 8)
    for n in range(3):
        want = ort_run(onnx_path, {"x": x[n:n + 1]})[0]
        if quant:
            assert cosine(y[n:n + 1], want) > 0.98
        else:
            assert_fp32_close(y[n:n + 1], want)
    assert r.build(do_quantization=False, rknn_batch_size=0) == -1
    r.release()
