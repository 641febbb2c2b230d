"""Corrections in pure numpy: streaming statistics, fitting methods and the versioned artifact."""

from app.correction.artifact import Correction, CorrectionArtifact
from app.correction.methods import METHODS, fit_correction
from app.correction.stats import CovarianceStats

__all__ = ["METHODS", "Correction", "CorrectionArtifact", "CovarianceStats", "fit_correction"]
