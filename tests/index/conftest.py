"""A served index's fixtures: the hashing backbone, following Redis quickly, with no bundled correction."""

from __future__ import annotations

import pytest

from app.backbones import build_backbone


@pytest.fixture
def settings(make_settings):
    """No bundled artifact (models_dir is empty), so `auto` starts uncorrected and follows Redis."""
    return make_settings(backbone="hashing", follow_interval=0.05, max_texts=256)


@pytest.fixture
def backbone(settings):
    return build_backbone(settings)
