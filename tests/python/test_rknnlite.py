"""rknnlite.api.RKNNLite: every member of the vendor light runtime's interface
(../shared/docs/python-api-contract.md, section 1), its error paths, threads and leaks."""
import pathlib
import threading

import numpy as np
import pytest

from conftest import (MEAN, STD, assert_fp16_close, assert_fp32_close, convert, error_lines, make_conv_model,
                      normalise, ort_run, random_image, rss_bytes)
from rknnlite.api import RKNNLite

# ---------------------------------------------------------------------------------------------
# constants, loading, init


@pytest.mark.parametrize("name,value", [("NPU_CORE_AUTO", 0), ("NPU_CORE_0", 1), ("NPU_CORE_1", 2),
                                        ("NPU_CORE_2", 4), ("NPU_CORE_0_1", 3), ("NPU_CORE_0_1_2", 7),
                                        ("NPU_CORE_ALL", 0xFFFF)])
def test_core_constants(name, value):
    assert getattr(RKNNLite, name) == value
    assert getattr(RKNNLite(), name) == value


def test_typical_script_matches_onnxruntime(conv_onnx, conv_rknn):
    """load_rknn -> init_runtime(core_mask=NPU_CORE_0) -> inference([uint8 NHWC]) -> release."""
    r = RKNNLite()
    assert r.load_rknn(conv_rknn) == 0
    ret = r.init_runtime(core_mask=RKNNLite.NPU_CORE_0)
    assert ret == 0 and isinstance(ret, int)
    img = random_image(seed=1)
    out = r.inference(inputs=[img])
    r.release()
    assert isinstance(out, list) and len(out) == 1
    assert isinstance(out[0], np.ndarray) and out[0].dtype == np.float32
    want = ort_run(conv_onnx, {"x": normalise(img)})[0]
    assert_fp16_close(out[0], want)


def test_load_rknn_path_bytes_and_pathlib_agree(conv_rknn):
    img = random_image(seed=2)
    with open(conv_rknn, "rb") as f:
        data = f.read()
    results = []
    for source in (conv_rknn, pathlib.Path(conv_rknn), data, bytearray(data), memoryview(data)):
        r = RKNNLite()
        assert r.load_rknn(source) == 0, type(source)
        assert r.init_runtime() == 0
        results.append(r.inference([img])[0])
        r.release()
    for res in results[1:]:
        assert np.array_equal(res, results[0])


@pytest.mark.parametrize("mask", [RKNNLite.NPU_CORE_AUTO, RKNNLite.NPU_CORE_0, RKNNLite.NPU_CORE_1,
                                  RKNNLite.NPU_CORE_2, RKNNLite.NPU_CORE_0_1, RKNNLite.NPU_CORE_0_1_2,
                                  RKNNLite.NPU_CORE_ALL])
def test_core_masks_rk3588_same_result(conv_rknn, mask):
    img = random_image(seed=3)
    ref = RKNNLite()
    assert ref.load_rknn(conv_rknn) == 0 and ref.init_runtime() == 0
    want = ref.inference([img])[0]
    ref.release()
    r = RKNNLite()
    assert r.load_rknn(conv_rknn) == 0
    assert r.init_runtime(core_mask=mask) == 0
    got = r.inference([img])[0]
    r.release()
    assert np.array_equal(got, want)


def test_core_mask_of_a_missing_core_fails(conv_rknn, capfd):
    r = RKNNLite()
    assert r.load_rknn(conv_rknn) == 0
    assert r.init_runtime(core_mask=8) == -1  # rk3588 has cores 0..2
    assert error_lines(capfd.readouterr().err)
    assert r.inference([random_image()]) is None  # the failed init left no runtime
    r.release()


