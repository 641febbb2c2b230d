"""Corrections in pure numpy: streaming statistics, fitting methods, the versioned artifact and its application."""

from app.correction.artifact import CorrectionArtifact
from app.correction.methods import METHODS, fit_correction
from app.correction.pipeline import Correction
from app.correction.stats import CovarianceStats

__all__ = ["METHODS", "Correction", "CorrectionArtifact", "CovarianceStats", "fit_correction"]
