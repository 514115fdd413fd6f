#!/usr/bin/python3
"""Writes the recurrent test models (LSTM, GRU) and their ONNX Runtime reference outputs.

Usage: .venv/bin/python export_recurrent.py OUT_DIR [--force]

Models, exported from PyTorch with torch.onnx.export at opset 13 (seeded random weights):
  crnn_lstm   a CRNN text-recogniser head: Conv 3x3 (1 -> 8) + Relu + MaxPool 2x2 on a 1x1x16x64
              image, the 8x8 feature rows of each of the 32 columns as one time step (Reshape +
              Transpose), a 2-layer bidirectional torch.nn.LSTM (hidden 16), Linear to 12 classes.
              Input "image" 1x1x16x64, output "logits" [32, 1, 12].
  gru         torch.nn.GRU (batch_first, 2 layers, hidden 20; exported as GRU with
              linear_before_reset = 1 between Transposes) over a 1x24x10 sequence, Linear on the last
              step. Input "sequence" 1x24x10, output "scores" [1, 6].
For every model NAME it writes into OUT_DIR: NAME.onnx, NAME.in.f32 (seeded uniform input, raw
little-endian float32), NAME.out.f32 (ONNX Runtime's output for it), and calib/NAME.txt listing
calib/NAME/calib_NN.npy, four more seeded inputs for the INT8 test. Models whose files exist are
skipped unless --force is given. Needs Debian's python3-torch and the .venv's onnxruntime.
"""
import argparse
import os

import numpy as np
import onnxruntime as ort
import torch

OPSET = 13
CALIB_SAMPLES = 4


class CrnnLstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.lstm = torch.nn.LSTM(64, 16, num_layers=2, bidirectional=True)
        self.fc = torch.nn.Linear(32, 12)

    def forward(self, image):
        f = self.pool(torch.relu(self.conv(image)))  # [1, 8, 8, 32]
        n, c, h, w = f.shape
        seq = f.reshape(n, c * h, w).permute(2, 0, 1)  # [32, 1, 64]: one step per column
        y, _ = self.lstm(seq)
        return self.fc(y)


class GruModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(10, 20, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(20, 6)

    def forward(self, sequence):
        y, _ = self.gru(sequence)
        return self.fc(y[:, -1])


MODELS = {
    "crnn_lstm": (CrnnLstm, (1, 1, 16, 64), "image", "logits"),
    "gru": (GruModel, (1, 24, 10), "sequence", "scores"),
}


def write_atomically(path, write):
    tmp = path + ".tmp"
    write(tmp)
    os.replace(tmp, path)


def export(name, out_dir):
    make, shape, in_name, out_name = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    gen = np.random.default_rng(1234)
    x = gen.uniform(0, 1, shape).astype(np.float32)
    onnx_path = os.path.join(out_dir, name + ".onnx")
    write_atomically(onnx_path, lambda p: torch.onnx.export(model, torch.from_numpy(x), p, opset_version=OPSET,
                                                             input_names=[in_name], output_names=[out_name]))
    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    (y,) = session.run([out_name], {in_name: x})
    write_atomically(os.path.join(out_dir, name + ".in.f32"), lambda p: x.tofile(p))
    write_atomically(os.path.join(out_dir, name + ".out.f32"), lambda p: y.astype(np.float32).tofile(p))
    calib_dir = os.path.join(out_dir, "calib", name)
    os.makedirs(calib_dir, exist_ok=True)
    lines = []
    for i in range(CALIB_SAMPLES):
        sample = "calib_%02d.npy" % i
        np.save(os.path.join(calib_dir, sample), gen.uniform(0, 1, shape).astype(np.float32))
        lines.append(os.path.join(name, sample))
    write_atomically(os.path.join(out_dir, "calib", name + ".txt"),
                     lambda p: open(p, "w").write("\n".join(lines) + "\n"))
    print("wrote %s: input %s, output %s" % (onnx_path, list(shape), list(y.shape)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in MODELS:
        files = [name + ".onnx", name + ".in.f32", name + ".out.f32", os.path.join("calib", name + ".txt")]
        if not args.force and all(os.path.exists(os.path.join(args.out_dir, f)) for f in files):
            continue
        export(name, args.out_dir)


if __name__ == "__main__":
    main()
