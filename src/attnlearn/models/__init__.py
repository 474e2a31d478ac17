"""Model families: translation (Seq2Seq, Transformer), classification (Classifier), proxy (BagOfWords)."""

from .classifier import Classifier
from .proxy import BagOfWords
from .seq2seq import Seq2Seq
from .transformer import Transformer

__all__ = ["Classifier", "BagOfWords", "Seq2Seq", "Transformer"]
