"""NAPA (Liang et al., arXiv 2208.01215): variational native-pulse ansatz for VQE on a device's transmons."""
