#!/usr/bin/python3
"""Exports the transformer and audio families from PyPI transformers' configurations with seeded
random weights (docs/model_families.md): CLIP's image and text towers, Whisper's encoder and decoder
(int64 tokens), wav2vec2, and a MobileSAM-like segment-anything encoder and decoder.

Usage: .venv-families/bin/python export_transformers.py OUT_DIR [--size full|test] [--only a,b] [--force] [--list]

Full sizes are the released configurations' (CLIP ViT-B/32, Whisper tiny, wav2vec2 base; the
MobileSAM-like encoder is a ViT of width 192 and 6 layers at 1024x1024 with SAM's windowed attention
and neck, where MobileSAM has a TinyViT); test sizes narrow and shorten every one. Weights: common.lecun_init
(variance-keeping; some configurations initialise near 0). Attention runs the configurations' "eager"
implementation, exported at ONNX opset 17 with torch's TorchScript exporter.

The segment-anything decoder is exported twice:
  mobilesam_decoder     the prompt path of SAM's own ONNX export (segment_anything's SamOnnxModel,
                        which the model zoo's MobileSAM decoder comes from): point coordinates
                        [1, N, 2] in pixels and labels [1, N] (float; -1 = padding point) embedded
                        with arithmetic, the mask decoder's 4 masks and IoU scores out
  mobilesam_decoder_hf  transformers' SamModel forward on image embeddings, points [1, 1, N, 2] and
                        int64 labels [1, 1, N], as a user exporting the transformers model gets it

Runs in .venv-families (tests/models/families/setup_venv.sh: torch 2.x, transformers, onnx; see
requirements/families.txt): transformers 5 needs torch 2, which Debian's .venv does not have.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.dont_write_bytecode = True  # importing common must not leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

OPSET = 17


def configs(size):
    import transformers as T
    full = size == "full"
    eager = {"attn_implementation": "eager"}
    tokens = {"bos_token_id": 0, "eos_token_id": 2, "pad_token_id": 1}
    if full:
        clip_v = T.CLIPVisionConfig(**eager)
        clip_t = T.CLIPTextConfig(**eager)
        whisper = T.WhisperConfig(**eager, decoder_start_token_id=50257, **tokens)
        w2v = T.Wav2Vec2Config(**eager)
    else:
        clip_v = T.CLIPVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                    image_size=64, patch_size=16, projection_dim=32, **eager)
        clip_t = T.CLIPTextConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                  max_position_embeddings=16, vocab_size=1000, projection_dim=32, **tokens, **eager)
        whisper = T.WhisperConfig(d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                  decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                                  max_source_positions=100, max_target_positions=32, vocab_size=1000,
                                  decoder_start_token_id=3, **tokens, **eager)
        w2v = T.Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                               conv_dim=[32] * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, **eager)
    if full:  # MobileSAM-like: SAM's encoder layout at ViT-Tiny width, SAM's prompt encoder and mask decoder
        sam = T.SamConfig(vision_config=dict(hidden_size=192, num_hidden_layers=6, num_attention_heads=3, mlp_dim=768,
                                             global_attn_indexes=[2, 5], output_channels=256, num_pos_feats=128),
                          **eager)
    else:
        sam = T.SamConfig(vision_config=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=256,
                                             patch_size=16, window_size=4, global_attn_indexes=[1], mlp_dim=128,
                                             output_channels=64, num_pos_feats=32),
                          prompt_encoder_config=dict(hidden_size=64, image_size=256, patch_size=16,
                                                     image_embedding_size=16),
                          mask_decoder_config=dict(hidden_size=64, mlp_dim=128, num_attention_heads=4,
                                                   iou_head_hidden_dim=64), **eager)
    return {"clip": (clip_v, clip_t), "whisper": whisper, "wav2vec2": w2v, "sam": sam}


class Call(nn.Module):
    """A module whose forward is fn(model, *inputs): picks the tensor outputs of a transformers model."""

    def __init__(self, model, fn):
        super().__init__()
        self.model = model
        self.fn = fn

    def forward(self, *args):
        return self.fn(self.model, *args)


def init(model, seed=common.WEIGHT_SEED):
    """Random variance-keeping weights; parameters torch does not train (Whisper's sinusoidal
    encoder positions) stay as the model computed them."""
    common.lecun_init(model, seed, skip=[p for p in model.parameters() if not p.requires_grad])
    return model.eval()


def tokens(rng, n, vocab, bos, eos):
    """A token sequence: BOS, random ids above the special ones, EOS, EOS padding (CLIP pads with
    its end token)."""
    ids = np.full((1, n), eos, np.int64)
    length = max(3, n * 2 // 3)
    ids[0, 0] = bos
    ids[0, 1:length - 1] = rng.integers(4, vocab, length - 2)
    return ids


def export_clip_vision(d, cfgs):
    import transformers as T
    cfg = cfgs["clip"][0]
    torch.manual_seed(common.WEIGHT_SEED)
    model = init(T.CLIPVisionModelWithProjection(cfg))
    s = cfg.image_size
    # CLIP's preprocessing normalises with its own mean/std; the ImageNet ones are as close as needed.
    x = common.imagenet_images(1, s, s, common.INPUT_SEED)
    common.onnx_export(Call(model, lambda m, px: m(pixel_values=px).image_embeds), [torch.from_numpy(x)],
                       os.path.join(d, "model.onnx"), ["pixel_values"], ["image_embeds"], OPSET)
    return "transformers CLIPVisionModelWithProjection", [("pixel_values", x)]


def export_clip_text(d, cfgs):
    import transformers as T
    cfg = cfgs["clip"][1]
    torch.manual_seed(common.WEIGHT_SEED)
    model = init(T.CLIPTextModelWithProjection(cfg))
    ids = tokens(np.random.default_rng(common.INPUT_SEED), cfg.max_position_embeddings, cfg.vocab_size,
                 cfg.bos_token_id, cfg.eos_token_id)
    common.onnx_export(Call(model, lambda m, t: m(input_ids=t).text_embeds), [torch.from_numpy(ids)],
                       os.path.join(d, "model.onnx"), ["input_ids"], ["text_embeds"], OPSET)
    return "transformers CLIPTextModelWithProjection (pooled at the first end token)", [("input_ids", ids)]


def whisper_features(cfg, seed):
    """A log-mel-like spectrogram: Whisper's features are log10 mel energies scaled to about [-1, 1]."""
    rng = np.random.default_rng(seed)
    frames = 2 * cfg.max_source_positions
    base = rng.normal(0, 0.3, (1, cfg.num_mel_bins, 1)) + np.linspace(0.4, -0.6, cfg.num_mel_bins)[None, :, None]
    return (base + rng.normal(0, 0.25, (1, cfg.num_mel_bins, frames))).clip(-1, 1.5).astype(np.float32)


