#!/bin/bash
# prepare_test_models.sh - fetch and generate everything the model tests (test_models) and the
# benchmarks (bench/run_bench.sh) read, so that neither touches the network at run time.
#
# Usage: scripts/prepare_test_models.sh [WORK_DIR]
#   WORK_DIR defaults to tests/models/work (git-ignored). Tests find it through ORKNN_MODELS_DIR, or at
#   that default place.
#
# Steps, each skipped when its results exist and are newer than the script that makes them (so a
# second run takes seconds):
#   1. Check the project's virtual environment .venv (scripts/setup.sh installs requirements/test.txt
#      there: onnxruntime, the reference runtime, and rapidocr-onnxruntime, whose wheel carries the
#      PP-OCR models).
#   2. Copy the PP-OCR models out of the rapidocr-onnxruntime package into WORK_DIR as ppocrv4_det.onnx,
#      ppocrv4_rec.onnx, ppocr_cls.onnx, and write the rec model's character list (its "character"
#      metadata) as ppocr_keys_v1.txt.
#   2b. Copy the two sample photos of the ultralytics package (.venv-ultralytics, which scripts/setup.sh
#      makes) into WORK_DIR/photos: the INT8 classifiers' calibration images and held-out inputs.
#   3. Export the torchvision models with random seeded weights and their PyTorch outputs
#      (tests/models/export_torchvision.py), then cross-check ONNX Runtime against PyTorch on them.
#   3b. Export the recurrent models (LSTM CRNN, GRU) with ONNX Runtime outputs (tests/models/export_recurrent.py).
#   4. Render the PP-OCR text-image inputs (tests/models/render_ocr_inputs.py).
#   5. QDQ (already-quantized INT8) versions of resnet18, resnet50 and mobilenet_v2 (tests/models/make_qdq.py).
#   6. Calibration data sets and held-out inputs of the INT8 tests (tests/models/make_calibration_sets.py).
#   7. ONNX Runtime reference outputs for the PP-OCR and the QDQ models (tests/models/ort_reference.py).
#   8. The model-family subset (tests/models/families/test_models.txt) at reduced sizes, with ONNX
#      Runtime outputs, into WORK_DIR/families (tests/models/families; docs/model_families.md).
#
# Needs scripts/setup.sh to have run: every Python step runs in .venv, which sees Debian's python3-torch,
# python3-torchvision, python3-onnx, python3-numpy and python3-pil; fonts-dejavu-core for the rendered
# text. Step 8 also runs the YOLO exports in .venv-ultralytics and the transformers exports in
# .venv-families.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELS_SRC="$ROOT/tests/models"
WORK_DIR="${1:-$MODELS_SRC/work}"
mkdir -p "$WORK_DIR"
WORK_DIR="$(cd "$WORK_DIR" && pwd)"
PY="$ROOT/.venv/bin/python"

step() { echo "== $*"; }
die() { echo "prepare_test_models.sh: $*" >&2; exit 1; }

# ---- 1. the virtual environment -------------------------------------------------------------------
[ -x "$PY" ] || die "$PY not found: run scripts/setup.sh"
"$PY" -c "import onnxruntime" 2>/dev/null || die "onnxruntime is missing from .venv: run scripts/setup.sh"
OCR_ASSETS="$("$PY" "$MODELS_SRC/ppocr_models_dir.py")" || die "run scripts/setup.sh"

# ---- 2. PP-OCR models -----------------------------------------------------------------------------
# The files of the pinned packages, checked by hash: the tests' tolerances were measured on these.
copy_asset() {  # SRC_DIR SRC_NAME DST_NAME SHA256
  local src="$1/$2" dst="$WORK_DIR/$3"
  [ -f "$src" ] || die "$src is missing: run scripts/setup.sh"
  if ! cmp -s "$src" "$dst"; then
    [ "$(sha256sum "$src" | cut -d' ' -f1)" = "$4" ] ||
      die "$src is not the file the tests were measured on (sha256 $4): reinstall its pinned package (scripts/setup.sh)"
    cp "$src" "$dst.tmp" && mv "$dst.tmp" "$dst"
    echo "copied $2 -> $dst"
  fi
}
step "PP-OCR models"
copy_asset "$OCR_ASSETS" ch_PP-OCRv4_det_infer.onnx ppocrv4_det.onnx d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9
copy_asset "$OCR_ASSETS" ch_PP-OCRv4_rec_infer.onnx ppocrv4_rec.onnx 48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b
copy_asset "$OCR_ASSETS" ch_ppocr_mobile_v2.0_cls_infer.onnx ppocr_cls.onnx e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c
if [ ! -f "$WORK_DIR/ppocr_keys_v1.txt" ] || [ "$WORK_DIR/ppocrv4_rec.onnx" -nt "$WORK_DIR/ppocr_keys_v1.txt" ]; then
  "$PY" - "$WORK_DIR/ppocrv4_rec.onnx" "$WORK_DIR/ppocr_keys_v1.txt" <<'PYEOF' || die "no character list in ppocrv4_rec.onnx"