def test_init_runtime_again_replaces_the_context(conv_rknn):
    r = RKNNLite()
    assert r.load_rknn(conv_rknn) == 0
    img = random_image(seed=4)
    assert r.init_runtime() == 0
    a = r.inference([img])[0]
    assert r.init_runtime(core_mask=RKNNLite.NPU_CORE_0_1_2) == 0
    b = r.inference([img])[0]
    r.release()
    assert np.array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# inference: formats, frame id, pass-through, data_type


def test_inference_returns_list_of_float32(lite):
    out = lite.inference([random_image(seed=5)])
    assert type(out) is list
    assert [o.shape for o in out] == [(1, 4, 8, 8)]
    assert all(isinstance(o, np.ndarray) and o.dtype == np.float32 for o in out)


def test_single_array_and_tuple_inputs(lite):
    img = random_image(seed=6)
    want = lite.inference([img])[0]
    assert np.array_equal(lite.inference((img,))[0], want)


@pytest.mark.parametrize("fmt", ["nchw", ["nchw"], "NCHW", ("nchw",)])
def test_data_format_nchw_equals_nhwc(lite, fmt):
    img = random_image(seed=7)
    want = lite.inference([img])[0]
    got = lite.inference([np.ascontiguousarray(img.transpose(0, 3, 1, 2))], data_format=fmt)
    assert got is not None
    assert np.array_equal(got[0], want)


@pytest.mark.parametrize("fmt", [None, "nhwc", ["nhwc"]])
def test_data_format_nhwc_explicit(lite, fmt, conv_onnx):
    img = random_image(seed=8)
    got = lite.inference([img], data_format=fmt)[0]
    assert_fp16_close(got, ort_run(conv_onnx, {"x": normalise(img)})[0])


def test_non_contiguous_input(lite):
    img = random_image(seed=9)
    want = lite.inference([img])[0]
    nchw_view = img.transpose(0, 3, 1, 2)  # a view, not C-contiguous
    assert not nchw_view.flags.c_contiguous
    assert np.array_equal(lite.inference([nchw_view], data_format="nchw")[0], want)


def test_3d_hwc_image_for_batch1_input(lite):
    img = random_image(seed=10)
    want = lite.inference([img])[0]
    got = lite.inference([img[0]])
    assert got is not None and got[0].shape == (1, 4, 8, 8)
    assert np.array_equal(got[0], want)
    chw = np.ascontiguousarray(img[0].transpose(2, 0, 1))
    assert np.array_equal(lite.inference([chw], data_format="nchw")[0], want)


def test_get_frame_id(lite):
    img = random_image(seed=11)
    plain = lite.inference([img])
    a = lite.inference([img], get_frame_id=True)
    b = lite.inference([img], get_frame_id=True)
    for res in (a, b):
        assert len(res) == len(plain) + 1
        assert isinstance(res[-1], int) and not isinstance(res[-1], bool)
        assert np.array_equal(res[0], plain[0])
    assert b[-1] == a[-1] + 1  # one run per inference()


def test_inputs_pass_through_takes_native_data(lite, conv_onnx):
    """pass_through=1: the buffer is the model's native input (FLOAT16 NHWC for an fp16 float
    model, docs/decisions.md), already normalised: mean/std are not applied."""
    x = np.random.default_rng(12).standard_normal((1, 3, 8, 8)).astype(np.float32)
    native = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).astype(np.float16)
    got = lite.inference([native], inputs_pass_through=[1])
    assert got is not None
    want = ort_run(conv_onnx, {"x": x})[0]
    assert_fp16_close(got[0], want)
    # pass-through takes the bytes as the native type whatever the array's dtype: the same bytes
    # as uint16 give the same result, while without pass-through they are integers (garbage here)
    as_u16 = native.view(np.uint16)
    assert np.array_equal(lite.inference([as_u16], inputs_pass_through=[1])[0], got[0])
    not_passed = lite.inference([as_u16], inputs_pass_through=[0])
    assert not_passed is not None and not np.allclose(not_passed[0], want, atol=0.1)
    # float data without pass-through is taken as normalised as well (mean/std are for uint8)
    assert_fp16_close(lite.inference([x], data_format="nchw", inputs_pass_through=[0])[0], want)


