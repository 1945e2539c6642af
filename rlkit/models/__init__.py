"""Networks and models, registered by name and chosen by hparams."""
