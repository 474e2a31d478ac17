"""Model families: translation (Seq2Seq, Transformer), classification (Classifier), proxy (BagOfWords)."""

from attnlearn.models.classifier import Classifier
from attnlearn.models.proxy import BagOfWords
from attnlearn.models.seq2seq import Seq2Seq
from attnlearn.models.transformer import Transformer

__all__ = ["Classifier", "BagOfWords", "Seq2Seq", "Transformer"]
