"""Model families: translation (Seq2Seq), classification (Classifier), proxy (BagOfWords)."""

from .classifier import Classifier
from .proxy import BagOfWords
from .seq2seq import Seq2Seq

__all__ = ["Classifier", "BagOfWords", "Seq2Seq"]
