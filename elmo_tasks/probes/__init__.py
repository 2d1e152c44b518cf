"""Intrinsic probes of a biLM's layers (Peters et al. 2018, section 5.3): POS tagging with a
linear classifier on one frozen layer, and word sense disambiguation by 1-nearest-neighbour
over sense centroids. Plain PyTorch/numpy, no AllenNLP import."""
