from memlab.datasets.base import Dataset, load_folder

__all__ = ['Dataset', 'load_folder']
