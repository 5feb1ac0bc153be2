"""ResNet-50 golden fixtures: a tiny torchvision ResNet of ResNet-50's topology (Bottleneck
blocks, v1.5 strides, projection shortcuts) with stages [2, 1, 1, 2], stem width 8 (so
inner widths 8, 16, 32, 64 and outputs 32 ... 256) and 10 classes, every parameter and
BatchNorm statistic randomised, in eval mode, run in float64 on B=3 images of 61×61 (odd,
so every stride-2 layer rounds).

Writes
  resnet50_tiny.safetensors      the weights, through weights/convert.py from a torchvision
                                 state dict (.pth), so the converter is exercised on one
  resnet50_tiny_activations.safetensors
                                 float32 NHWC tensors named by laptime's NVTX ranges:
                                   images                  [B, S, S, 3], the input
                                   conv1.out               stem: relu(bn1(conv1(images)))
                                   maxpool.out
                                   <block>.conv1.out       relu(bn1(conv1(x))), x the block's input
                                   <block>.conv2.out       relu(bn2(conv2(.)))
                                   <block>.downsample.out  bn(conv(x)), blocks with a projection only
                                   <block>.out             relu(bn3(conv3(.)) + shortcut): the block's
                                                           output, which is also laptime's conv3 range's
                                   avgpool.out             [B, C]
                                   logits                  [B, 10]
                                 A block's input is the previous block's output (maxpool.out for
                                 the first); metadata B and S.
"""
import pathlib
import subprocess
import sys
import tempfile

import torch
from safetensors.numpy import save_file
from torch import nn
from torchvision.models.resnet import Bottleneck, ResNet

B, S = 3, 61
LAYERS, WIDTH, CLASSES = (2, 1, 1, 2), 8, 10


class TinyResNet(ResNet):
    """torchvision's ResNet with the stem width (64 there) a parameter: stage s has inner width
    WIDTH·2^s and output 4·WIDTH·2^s, as weights/FORMAT.md describes. torchvision's own
    _make_layer builds the stages, so the blocks are its Bottleneck, downsample rule included."""

    def __init__(self, layers, width, num_classes):
        super().__init__(Bottleneck, list(layers), num_classes=num_classes)
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.layer1 = self._make_layer(Bottleneck, width, layers[0])
        self.layer2 = self._make_layer(Bottleneck, width * 2, layers[1], stride=2)
        self.layer3 = self._make_layer(Bottleneck, width * 4, layers[2], stride=2)
        self.layer4 = self._make_layer(Bottleneck, width * 8, layers[3], stride=2)
        self.fc = nn.Linear(width * 8 * Bottleneck.expansion, num_classes)


def randomise(model: nn.Module, gen: torch.Generator) -> None:
    """Convolutions kaiming-normal (fan_out), BatchNorm drawn rather than the identity
    (γ U(0.5, 1.5), β N(0, 0.1), mean N(0, 0.1), var U(0.5, 1.5)), fc U(±1/sqrt(in)): no
    parameter is a zero or a one, so a BatchNorm term the folding drops shows."""

    def uniform(t, lo, hi):
        t.copy_(lo + (hi - lo) * torch.rand(t.shape, generator=gen))

    def normal(t, std):
        t.copy_(std * torch.randn(t.shape, generator=gen))

    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                normal(m.weight, (2.0 / (m.out_channels * m.kernel_size[0] * m.kernel_size[1])) ** 0.5)
            elif isinstance(m, nn.BatchNorm2d):
                uniform(m.weight, 0.5, 1.5)
                normal(m.bias, 0.1)
                normal(m.running_mean, 0.1)
                uniform(m.running_var, 0.5, 1.5)
            elif isinstance(m, nn.Linear):
                bound = 1 / m.in_features ** 0.5
                uniform(m.weight, -bound, bound)
                uniform(m.bias, -bound, bound)


def nhwc(t: torch.Tensor) -> torch.Tensor:
    return t.permute(0, 2, 3, 1) if t.dim() == 4 else t


def make(out: pathlib.Path, repo: pathlib.Path) -> list:
    gen = torch.Generator().manual_seed(5050)
    model = TinyResNet(LAYERS, WIDTH, CLASSES).eval()
    randomise(model, gen)

    weights = out / "resnet50_tiny.safetensors"
    with tempfile.TemporaryDirectory() as tmp:
        pth = pathlib.Path(tmp) / "resnet_tiny.pth"
        torch.save(model.state_dict(), pth)
        subprocess.run([sys.executable, str(repo / "weights" / "convert.py"), "resnet50", "--input", str(pth),
                        "--image-size", str(S), "--output", str(weights)], check=True)

    model = model.double()
    record = {}

    def keep(name, fn=lambda y: y):
        def hook(module, args, output):
            record[name] = fn(output).detach().clone()
        return hook

    # The stem's ReLU is the model's own (blocks have theirs); it runs in place on bn1's output.
    model.relu.register_forward_hook(keep("conv1.out"))
    model.maxpool.register_forward_hook(keep("maxpool.out"))
    for s, stage in enumerate((model.layer1, model.layer2, model.layer3, model.layer4)):
        for b, blk in enumerate(stage):
            p = f"layer{s + 1}.{b}"
            # laptime fuses each BatchNorm's ReLU into its convolution; the block's ReLU is in place.
            blk.bn1.register_forward_hook(keep(f"{p}.conv1.out", torch.relu))
            blk.bn2.register_forward_hook(keep(f"{p}.conv2.out", torch.relu))
            if blk.downsample is not None:
                blk.downsample.register_forward_hook(keep(f"{p}.downsample.out"))
            blk.register_forward_hook(keep(f"{p}.out"))
    model.avgpool.register_forward_hook(keep("avgpool.out", lambda y: torch.flatten(y, 1)))

    images = torch.randn(B, 3, S, S, generator=gen)  # float32 draws: exact in the fixture
    with torch.no_grad():
        record["logits"] = model(images.double())
    record["images"] = images
    tensors = {k: nhwc(v).to(torch.float32).contiguous().numpy() for k, v in record.items()}
    acts = out / "resnet50_tiny_activations.safetensors"
    save_file(tensors, str(acts), metadata={"B": str(B), "S": str(S), "source": "tests/golden/golden_resnet50.py"})
    return [weights, acts]