def test_data_format_decides_for_ambiguous_shape(model_dir):
    """An input [1,3,3,3] reads the same in NCHW and NHWC: only data_format tells them apart."""
    onnx_path = make_conv_model(model_dir / "conv333.onnx", cin=3, cout=2, hw=3, seed=5)
    data = convert(onnx_path, str(model_dir / "conv333.rknn"), float_dtype="float32")
    x = np.random.default_rng(16).standard_normal((1, 3, 3, 3)).astype(np.float32)
    r = RKNNLite()
    assert r.load_rknn(data) == 0 and r.init_runtime() == 0
    as_nchw = r.inference([x], data_format="nchw")[0]
    as_nchw_list = r.inference([x], data_format=["nchw"])[0]
    as_nhwc = r.inference([x])[0]
    r.release()
    assert_fp32_close(as_nchw, ort_run(onnx_path, {"x": x})[0])
    assert np.array_equal(as_nchw_list, as_nchw)
    assert_fp32_close(as_nhwc, ort_run(onnx_path, {"x": np.ascontiguousarray(x.transpose(0, 3, 1, 2))})[0])
    assert not np.allclose(as_nhwc, as_nchw, atol=1e-3)


def test_default_core_mask_on_single_core_platform(model_dir, conv_onnx):
    """rk3566 (the converter's default platform) has one NPU core: init_runtime() with the
    default NPU_CORE_AUTO must work there."""
    data = convert(conv_onnx, str(model_dir / "conv_rk3566.rknn"), target_platform="rk3566",
                   mean_values=[MEAN], std_values=[STD])
    r = RKNNLite()
    assert r.load_rknn(data) == 0
    assert r.init_runtime() == 0
    assert r.init_runtime(core_mask=RKNNLite.NPU_CORE_AUTO) == 0
    img = random_image(seed=17)
    out = r.inference([img])
    r.release()
    assert_fp16_close(out[0], ort_run(conv_onnx, {"x": normalise(img)})[0])


def test_float_input_is_taken_as_normalised(conv_onnx, conv_rknn_fp32):
    """mean/std apply to uint8 image data only; float32 data is already normalised."""
    r = RKNNLite()
    assert r.load_rknn(conv_rknn_fp32) == 0 and r.init_runtime() == 0
    img = random_image(seed=13)
    x = normalise(img)
    got_u8 = r.inference([img])[0]
    got_f32 = r.inference([x], data_format="nchw")[0]
    r.release()
    want = ort_run(conv_onnx, {"x": x})[0]
    assert_fp32_close(got_u8, want)
    assert_fp32_close(got_f32, want)


def test_data_type_matching_is_accepted(lite):
    img = random_image(seed=14)
    want = lite.inference([img])[0]
    for dt in ("uint8", np.uint8, np.dtype(np.uint8)):
        got = lite.inference([img], data_type=dt)
        assert got is not None and np.array_equal(got[0], want)


@pytest.mark.parametrize("dt", ["float32", np.float32, "int8", "not-a-dtype"])
def test_data_type_mismatch_returns_none(lite, capfd, dt):
    assert lite.inference([random_image(seed=15)], data_type=dt) is None
    err = error_lines(capfd.readouterr().err)
    assert err and err[0].startswith("E inference")


def test_get_sdk_version(lite):
    v = lite.get_sdk_version()
    assert isinstance(v, str) and v.strip()


def test_get_sdk_version_before_init(capfd):
    r = RKNNLite()
    assert r.get_sdk_version() is None
    assert error_lines(capfd.readouterr().err)


def test_list_devices():
    assert RKNNLite().list_devices() == ([], [])


