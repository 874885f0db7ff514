"""Figure 3: SimCLR on images (Section 5), with a generated data set of known latents.

- ``data``: CIFAR-10 (torchvision) and the generated ``shapes`` sets (``shapes``,
  ``shapes_narrow_hue``, ``shapes_fixed_background``);
- ``scenes``: the generated ``scenes`` set (textured objects in cluttered, lit scenes);
- ``augment``: the three augmentation regimes, batched on the tensor;
- ``encoders``: ResNet-18, ViT and MLP image encoders;
- ``simclr``: the SimCLR config, budgets and training;
- ``probe``: the linear probe and the latent regression.

The names of the choices live here, so that the ``cldiv`` command lists them without importing torch.
"""

#: Augmentation regimes: All, Crop only, All w/o crop.
REGIMES = ("all", "crop", "no_crop")
#: Image encoders, most inductive bias first.
IMAGE_ENCODERS = ("resnet18", "vit", "mlp")
#: Data sets: CIFAR-10 (the paper's), and the generated ones: shapes, shapes with hues that the
#: colour jitter spans, the same on one background grey level (the chapter's headline set),
#: cluttered scenes.
GENERATED_DATASETS = ("shapes", "shapes_narrow_hue", "shapes_fixed_background", "scenes")
DATASETS = ("cifar10", *GENERATED_DATASETS)
#: The generated set the cifar10 chapter and the scorecard show when CIFAR-10 is absent.
HEADLINE_DATASET = "shapes_fixed_background"
