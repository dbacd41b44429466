"""Datasets: memlab's folder format, the synthetic generator, LoCoMo, BEAM, LongMemEval and
RealMem loaders."""

from __future__ import annotations

from memlab.datasets.base import Dataset, load_folder
from memlab.datasets.beam import BEAM_CATEGORIES, beam_default_path, load_beam
from memlab.datasets.locomo import LOCOMO_CATEGORIES, load_locomo, locomo_default_path
from memlab.datasets.longmemeval import load_longmemeval
from memlab.datasets.realmem import load_realmem, realmem_default_path
from memlab.datasets.synthetic import PHENOMENA, SynthConfig, generate, load_negatives

__all__ = [
    "BEAM_CATEGORIES",
    "LOCOMO_CATEGORIES",
    "PHENOMENA",
    "Dataset",
    "SynthConfig",
    "beam_default_path",
    "generate",
    "load_beam",
    "load_folder",
    "load_locomo",
    "load_longmemeval",
    "load_negatives",
    "load_realmem",
    "locomo_default_path",
    "realmem_default_path",
]
