"""The zoo's models beyond torchvision: timm architectures, Ultralytics YOLO detect / segment /
pose / classify, and two small non-vision encoders (a BERT-style text encoder and a
wav2vec-style audio encoder), each exported to ONNX (opset 17, random weights, no download).

Runs in the bench venv (bench/python_env.sh), which sees Debian's torch; timm and ultralytics
come from PyPI (`BUILD/bench-venv/bin/pip install timm huggingface_hub safetensors pyyaml
ultralytics`). Never a dependency of the library.

  export(name, path)  ->  writes path (raises ImportError when timm / ultralytics is missing)
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))

# timm: one or two per family, at the sizes an edge device runs.
TIMM = [
    # CNNs and mobile nets
    "resnet18d", "resnet26d", "seresnext26d_32x4d", "ecaresnet26t", "resnest14d",
    "res2net50_14w_8s", "skresnet18", "regnetx_002", "regnety_002", "regnetz_b16",
    "efficientnet_lite0", "tf_efficientnet_lite0", "mobilenetv2_050", "mobilenetv3_small_100",
    "mobilenetv4_conv_small", "mobileone_s0", "ghostnet_100", "hardcorenas_a", "fbnetc_100",
    "lcnet_050", "tinynet_a", "rexnet_100", "mixnet_s", "dla34", "ese_vovnet19b_dw",
    "cspresnet50", "cspdarknet53", "hrnet_w18_small", "selecsls42b", "dpn48b", "gernet_s",
    "nf_resnet26", "nf_regnet_b0", "repvgg_a0", "hgnetv2_b0", "inception_v4", "xception41",
    "convnext_atto", "convnextv2_atto",
    # vision transformers, hybrids and MLPs
    "vit_tiny_patch16_224", "vit_small_patch16_224", "deit_tiny_patch16_224",
    "eva02_tiny_patch14_224", "pit_ti_224", "xcit_nano_12_p16_224", "cait_xxs24_224",
    "convit_tiny", "crossvit_tiny_240", "visformer_tiny", "coat_lite_tiny", "levit_128s",
    "efficientformer_l1", "efficientformerv2_s0", "edgenext_xx_small", "mobilevit_xxs",
    "mobilevitv2_050", "fastvit_t8", "tiny_vit_5m_224", "efficientvit_b0", "efficientvit_m0",
    "coatnet_nano_rw_224", "maxvit_nano_rw_256", "gcvit_xxtiny", "botnet26t_256",
    "poolformer_s12", "resmlp_12_224", "mixer_s16_224",
]

# Ultralytics, built from their yaml with random weights.
YOLO = ["yolov8n", "yolov8n-seg", "yolov8n-pose", "yolov8n-cls", "yolo11n", "yolo11n-seg",
        "yolo11n-pose", "yolov5nu"]

# Defined below: not vision.
CUSTOM = ["text_encoder", "audio_encoder"]

YOLO_SIZE = 320
TEXT_VOCAB = 1000


def export(name: str, path: str) -> None:
    import torch
    torch.manual_seed(0)
    if name in TIMM:
        model, x = _timm(name)
    elif name in YOLO:
        model, x = yolo_model(name)
    elif name == "text_encoder":
        model, x = TextEncoder().eval(), torch.randint(0, TEXT_VOCAB, (1, 64))
    elif name == "audio_encoder":
        model, x = AudioEncoder().eval(), torch.randn(1, 16000)
    else:
        raise ValueError(f"unknown zoo model {name}")
    import export_torchvision  # noqa: E402  (scripts/: BatchNorm statistics made non-trivial)
    export_torchvision.randomize(model, seed=0)
    outputs = ["output", "protos"] if name.endswith("-seg") else ["output"]
    dynamic = {"input": {0: "N"}, **{o: {0: "N"} for o in outputs}}
    with torch.no_grad():
        model(x)
    torch.onnx.export(model, (x,), path, opset_version=17, input_names=["input"],
                      output_names=outputs, dynamic_axes=None if name in YOLO else dynamic)


def _timm(name: str):
    import timm
    import torch
    model = timm.create_model(name, pretrained=False).eval()
    size = model.pretrained_cfg.get("input_size", (3, 224, 224))
    return model, torch.randn(1, *size)


def yolo_model(name: str):
    """An Ultralytics model from its yaml (random weights) set up as its ONNX exporter sets
    it (one tensor per head), and a [1, 3, YOLO_SIZE, YOLO_SIZE] example input."""
    import torch
    from ultralytics import YOLO as Yolo
    model = Yolo(f"{name}.yaml").model.eval()
    for m in model.modules():  # the exporter's settings: one tensor per head
        if hasattr(m, "export"):
            m.export = True
        if hasattr(m, "format"):
            m.format = "onnx"
    return model, torch.randn(1, 3, YOLO_SIZE, YOLO_SIZE)


def _attention_block(dim: int, heads: int):
    """Post-LN transformer layer written out (no fused attention paths, so any torch exports it)."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            self.norm1 = nn.LayerNorm(dim)
            self.ffn = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
            self.norm2 = nn.LayerNorm(dim)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, c // self.heads).permute(
                2, 0, 3, 1, 4)
            attn = torch.softmax(q @ k.transpose(-2, -1) * (c // self.heads) ** -0.5, dim=-1)
            y = (attn @ v).transpose(1, 2).reshape(b, t, c)
            x = self.norm1(x + self.proj(y))
            return self.norm2(x + self.ffn(x))

    return Block()


def _encoder_classes():
    import torch
    from torch import nn

    class Text(nn.Module):
        """BERT-style: token + position embeddings, two encoder layers, mean pooling."""

        def __init__(self, dim: int = 128, seq: int = 64) -> None:
            super().__init__()
            self.tokens = nn.Embedding(TEXT_VOCAB, dim)
            self.positions = nn.Parameter(0.02 * torch.randn(1, seq, dim))
            self.norm = nn.LayerNorm(dim)
            self.layers = nn.Sequential(_attention_block(dim, 4), _attention_block(dim, 4))

        def forward(self, ids):
            return self.layers(self.norm(self.tokens(ids) + self.positions)).mean(1)

    class Audio(nn.Module):
        """wav2vec-style: strided Conv1d feature extractor, two encoder layers, mean pooling."""

        def __init__(self, dim: int = 128) -> None:
            super().__init__()
            layers, channels = [], 1
            for kernel, stride in [(10, 5), (3, 2), (3, 2), (3, 2), (2, 2)]:
                layers += [nn.Conv1d(channels, dim, kernel, stride), nn.GELU()]
                channels = dim
            self.features = nn.Sequential(*layers)
            self.norm = nn.LayerNorm(dim)
            self.layers = nn.Sequential(_attention_block(dim, 4), _attention_block(dim, 4))

        def forward(self, wave):
            x = self.features(wave.unsqueeze(1)).transpose(1, 2)
            return self.layers(self.norm(x)).mean(1)

    return Text, Audio


def TextEncoder():  # noqa: N802  (a class factory: torch is imported lazily)
    return _encoder_classes()[0]()


def AudioEncoder():  # noqa: N802
    return _encoder_classes()[1]()
