"""Counts a world model's parameters block by block: where SimPLe's stochastic model's ~90M go.

    python scripts/world_model_parameters.py [SET]     # default rlmb_base_stochastic_discrete

docs/simple.md ("Parameter count") sets the table beside tensor2tensor's code and the paper.
"""

import sys

import numpy as np

import rlkit  # noqa: F401  (TensorFlow starts quietly)
from rlkit.data_generators.make_env import frame_shape, pixel_values
from rlkit.hparams import create_hparams
from rlkit.models.registry import get_model

# A block: the model's attributes (of the frame model, or of the stochastic model around it).
FRAME_BLOCKS = {
    "input embedding (frames -> hidden_size)": ["embed"],
    "encoder: 6 convs 4x4 stride 2": ["encoder"],
    "middle: 2 convs 3x3 at the bottleneck": ["middle"],
    "decoder: 6 transposed convs 4x4 stride 2": ["decoder"],
    "action injections (bottleneck, decoder)": ["bottleneck_action"],
    "pixel head (256-way per channel)": ["pixel_head"],
    "reward head": ["reward_hidden", "reward_head"],
    "episode-end head": ["end_hidden", "end_head"],
    "recurrent state (conv GRU)": ["recurrent", "state_projection"],
}
LATENT_BLOCKS = {
    "posterior: embedding, action, 2 convs 8x8 stride 4": ["posterior_embed", "posterior_action", "posterior_convs"],
    "posterior: attention means, bits layer": ["posterior_means", "posterior_bits"],
    "prior: LSTM over 8-bit groups": ["prior_input", "prior_c", "prior_h", "prior_group_embedding", "prior_cell",
                                      "prior_logits"],
    "bits into the bottleneck (gate, shift)": ["bits_gate", "bits_shift"],
}


def count(layers):
    variables = []
    for layer in layers if isinstance(layers, (list, tuple)) else [layers]:
        if isinstance(layer, (list, tuple)):
            variables += [v for item in layer if item is not None for v in getattr(item, "trainable_variables", [])]
        elif layer is not None:
            variables += list(layer.trainable_variables)
    return sum(int(np.prod(v.shape)) for v in variables)


def main(set_name="rlmb_base_stochastic_discrete"):
    import tensorflow as tf

    hparams = create_hparams(set_name)
    shape, values = frame_shape(hparams), pixel_values(hparams)
    model = get_model(hparams.world_model.model)(hparams.world_model, shape, 6, values)
    history = tf.zeros((1, hparams.world_model.num_context_frames) + shape, tf.uint8)
    target, actions = tf.zeros((1,) + shape, tf.uint8), tf.constant([1])
    model.frame_model(history, actions, inject_latent=model._training_latent(history, target, actions, 0, []),
                      training=True)  # builds every layer
    frame = model.frame_model
    decoder_injections = sum(count([step[1]]) for step in frame.decoder)
    rows = [(name, sum(count(getattr(frame, a, None)) for a in attributes)) for name, attributes in FRAME_BLOCKS.items()]
    rows = [(name, n + decoder_injections if name.startswith("action") else
             n - decoder_injections if name.startswith("decoder") else n) for name, n in rows]
    rows += [(name, sum(count(getattr(model, a)) for a in attributes)) for name, attributes in LATENT_BLOCKS.items()]
    total = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    width = max(len(name) for name, _ in rows)
    print(f"{set_name}: world model {hparams.world_model.model}, frames {shape}")
    for name, n in rows:
        print(f"  {name:<{width}}  {n:>12,}")
    print(f"  {'layer norms and the rest':<{width}}  {total - sum(n for _, n in rows):>12,}")
    print(f"  {'total':<{width}}  {total:>12,}")


if __name__ == "__main__":
    main(*sys.argv[1:])