import sys, onnx
chars = {p.key: p.value for p in onnx.load(sys.argv[1]).metadata_props}["character"]
with open(sys.argv[2], "w", encoding="utf-8") as f:
    f.write(chars.rstrip("\n") + "\n")
PYEOF
  echo "wrote the rec model's character list -> $WORK_DIR/ppocr_keys_v1.txt"
fi

# ---- 2b. photos -----------------------------------------------------------------------------------
# Real photos for the INT8 classifiers (tests/models/make_calibration_sets.py): the pinned ultralytics
# package (requirements/ultralytics.txt) carries two, located without importing the package.
step "photos"
PHOTOS="$("$ROOT/.venv-ultralytics/bin/python" -c 'import importlib.util, os
spec = importlib.util.find_spec("ultralytics")
print(os.path.join(os.path.dirname(spec.origin), "assets") if spec and spec.origin else "")' 2>/dev/null)" || PHOTOS=""
[ -n "$PHOTOS" ] || die "the ultralytics package is missing from .venv-ultralytics: run scripts/setup.sh"
mkdir -p "$WORK_DIR/photos"
copy_asset "$PHOTOS" bus.jpg photos/bus.jpg c02019c4979c191eb739ddd944445ef408dad5679acab6fd520ef9d434bfbc63
copy_asset "$PHOTOS" zidane.jpg photos/zidane.jpg 16d73869e3267a7d4ed00de8e860833bd1657c1b252e94c0c348277adc7b6edb

# ---- 3. torchvision models ------------------------------------------------------------------------
TORCHVISION_MODELS="resnet18 resnet50 mobilenet_v2 mobilenet_v3_small squeezenet1_1 shufflenet_v2_x1_0 efficientnet_b0"
EXPORTER="$MODELS_SRC/export_torchvision.py"
stale=""
for m in $TORCHVISION_MODELS; do
  for ext in onnx in.f32 out.f32; do
    f="$WORK_DIR/$m.$ext"
    if [ ! -f "$f" ] || [ "$EXPORTER" -nt "$f" ]; then stale="$stale $m"; break; fi
  done
done
if [ -n "$stale" ]; then
  "$PY" -c "import torch, torchvision" 2>/dev/null ||
    die "$PY cannot import torch/torchvision (scripts/setup.sh installs python3-torch python3-torchvision)"
  step "torchvision export:$stale"
  start=$(date +%s)
  PYTHONWARNINGS=ignore "$PY" "$EXPORTER" "$WORK_DIR" --force --models "$(echo $stale | tr ' ' ',')"
  echo "torchvision export took $(( $(date +%s) - start )) s"
  step "ONNX Runtime vs PyTorch on the torchvision exports"
  "$PY" "$MODELS_SRC/ort_reference.py" "$WORK_DIR" --check
else
  step "torchvision models: up to date"
fi

# ---- 3b. recurrent models ------------------------------------------------------------------------
# Small PyTorch LSTM (CRNN-like) and GRU models with ONNX Runtime outputs and calibration inputs.
RECURRENT_EXPORTER="$MODELS_SRC/export_recurrent.py"
recurrent_args=()
for f in crnn_lstm.onnx crnn_lstm.out.f32 gru.onnx gru.out.f32 calib/crnn_lstm.txt calib/gru.txt; do
  [ -f "$WORK_DIR/$f" ] && [ ! "$RECURRENT_EXPORTER" -nt "$WORK_DIR/$f" ] || recurrent_args=(--force)