def export_whisper_encoder(d, cfgs):
    import transformers as T
    cfg = cfgs["whisper"]
    torch.manual_seed(common.WEIGHT_SEED)
    model = init(T.WhisperModel(cfg)).get_encoder()
    x = whisper_features(cfg, common.INPUT_SEED)
    common.onnx_export(Call(model, lambda m, f: m(input_features=f).last_hidden_state), [torch.from_numpy(x)],
                       os.path.join(d, "model.onnx"), ["input_features"], ["last_hidden_state"], OPSET)
    return "transformers WhisperModel encoder", [("input_features", x)]


def export_whisper_decoder(d, cfgs):
    import transformers as T
    cfg = cfgs["whisper"]
    torch.manual_seed(common.WEIGHT_SEED)
    model = init(T.WhisperForConditionalGeneration(cfg))
    rng = np.random.default_rng(common.INPUT_SEED)
    n = 12 if cfg.d_model >= 384 else 8
    ids = np.concatenate([[[cfg.decoder_start_token_id]], rng.integers(4, cfg.vocab_size, (1, n - 1))], 1).astype(np.int64)
    # The encoder's output for one utterance: layer-normed states.
    with torch.no_grad():
        states = model.model.encoder(torch.from_numpy(whisper_features(cfg, common.INPUT_SEED))).last_hidden_state.numpy()

    def decode(m, t, h):  # the full prefix each step, no cache: the zoo's decoder takes the tokens so far
        return m(decoder_input_ids=t, decoder_attention_mask=torch.ones_like(t), encoder_outputs=(h,),
                 use_cache=False).logits
    common.onnx_export(Call(model, decode), [torch.from_numpy(ids), torch.from_numpy(states)],
                       os.path.join(d, "model.onnx"), ["tokens", "audio_features"], ["logits"], OPSET)
    return "transformers WhisperForConditionalGeneration decoder (no cache)", [("tokens", ids),
                                                                                ("audio_features", states)]


def export_wav2vec2(d, cfgs):
    import transformers as T
    cfg = cfgs["wav2vec2"]
    torch.manual_seed(common.WEIGHT_SEED)
    model = init(T.Wav2Vec2Model(cfg))
    n = 32000 if cfg.hidden_size >= 768 else 4000
    t = np.arange(n) / 16000
    rng = np.random.default_rng(common.INPUT_SEED)
    wave = sum(rng.uniform(0.1, 0.4) * np.sin(2 * np.pi * rng.uniform(100, 2000) * t + rng.uniform(0, 6))
               for _ in range(6)) + rng.normal(0, 0.05, n)
    x = ((wave - wave.mean()) / wave.std()).astype(np.float32)[None]  # zero mean, unit variance, as the extractor
    common.onnx_export(Call(model, lambda m, w: m(input_values=w).last_hidden_state), [torch.from_numpy(x)],
                       os.path.join(d, "model.onnx"), ["input_values"], ["last_hidden_state"], OPSET)
    return f"transformers Wav2Vec2Model ({n / 16000:g} s of 16 kHz audio)", [("input_values", x)]


def sam_model(cfgs):
    import transformers as T
    torch.manual_seed(common.WEIGHT_SEED)
    return init(T.SamModel(cfgs["sam"]))


