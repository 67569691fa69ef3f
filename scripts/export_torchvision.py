#!/usr/bin/python3
"""Exports torchvision reference architectures to ONNX (random weights, no download).

Used by tests (importer coverage on real PyTorch exports) and benchmarks; never a
dependency of the library. Needs Debian's python3-torchvision (run with /usr/bin/python3).

  /usr/bin/python3 scripts/export_torchvision.py --out build/zoo [--opsets 13 17] [--models resnet18 ...]

Weights are torchvision's random initialisation, then made non-degenerate with a fixed seed:
BatchNorm statistics and affine parameters are drawn around their identity values and
parameters torchvision initialises to all zeros (e.g. vit_b_16's head) get small random values,
so that outputs are non-trivial and numerical comparisons (bench/check_equivalence.py) mean
something.

Writes OUT/<model>_op<opset>.onnx and OUT/manifest.json: per file the input shape, the
output shape PyTorch computed, and the sorted list of ONNX op types in the export; and per
model the random input and PyTorch's output for it (OUT/<model>.input.npy, .output.npy), which
tests/bench/zoo_reference_test.py compares braid's output with.
"""
import argparse
import json
import os
import sys
import time

MODELS = [
    "resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
    "squeezenet1_1", "efficientnet_b0", "shufflenet_v2_x1_0", "googlenet", "densenet121",
    "vit_b_16",
    # segmentation: bilinear Resize to the input's size from Shape -> Concat chains
    "lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large",
]

# The broad zoo (bench/zoo.py): every torchvision architecture family at the sizes an edge
# device runs; the largest variants of each family (vit_h_14, regnet_y_128gf, ...) are left out
# for export and CI time, not because braid lacks anything they use.
ZOO = MODELS + [
    "alexnet", "convnext_tiny", "efficientnet_b1", "efficientnet_b2", "efficientnet_v2_s",
    "inception_v3", "maxvit_t", "mnasnet0_5", "mnasnet1_0", "regnet_x_400mf", "regnet_x_800mf",
    "regnet_x_1_6gf", "regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf", "resnet34",
    "resnext50_32x4d", "shufflenet_v2_x0_5", "shufflenet_v2_x1_5", "squeezenet1_0", "swin_t",
    "vit_b_32", "wide_resnet50_2", "densenet169", "mobilenet_v3_large",
    "fcn_resnet50", "deeplabv3_resnet50",
]
ZOO = list(dict.fromkeys(ZOO))
# swin_v2_t is not in ZOO: this torch's exporter stops on aten::zero at opset 17.


def build(name):
    import torch
    import torchvision
    kwargs = {"weights": None}
    if name in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=True)
    if name.startswith(("lraspp", "deeplabv3", "fcn_")):
        kwargs["weights_backbone"] = None
        segmenter = getattr(torchvision.models.segmentation, name)(**kwargs).eval()

        class Out(torch.nn.Module):
            """The segmentation models return {"out": ...}: export the tensor."""

            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                return self.inner(x)["out"]

        return Out(segmenter).eval()
    return getattr(torchvision.models, name)(**kwargs).eval()


def randomize(model, seed):
    """Non-degenerate random parameters (see the module docstring)."""
    import torch
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                n = m.num_features
                m.weight.copy_(0.5 + torch.rand(n, generator=gen))
                m.bias.copy_(0.2 * torch.rand(n, generator=gen) - 0.1)
                m.running_mean.copy_(0.2 * torch.rand(n, generator=gen) - 0.1)
                m.running_var.copy_(0.5 + torch.rand(n, generator=gen))
        for p in model.parameters():
            if p.numel() > 1 and torch.count_nonzero(p) == 0:
                p.copy_(0.02 * torch.randn(p.shape, generator=gen))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--opsets", type=int, nargs="+", default=[13, 17])
    parser.add_argument("--models", nargs="+", default=MODELS, choices=ZOO)
    parser.add_argument("--static-batch", action="store_true",
                        help="export batch 1 as a fixed dimension (default: symbolic 'N')")
    args = parser.parse_args()

    import numpy as np
    import torch
    import onnx_ops  # noqa: F401  (sibling helper, see below)

    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    torch.manual_seed(0)
    total = len(args.models) * len(args.opsets)
    done = 0
    for name in args.models:
        model = build(name)
        randomize(model, seed=0)
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            y = model(x)
        arrays = {kind: os.path.join(args.out, f"{name}.{kind}.npy") for kind in ("input", "output")}
        np.save(arrays["input"], x.numpy())
        np.save(arrays["output"], y.numpy())
        for opset in args.opsets:
            done += 1
            path = os.path.join(args.out, f"{name}_op{opset}.onnx")
            start = time.time()
            dynamic = None if args.static_batch else {"input": {0: "N"}, "output": {0: "N"}}
            torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"],
                              output_names=["output"], dynamic_axes=dynamic,
                              do_constant_folding=True)
            manifest[os.path.basename(path)] = {
                "model": name,
                "opset": opset,
                "input_shape": list(x.shape),
                "output_shape": list(y.shape),
                "ops": onnx_ops.op_types(path),
                "input_npy": os.path.basename(arrays["input"]),
                "output_npy": os.path.basename(arrays["output"]),
            }
            print(f"[{done}/{total}] {os.path.basename(path)} "
                  f"({time.time() - start:.1f}s)", file=sys.stderr, flush=True)
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