def test_list_support_target_platform(model_dir, conv_onnx, conv_rknn, tmp_path, capfd):
    r = RKNNLite()
    res = r.list_support_target_platform(conv_rknn)
    assert "rk3588" in res["support_target_platform"] and "rv1106" in res["support_target_platform"]
    assert res["filled_target_platform"] == ["rk3588"]
    rv = convert(conv_onnx, str(model_dir / "conv_rv1106.rknn"), target_platform="rv1106")
    with open(model_dir / "conv_rv1106.rknn", "rb") as f:
        assert f.read() == rv
    assert r.list_support_target_platform(str(model_dir / "conv_rv1106.rknn"))["filled_target_platform"] == ["rv1106"]
    assert r.list_support_target_platform(str(tmp_path / "missing.rknn")) is None
    assert error_lines(capfd.readouterr().err)
    (tmp_path / "junk.rknn").write_bytes(b"\x10\x00\x00\x00" + b"ORKN" * 8)
    assert r.list_support_target_platform(str(tmp_path / "junk.rknn")) is None
    assert error_lines(capfd.readouterr().err)


def test_model_platform_reader_survives_corrupt_bytes(conv_rknn):
    """openrknn.model_info.model_platform reads the FlatBuffer by hand: it must return None, never
    raise or read out of bounds, on truncated and mutated files."""
    from openrknn.model_info import model_platform
    with open(conv_rknn, "rb") as f:
        data = f.read()
    assert model_platform(data) == "rk3588"
    for cut in (0, 3, 4, 8, 12, 20, 64):
        assert model_platform(data[:cut]) is None
    rng = np.random.RandomState(0)
    head = np.frombuffer(data[:2048], np.uint8)
    for _ in range(2000):
        b = head.copy()
        b[rng.randint(0, len(b), 4)] = rng.randint(0, 256, 4)
        got = model_platform(b.tobytes())
        assert got is None or isinstance(got, str)


def test_core_masks_follow_the_vendor_rules_per_platform(model_dir, conv_onnx, capfd):
    """Single-core platforms ignore a mask with a warning; rk3576 (two cores) maps masks naming
    core 2 to cores 0 / 0_1 with a warning; the results are those of the default mask."""
    img = random_image(seed=21)
    for platform, mask, warns in (("rk3566", RKNNLite.NPU_CORE_0, "one NPU core"),
                                  ("rv1106", RKNNLite.NPU_CORE_0_1_2, "one NPU core"),
                                  ("rk3576", RKNNLite.NPU_CORE_2, "no core 2"),
                                  ("rk3576", RKNNLite.NPU_CORE_0_1_2, "no core 2"),
                                  ("rk3576", RKNNLite.NPU_CORE_0_1, None)):
        data = convert(conv_onnx, str(model_dir / f"conv_{platform}.rknn"), target_platform=platform,
                       mean_values=[MEAN], std_values=[STD])
        r = RKNNLite()
        assert r.load_rknn(data) == 0 and r.init_runtime() == 0
        want = r.inference([img])[0]
        capfd.readouterr()
        assert r.init_runtime(core_mask=mask) == 0, (platform, mask)
        err = capfd.readouterr().err
        if warns:
            assert any(line.startswith("W init_runtime") and warns in line for line in err.splitlines()), err
        else:
            assert "W " not in err, err
        assert np.array_equal(r.inference([img])[0], want)
        r.release()


def test_release_twice_and_inference_after_release(conv_rknn, capfd):
    r = RKNNLite()
    assert r.load_rknn(conv_rknn) == 0 and r.init_runtime() == 0
    r.release()
    r.release()
    capfd.readouterr()
    assert r.inference([random_image()]) is None
    assert error_lines(capfd.readouterr().err)
    # the object can load again after release
    assert r.load_rknn(conv_rknn) == 0 and r.init_runtime() == 0
    assert r.inference([random_image()]) is not None
    r.release()


