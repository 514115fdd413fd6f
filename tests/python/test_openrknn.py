"""openrknn: the project's own module under the vendor classes (in-process conversion, contexts)."""
import threading

import pytest

from conftest import (MEAN, STD, assert_fp32_close, convert, make_conv_model, make_matmul_model, normalise, ort_run,
                      random_image)
from openrknn import _capi as C
from openrknn.convert import ConvertError, convert_onnx
from openrknn.runtime import Context, RknnError


def test_convert_onnx_path_and_bytes_agree(tmp_path):
    onnx_path = make_conv_model(tmp_path / "c.onnx")
    cfg = {"target_platform": "rk3588", "mean_values": [MEAN], "std_values": [STD], "float_dtype": "float32"}
    from_path = convert_onnx(onnx_path, cfg)
    with open(onnx_path, "rb") as f:
        from_bytes = convert_onnx(f.read(), cfg)
    assert isinstance(from_path, bytes) and len(from_path) > 0
    assert from_path == from_bytes
    # and the same as RKNN.build + export_rknn
    assert convert(onnx_path, tmp_path / "c.rknn", mean_values=[MEAN], std_values=[STD],
                   float_dtype="float32") == from_path


def test_context_runs_converted_bytes(tmp_path):
    onnx_path = make_conv_model(tmp_path / "c.onnx")
    data = convert_onnx(onnx_path, {"target_platform": "rk3588", "mean_values": [MEAN], "std_values": [STD],
                                    "float_dtype": "float32"})
    ctx = Context(data)
    try:
        assert [i.name for i in ctx.inputs] == ["x"] and [o.name for o in ctx.outputs] == ["y"]
        img = random_image(seed=80)
        outs, frame = ctx.run([img], [C.RKNN_TENSOR_NHWC], [0])
        assert isinstance(frame, int)
        assert_fp32_close(outs[0], ort_run(onnx_path, {"x": normalise(img)})[0])
        ver = ctx.sdk_version()
        assert all(isinstance(v, str) and v for v in ver)
    finally:
        ctx.destroy()
        ctx.destroy()  # twice is fine


@pytest.mark.parametrize("config", [{"target_platform": "rk9999"}, {"target_platform": "rk3588", "outputs": ["zz9"]},
                                    {"target_platform": "rk3588", "mean_values": [[1, 2]]}])
def test_convert_onnx_errors_raise(tmp_path, config):
    onnx_path, _ = make_matmul_model(tmp_path / "m.onnx")
    with pytest.raises(ConvertError) as e:
        convert_onnx(onnx_path, config)
    assert str(e.value).strip()
    if "outputs" in config:
        assert "zz9" in str(e.value)


def test_convert_onnx_bad_bytes(tmp_path):
    with pytest.raises(ConvertError):
        convert_onnx(b"\x08\x07 definitely not a ModelProto \xff\xff", {"target_platform": "rk3588"})


def test_convert_errors_are_per_thread(tmp_path):
    """orknn_last_error is the calling thread's: concurrent failing and succeeding conversions keep
    their own results."""
    good = make_conv_model(tmp_path / "good.onnx")
    with open(good, "rb") as f:
        good_bytes = f.read()
    results = {}

    def ok(i):
        results[("ok", i)] = convert_onnx(good_bytes, {"target_platform": "rk3588"})

    def fail(i):
        try:
            convert_onnx(good, {"target_platform": "rk3588", "outputs": [f"missing_{i}"]})
            results[("fail", i)] = "no error"
        except ConvertError as e:
            results[("fail", i)] = str(e)

    threads = [threading.Thread(target=f, args=(i,)) for i in range(3) for f in (ok, fail)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len({results[("ok", i)] for i in range(3)}) == 1
    for i in range(3):
        assert f"missing_{i}" in results[("fail", i)]


def test_context_init_failure_raises():
    with pytest.raises(RknnError) as e:
        Context(b"\x00" * 64)
    assert e.value.code < 0
