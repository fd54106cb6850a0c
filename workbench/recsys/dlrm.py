"""A DLRM-style click-through model (Naumov et al. 2019, ``facebookresearch/dlrm``) with a pluggable embedding.

    dense [B, D] --bottom MLP--> x [B, d]
    ids   [B, F] --embedding---> e [B, F, d]          (any module mapping per-feature ids to d-vectors)
    z = [x; e] [B, F+1, d];  dot interaction: the strictly lower triangle of z z^T -> [B, (F+1)F/2]
    top MLP([x, triangle]) -> logit [B]

The embedding is whatever module is passed (dense tables, chunked VHPI tables, hashed or mixed-dimension
baselines), so every method trains the same network around its table. :func:`evaluate` returns the AUC
(scikit-learn's ``roc_auc_score``) and the log-loss (scikit-learn's ``log_loss``) on held-out rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

__all__ = ["DLRM", "mlp", "evaluate", "predict"]


def mlp(sizes: Sequence[int], *, last_activation: bool) -> nn.Sequential:
    """Linear layers between consecutive ``sizes`` with ReLU between them (and after the last when asked)."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2 or last_activation:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    """DLRM with dot interaction (module docstring). ``embedding(ids [B, F]) -> [B, F, dim]``."""

    def __init__(
        self,
        *,
        num_dense: int,
        num_sparse: int,
        dim: int,
        embedding: nn.Module,
        bottom: Sequence[int] = (64,),
        top: Sequence[int] = (64,),
    ) -> None:
        super().__init__()
        self.embedding = embedding
        self.num_sparse = num_sparse
        self.bottom = mlp([max(num_dense, 1), *bottom, dim], last_activation=True)
        pairs = (num_sparse + 1) * num_sparse // 2
        self.top = mlp([dim + pairs, *top, 1], last_activation=False)
        rows, cols = torch.tril_indices(num_sparse + 1, num_sparse + 1, offset=-1)
        self.register_buffer("tri_rows", rows, persistent=False)
        self.register_buffer("tri_cols", cols, persistent=False)

    def forward(self, dense: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        if dense.shape[1] == 0:
            dense = torch.ones(dense.shape[0], 1, dtype=torch.float32)  # no dense features: a constant input
        x = self.bottom(dense)  # [B, d]
        e = self.embedding(ids)  # [B, F, d]
        z = torch.cat([x.unsqueeze(1), e], dim=1)  # [B, F+1, d]
        inter = torch.bmm(z, z.transpose(1, 2))  # [B, F+1, F+1]
        tri = inter[:, self.tri_rows, self.tri_cols]  # [B, (F+1)F/2]
        return self.top(torch.cat([x, tri], dim=1)).squeeze(1)  # [B]


@torch.no_grad()
def predict(model: nn.Module, dense: np.ndarray, ids: np.ndarray, *, batch: int = 8192) -> np.ndarray:
    """Click probabilities of every row (float64)."""
    out = []
    for start in range(0, len(ids), batch):
        logit = model(torch.from_numpy(dense[start : start + batch]), torch.from_numpy(ids[start : start + batch]))
        out.append(torch.sigmoid(logit.double()).numpy())
    return np.concatenate(out) if out else np.zeros(0)


def evaluate(label: np.ndarray, prob: np.ndarray) -> tuple[float, float]:
    """(AUC, log-loss) with scikit-learn; AUC is NaN when the labels hold one class only."""
    from sklearn.metrics import log_loss, roc_auc_score

    prob = np.clip(prob, 1e-7, 1 - 1e-7)
    auc = float(roc_auc_score(label, prob)) if 0 < label.sum() < label.size else float("nan")
    return auc, float(log_loss(label, prob, labels=[0, 1]))