done
if [ ${#recurrent_args[@]} -gt 0 ]; then
  "$PY" -c "import torch, onnxruntime" 2>/dev/null || die "$PY cannot import torch/onnxruntime (run scripts/setup.sh)"
  step "recurrent models (LSTM, GRU)"
  PYTHONWARNINGS=ignore "$PY" "$RECURRENT_EXPORTER" "$WORK_DIR" "${recurrent_args[@]}"
else
  step "recurrent models: up to date"
fi

# ---- 4. PP-OCR inputs -----------------------------------------------------------------------------
RENDERER="$MODELS_SRC/render_ocr_inputs.py"
render_args=()
for m in ppocrv4_det ppocrv4_rec ppocr_cls; do
  # A changed renderer makes every input stale (ort_reference.py then redoes the outputs).
  [ -f "$WORK_DIR/$m.in.f32" ] && [ ! "$RENDERER" -nt "$WORK_DIR/$m.in.f32" ] || render_args=(--force)
done
step "PP-OCR inputs"
"$PY" "$RENDERER" "$WORK_DIR" "${render_args[@]}"

# ---- 5. QDQ models --------------------------------------------------------------------------------
QDQ_MODELS="resnet18 resnet50 mobilenet_v2"
QDQ_MAKER="$MODELS_SRC/make_qdq.py"
stale=""
for m in $QDQ_MODELS; do
  f="$WORK_DIR/${m}_qdq.onnx"
  if [ ! -f "$f" ] || [ "$QDQ_MAKER" -nt "$f" ] || [ "$WORK_DIR/$m.onnx" -nt "$f" ]; then stale="$stale $m"; fi
done
if [ -n "$stale" ]; then
  "$PY" -c "import onnx, numpy, torch" 2>/dev/null ||
    die "$PY cannot import onnx/numpy/torch (scripts/setup.sh installs python3-onnx python3-torch)"
  step "QDQ models:$stale"
  "$PY" "$QDQ_MAKER" "$WORK_DIR" --models "$(echo $stale | tr ' ' ',')"
else
  step "QDQ models: up to date"
fi

# ---- 6. calibration sets -------------------------------------------------------------------------
# Each list file is written last by the script; the renderer's drawing helpers are reused, so a
# change of either script (or a newly copied photo) redoes all sets.
CALIB_MAKER="$MODELS_SRC/make_calibration_sets.py"
calib_args=()
for set in torchvision images ppocrv4_det ppocrv4_rec ppocr_cls; do
  f="$WORK_DIR/calib/$set.txt"
  [ -f "$f" ] && [ ! "$CALIB_MAKER" -nt "$f" ] && [ ! "$RENDERER" -nt "$f" ] || calib_args=(--force)
done
for photo in bus.jpg zidane.jpg; do
  [ ! "$WORK_DIR/photos/$photo" -nt "$WORK_DIR/calib/images.txt" ] || calib_args=(--force)
done
if [ ${#calib_args[@]} -gt 0 ]; then
  "$PY" -c "import numpy, PIL" 2>/dev/null || die "$PY cannot import numpy/PIL (scripts/setup.sh installs python3-numpy python3-pil)"
  step "INT8 calibration sets"
  "$PY" "$CALIB_MAKER" "$WORK_DIR" "${calib_args[@]}"
else
  step "INT8 calibration sets: up to date"
fi

# ---- 7. reference outputs ------------------------------------------------------------------------
step "PP-OCR and QDQ reference outputs (ONNX Runtime)"
"$PY" "$MODELS_SRC/ort_reference.py" "$WORK_DIR"

# ---- 8. model families ---------------------------------------------------------------------------
# Each exporter exports the names of the subset that are its own; a model directory older than its
# exporter or common.py is exported again.
FAMILIES_SRC="$MODELS_SRC/families"
FAMILIES_DIR="$WORK_DIR/families"
subset="$(sed 's/#.*//; /^[[:space:]]*$/d' "$FAMILIES_SRC/test_models.txt" | tr -d ' ' | paste -sd, -)"
families_step() {  # PYTHON EXPORTER
  local py="$ROOT/$1" exporter="$FAMILIES_SRC/$2" force=() name f start
  [ -x "$py" ] || die "$py not found: run scripts/setup.sh"
  for name in $("$py" "$exporter" --list); do
    case ",$subset," in *",$name,"*) ;; *) continue ;; esac
    f="$FAMILIES_DIR/$name/meta.json"
    [ -f "$f" ] && [ ! "$exporter" -nt "$f" ] && [ ! "$FAMILIES_SRC/common.py" -nt "$f" ] || force=(--force)
  done
  if [ ${#force[@]} -gt 0 ]; then
    start=$(date +%s)
    PYTHONWARNINGS=ignore "$py" "$exporter" "$FAMILIES_DIR" --size test --calib 0 --only "$subset" "${force[@]}" ||
      die "$2 failed (its output above names the model)"
    echo "$2 took $(( $(date +%s) - start )) s"
  fi
}
step "model families (reduced sizes): $subset"
families_step .venv/bin/python export_torch.py
families_step .venv-ultralytics/bin/python export_yolo.py
families_step .venv-families/bin/python export_transformers.py
"$PY" "$FAMILIES_SRC/reference.py" "$FAMILIES_DIR" --only "$subset"

echo "test models ready in $WORK_DIR"
