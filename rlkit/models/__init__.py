"""Networks and models, registered by name and chosen by hparams.

The registry (rlkit.models.registry) imports the modules that register rlkit's models at its
first lookup.
"""