def test_verbose_file_receives_the_log(tmp_path):
    log = tmp_path / "lite.log"
    r = RKNNLite(verbose=True, verbose_file=str(log))
    assert r.load_rknn(str(tmp_path / "missing.rknn")) == -1
    r.list_devices()
    r.release()
    text = log.read_text()
    assert "E load_rknn" in text and "missing.rknn" in text
    assert "I list_devices" in text  # verbose: information lines too


# ---------------------------------------------------------------------------------------------
# error paths: -1 or None, with an 'E ' line on stderr


def test_load_rknn_missing_file(tmp_path, capfd):
    r = RKNNLite()
    assert r.load_rknn(str(tmp_path / "nope.rknn")) == -1
    err = error_lines(capfd.readouterr().err)
    assert err and "nope.rknn" in err[0]
    assert r.init_runtime() == -1  # nothing loaded
    assert error_lines(capfd.readouterr().err)


@pytest.mark.parametrize("bad", [b"", 42, None])
def test_load_rknn_bad_argument(capfd, bad):
    assert RKNNLite().load_rknn(bad) == -1
    assert error_lines(capfd.readouterr().err)


@pytest.mark.parametrize("corrupt", ["garbage", "truncated", "flipped"])
def test_corrupt_model_init_runtime_fails(conv_rknn, capfd, corrupt):
    with open(conv_rknn, "rb") as f:
        data = f.read()
    if corrupt == "garbage":
        data = b"not a model at all " * 20
    elif corrupt == "truncated":
        data = data[: len(data) // 3]
    else:
        data = bytes(b ^ 0xFF for b in data[:64]) + data[64:]
    r = RKNNLite()
    assert r.load_rknn(data) == 0  # read only; the runtime checks it
    assert r.init_runtime() == -1
    assert error_lines(capfd.readouterr().err)
    assert r.inference([random_image()]) is None
    r.release()


def test_inference_before_init_runtime(conv_rknn, capfd):
    r = RKNNLite()
    assert r.load_rknn(conv_rknn) == 0
    assert r.inference([random_image()]) is None
    err = error_lines(capfd.readouterr().err)
    assert err and "init_runtime" in err[0]


@pytest.mark.parametrize("inputs", [
    pytest.param(lambda img: [img, img], id="too-many"),
    pytest.param(lambda img: [], id="none"),
    pytest.param(lambda img: [img[:, :7]], id="wrong-shape"),
    pytest.param(lambda img: [np.zeros((1, 3, 8, 8, 1), np.uint8)], id="wrong-rank"),
    pytest.param(lambda img: [img.reshape(1, 8, 24)], id="3d-wrong"),
    pytest.param(lambda img: [img.astype(np.complex64)], id="complex64"),
    pytest.param(lambda img: [img.astype(object)], id="object"),
    pytest.param(lambda img: {"x": img}, id="dict"),
    pytest.param(lambda img: [[[1, 2], [3]]], id="ragged-list"),
])
def test_bad_inputs_return_none(lite, capfd, inputs):
    assert lite.inference(inputs(random_image())) is None
    err = error_lines(capfd.readouterr().err)
    assert err and err[0].startswith("E inference")
    assert lite.inference([random_image()]) is not None  # the context still works


def test_wrong_input_count_message(lite, capfd):
    img = random_image()
    assert lite.inference([img, img]) is None
    err = error_lines(capfd.readouterr().err)
    assert any("1 input" in line and "2 given" in line for line in err), err


def test_unsupported_dtype_message(lite, capfd):
    assert lite.inference([random_image().astype(np.complex64)]) is None
    assert any("complex64" in line for line in error_lines(capfd.readouterr().err))


@pytest.mark.parametrize("kwargs", [dict(data_format="nhcw"), dict(data_format=["nchw", "nchw"]),
                                    dict(data_format=5), dict(inputs_pass_through=[0, 0]),
                                    dict(inputs_pass_through=1)])
def test_bad_inference_options(lite, capfd, kwargs):
    assert lite.inference([random_image()], **kwargs) is None
    assert error_lines(capfd.readouterr().err)


@pytest.mark.parametrize("target", ["rk3588", "RK3566", "rv1106"])
def test_board_target_refused(conv_rknn, capfd, target):
    r = RKNNLite()
    assert r.load_rknn(conv_rknn) == 0
    assert r.init_runtime(target=target) == -1
    err = error_lines(capfd.readouterr().err)
    assert err and "CPU" in err[0] and target in err[0]
    assert r.init_runtime(target=None) == 0  # and the default works afterwards
    r.release()


def test_unknown_target_refused(conv_rknn, capfd):
    r = RKNNLite()
    assert r.load_rknn(conv_rknn) == 0
    assert r.init_runtime(target="no_such_board", device_id="123") == -1
    assert error_lines(capfd.readouterr().err)
    r.release()


# ---------------------------------------------------------------------------------------------
# threads and leaks


def test_threads_each_with_own_context_bit_exact(wide_rknn):
    n_threads, runs = 4, 20
    imgs = [random_image((1, 32, 32, 3), seed=100 + i) for i in range(5)]
    ref = RKNNLite()
    assert ref.load_rknn(wide_rknn) == 0 and ref.init_runtime() == 0
    want = [ref.inference([im])[0] for im in imgs]
    ref.release()
    assert not np.array_equal(want[0], want[1])  # distinct inputs give distinct outputs

    barrier = threading.Barrier(n_threads)
    failures, done = [], []

    def worker(t):
        try:
            r = RKNNLite()
            assert r.load_rknn(wide_rknn) == 0
            assert r.init_runtime() == 0
            barrier.wait()
            for k in range(runs):
                i = (t + k) % len(imgs)
                out = r.inference([imgs[i]])
                if out is None or not np.array_equal(out[0], want[i]):
                    failures.append((t, k))
            r.release()
            done.append(t)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append((t, repr(e)))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not failures
    assert sorted(done) == list(range(n_threads))


def test_threads_sharing_one_context(lite):
    """Concurrent calls on one context are serialised by the runtime; results stay exact."""
    imgs = [random_image(seed=200 + i) for i in range(4)]
    want = [lite.inference([im])[0] for im in imgs]
    failures = []

    def worker(t):
        for k in range(15):
            out = lite.inference([imgs[t]])
            if out is None or not np.array_equal(out[0], want[t]):
                failures.append((t, k))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not failures


LEAK_BOUND = 12 * 1024 * 1024  # bytes of RSS growth allowed after the warm-up


def test_no_leak_inference_and_init_release(wide_rknn):
    """300 inferences (256 KB of output each) and 50 load/init/release cycles (about 0.8 MB of
    activations and outputs per context): a leak per run or per context would exceed the bound."""
    data = wide_rknn
    img = random_image((1, 32, 32, 3), seed=300)

    r = RKNNLite()
    assert r.load_rknn(data) == 0 and r.init_runtime() == 0
    want = r.inference([img])[0]
    assert want.nbytes == 64 * 32 * 32 * 4

    def cycle():
        c = RKNNLite()
        assert c.load_rknn(data) == 0 and c.init_runtime() == 0
        assert c.inference([img]) is not None
        c.release()

    for _ in range(30):  # warm-up: allocator pools, lazily created state
        r.inference([img])
    for _ in range(5):
        cycle()
    before = rss_bytes()
    for _ in range(300):
        out = r.inference([img], get_frame_id=True)
        assert out is not None
    assert np.array_equal(out[0], want)
    mid = rss_bytes()
    for _ in range(50):
        cycle()
    after = rss_bytes()
    r.release()
    assert mid - before < LEAK_BOUND, f"RSS grew {(mid - before) / 2**20:.1f} MiB over 300 inferences"
    assert after - mid < LEAK_BOUND, f"RSS grew {(after - mid) / 2**20:.1f} MiB over 50 init/release cycles"
