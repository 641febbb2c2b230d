"""Training the flow (BERT-flow, Li et al. 2020) by maximum likelihood, in torch on the CPU, offline.

It starts from the corpus's whitening, the maximum-likelihood linear flow, and early stopping counts
that start, so the held-out likelihood never ends below it. The trained weights are exported to
`app.correction.flow.Flow`, which applies them in numpy.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from app.correction.flow import SCALE_BOUND, Flow, FlowBlock

CLIP_FACTOR = 4.0  # inputs are clipped at this many times the corpus's largest absolute value
WHITEN_FLOOR = 1e-6  # variances below this share of the largest are raised to it before whitening


@dataclass(frozen=True)
class FlowTraining:
    """How a flow is trained; the defaults are what `--method flow` uses."""

    blocks: int = 4
    hidden: int = 256
    lr: float = 1e-5  # on sentence vectors, faster rates raised training likelihood but cut STS Spearman
    batch: int = 256
    max_epochs: int = 50  # the usual end when early stopping does not come first: the same flow on any machine
    max_seconds: float = 600.0  # a guard for large corpora on slow machines
    patience: int = 5  # epochs without a better held-out likelihood before stopping
    holdout: float = 0.1
    whiten: bool = True  # start from the corpus's whitening (the linear flow's maximum-likelihood solution)
    seed: int = 0


class _Block(nn.Module):
    net: nn.Sequential

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.log_scale = nn.Parameter(torch.zeros(dim))
        q, _ = torch.linalg.qr(torch.randn(dim, dim))
        self.weight = nn.Parameter(q)  # starts orthogonal: invertible, log|det| = 0
        half = dim // 2
        self.net = nn.Sequential(
            nn.Linear(half, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 2 * (dim - half)),
        )
        last = cast(nn.Linear, self.net[-1])
        nn.init.zeros_(last.weight)  # each coupling starts as the identity
        nn.init.zeros_(last.bias)

    def init_actnorm(self, x: torch.Tensor) -> None:
        """Data-dependent start: unit variance, zero mean per dim on the first batch (Glow)."""
        with torch.no_grad():
            self.loc.copy_(-x.mean(0))
            self.log_scale.copy_(-torch.log(x.std(0) + 1e-6))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = ((x + self.loc) * torch.exp(self.log_scale)) @ self.weight.T
        logdet = self.log_scale.sum() + torch.linalg.slogdet(self.weight)[1]
        half = y.shape[1] // 2
        first, second = y[:, :half], y[:, half:]
        out = self.net(first)
        s = SCALE_BOUND * torch.tanh(out[:, : second.shape[1]])
        t = out[:, second.shape[1] :]
        return torch.cat([first, second * torch.exp(s) + t], dim=1), logdet + s.sum(1)


class _Flow(nn.Module):
    mean: torch.Tensor  # buffers, registered by name
    basis: torch.Tensor

    def __init__(self, dim: int, blocks: int, hidden: int):
        super().__init__()
        self.blocks = nn.ModuleList(_Block(dim, hidden) for _ in range(blocks))
        self.register_buffer("mean", torch.zeros(dim))  # a fixed first stage, (x - mean) @ basis
        self.register_buffer("basis", torch.eye(dim))

    def log_likelihood(self, x: torch.Tensor) -> torch.Tensor:
        """Mean log p(x) per vector, in nats per dimension."""
        logdet = torch.zeros(x.shape[0]) + torch.linalg.slogdet(self.basis)[1]
        z = self.whiten(x)
        for block in self.steps():
            z, ld = block(z)
            logdet = logdet + ld
        log_pz = -0.5 * (z**2).sum(1) - 0.5 * z.shape[1] * math.log(2 * math.pi)
        mean: torch.Tensor = (log_pz + logdet).mean() / x.shape[1]
        return mean

    def steps(self) -> list[_Block]:
        """The coupling blocks, in order (a ModuleList holds them as modules)."""
        return [cast(_Block, block) for block in self.blocks]

    def init_from(self, x: torch.Tensor, *, whiten: bool = True) -> None:
        """Start as the corpus's whitening: a fixed (x - mean) U S^-1/2, then blocks that begin near the identity."""
        with torch.no_grad():
            mean = x.mean(0)
            s, u = torch.linalg.eigh(torch.cov((x - mean).T.double()))
            s = s.clamp(min=float(s.max()) * WHITEN_FLOOR)
            if whiten:
                self.mean.copy_(mean)
                self.basis.copy_(u / s.sqrt())
            z = self.whiten(x)
            for block in self.steps():
                block.init_actnorm(z)
                z, _ = block(z)

    def whiten(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) @ self.basis


def train_flow(
    vectors: np.ndarray, config: FlowTraining = FlowTraining(), *, progress: bool = True
) -> tuple[Flow, list[float]]:
    """Fit a flow to `vectors`; returns it and the held-out log-likelihood per epoch from 0 (nats per dim)."""
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    x = np.asarray(vectors, dtype=np.float32)
    order = rng.permutation(len(x))
    cut = max(1, int(len(x) * config.holdout))
    held, train = torch.from_numpy(x[order[:cut]]), torch.from_numpy(x[order[cut:]])
    model = _Flow(x.shape[1], config.blocks, config.hidden)
    model.init_from(train, whiten=config.whiten)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    history = [_held_out(model, held)]  # epoch 0: the starting point can win, so training never makes it worse
    best, best_state, stale = history[0], copy.deepcopy(model.state_dict()), 0
    started = time.monotonic()
    with tqdm(range(config.max_epochs), desc="flow", unit="epoch", disable=not progress, leave=False) as bar:
        for _ in bar:
            model.train()
            for idx in torch.randperm(len(train)).split(config.batch):
                loss = -model.log_likelihood(train[idx])
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 10.0)
                optimizer.step()
            history.append(_held_out(model, held))
            bar.set_postfix(heldout_ll=f"{history[-1]:.4f}")
            if history[-1] > best + 1e-4:
                best, best_state, stale = history[-1], copy.deepcopy(model.state_dict()), 0
            else:
                stale += 1
            if stale >= config.patience or time.monotonic() - started > config.max_seconds:
                break
    model.load_state_dict(best_state)
    return _export(model, clip=CLIP_FACTOR * float(np.abs(x).max())), history


def _held_out(model: _Flow, held: torch.Tensor) -> float:
    model.eval()
    with torch.no_grad():
        score = float(model.log_likelihood(held))
    return score if math.isfinite(score) else -math.inf


def _export(model: _Flow, *, clip: float) -> Flow:
    def arr(t: torch.Tensor) -> np.ndarray:  # float32, as trained: the artifact is half the size of float64's
        return t.detach().float().numpy().copy()

    blocks = []
    for b in model.steps():
        layers = [cast(nn.Linear, b.net[i]) for i in (0, 2, 4)]
        net = tuple(a for layer in layers for a in (arr(layer.weight).T, arr(layer.bias)))
        blocks.append(FlowBlock(arr(b.loc), arr(b.log_scale), arr(b.weight), net))
    return Flow(arr(model.mean), arr(model.basis), tuple(blocks), clip)