def export_sam_encoder(d, cfgs):
    model = sam_model(cfgs)
    s = cfgs["sam"].vision_config.image_size
    x = common.imagenet_images(1, s, s, common.INPUT_SEED)
    common.onnx_export(Call(model, lambda m, px: m.vision_encoder(pixel_values=px).last_hidden_state),
                       [torch.from_numpy(x)], os.path.join(d, "model.onnx"), ["pixel_values"], ["image_embeddings"],
                       OPSET)
    return "transformers SamModel vision encoder (MobileSAM-like: ViT, windowed attention, neck)", [("pixel_values", x)]


class SamOnnxDecoder(nn.Module):
    """segment_anything's SamOnnxModel prompt path over transformers' SAM modules: coordinates
    shifted to pixel centres and divided by the image size in one division (a square image), the
    random Fourier features, each label's embedding added where the label matches, no mask prompt
    (the no-mask embedding everywhere), the 4 masks and IoU scores of the mask decoder."""

    def __init__(self, sam):
        super().__init__()
        self.sam = sam
        self.image_size = sam.config.prompt_encoder_config.image_size

    def forward(self, image_embeddings, point_coords, point_labels):
        pe = self.sam.shared_image_embedding
        prompt = self.sam.prompt_encoder
        coords = 2 * ((point_coords + 0.5) / self.image_size) - 1
        coords = 2 * math.pi * (coords @ pe.positional_embedding)
        emb = torch.cat([torch.sin(coords), torch.cos(coords)], -1)               # [1, N, C]
        labels = point_labels.unsqueeze(-1)
        emb = emb * (labels != -1) + prompt.not_a_point_embed.weight * (labels == -1)
        for i in range(2):
            emb = emb + prompt.point_embed[i].weight * (labels == i)
        h, w = prompt.image_embedding_size
        dense = prompt.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(1, -1, h, w)
        masks, iou = self.sam.mask_decoder(image_embeddings=image_embeddings,
                                           image_positional_embeddings=self.sam.get_image_wide_positional_embeddings(),
                                           sparse_prompt_embeddings=emb.unsqueeze(1),
                                           dense_prompt_embeddings=dense, multimask_output=True)
        return masks[:, 0], iou[:, 0]


def sam_prompt(cfgs):
    """The image embeddings of one image (the encoder's output), two foreground points and a padding
    point (label -1), as a user's click gives them."""
    model = sam_model(cfgs)
    s = cfgs["sam"].vision_config.image_size
    with torch.no_grad():
        emb = model.vision_encoder(torch.from_numpy(common.imagenet_images(1, s, s, common.INPUT_SEED))).last_hidden_state
    coords = np.array([[[0.3 * s, 0.4 * s], [0.6 * s, 0.55 * s], [0, 0]]], np.float32)
    return model, emb.numpy(), coords, np.array([[1, 1, -1]], np.float32)


def export_sam_decoder(d, cfgs):
    model, emb, coords, labels = sam_prompt(cfgs)
    common.onnx_export(SamOnnxDecoder(model), [torch.from_numpy(x) for x in (emb, coords, labels)],
                       os.path.join(d, "model.onnx"), ["image_embeddings", "point_coords", "point_labels"],
                       ["masks", "iou_predictions"], OPSET)
    return ("transformers SAM prompt encoder and mask decoder, SamOnnxModel's prompt path",
            [("image_embeddings", emb), ("point_coords", coords), ("point_labels", labels)])


def export_sam_decoder_hf(d, cfgs):
    model, emb, coords, labels = sam_prompt(cfgs)
    points, ids = coords[:, None, :2], labels[:, None, :2].astype(np.int64)  # transformers pads the points itself

    def decode(m, e, p, lab):
        out = m(image_embeddings=e, input_points=p, input_labels=lab, multimask_output=True)
        return out.pred_masks, out.iou_scores
    common.onnx_export(Call(model, decode), [torch.from_numpy(x) for x in (emb, points, ids)],
                       os.path.join(d, "model.onnx"), ["image_embeddings", "input_points", "input_labels"],
                       ["pred_masks", "iou_scores"], OPSET)
    return ("transformers SamModel forward on image embeddings and points",
            [("image_embeddings", emb), ("input_points", points), ("input_labels", ids)])


EXPORTERS = {
    "clip_vision": ("transformer", export_clip_vision),
    "clip_text": ("transformer", export_clip_text),
    "whisper_encoder": ("audio", export_whisper_encoder),
    "whisper_decoder": ("audio", export_whisper_decoder),
    "wav2vec2": ("audio", export_wav2vec2),
    "mobilesam_encoder": ("segment anything", export_sam_encoder),
    "mobilesam_decoder": ("segment anything", export_sam_decoder),
    "mobilesam_decoder_hf": ("segment anything", export_sam_decoder_hf),
}


def main():
    args = common.parse_args(__doc__.splitlines()[0], list(EXPORTERS))
    import transformers
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    cfgs = configs(args.size)

    def export_one(name, d):
        family, fn = EXPORTERS[name]
        source, inputs = fn(d, cfgs)
        common.write_model_dir(d, name, family, f"{source}, transformers {transformers.__version__}", inputs)
    return common.run_exports(args, export_one)


if __name__ == "__main__":
    sys.exit(main())
