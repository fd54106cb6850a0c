"""Headless runner of the ``devices`` technique: ``workbench run devices [--mode fidelity ...] --json``.

``mode="list"`` prints ``{"devices": [{"name", "num_qubits", "two_qubit_gate", "basis_gates", "median_*",
"coupling_map", ...}, ...]}`` for every device snapshot of qiskit-ibm-runtime; ``mode="fidelity"`` adds
``"fidelity"``: GHZ/QFT state and Hellinger fidelity vs width and vs depth on one device, from our simulator,
qiskit-aer, or both side by side (with their largest difference).
"""

from __future__ import annotations

from typing import Any

from workbench.quantum.devices.config import DevicesConfig
from workbench.quantum.calibration import device_summary, list_devices, load_calibration
from workbench.registry import Technique


def _sweeps(config: DevicesConfig, engine: str) -> dict[str, list[dict[str, Any]]]:
    from workbench.quantum.devices.study import fidelity_points

    common = dict(device=config.device, family=config.family, noise_model=config.noise_model,
                  scale=config.noise_scale, engine=engine, seed=config.seed)
    by_width = fidelity_points(widths=range(2, config.width + 1), depths=[config.depth], **common)
    by_depth = fidelity_points(widths=[config.width], depths=range(1, config.depth + 1), **common)
    return {"by_width": [p.as_dict() for p in by_width], "by_depth": [p.as_dict() for p in by_depth]}


def run(config: DevicesConfig) -> dict[str, Any]:
    """The JSON object ``workbench run devices`` prints (see the module docstring)."""
    if config.mode == "list":
        if config.device == "all":
            devices = list_devices(min_qubits=config.min_qubits, max_qubits=config.max_qubits,
                                   coupling=config.coupling)
        else:
            devices = [device_summary(load_calibration(config.device), coupling=config.coupling)]
        return {"technique": "devices", "mode": "list", "count": len(devices), "devices": devices}
    engines = ("ours", "aer") if config.engine == "both" else (config.engine,)
    sweeps = {engine: _sweeps(config, engine) for engine in engines}
    fidelity: dict[str, Any] = {"family": config.family, "noise_model": config.noise_model,
                                "noise_scale": config.noise_scale, "width": config.width, "depth": config.depth,
                                **sweeps[engines[0]]}
    if len(engines) == 2:
        fidelity["aer"] = sweeps["aer"]
        fidelity["max_abs_diff_vs_aer"] = max(
            abs(a[key] - b[key]) for part in ("by_width", "by_depth")
            for a, b in zip(sweeps["ours"][part], sweeps["aer"][part]) for key in ("state_fidelity", "hellinger_fidelity"))
    return {"technique": "devices", "mode": "fidelity", "engine": config.engine,
            "devices": [device_summary(load_calibration(config.device), coupling=config.coupling)],
            "fidelity": fidelity}


def _num(x: Any, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def format_table(result: dict[str, Any]) -> str:
    """Devices as a table (list mode), or the fidelity sweeps (fidelity mode)."""
    lines = [f"{'device':<20}{'qubits':>7}{'2q gate':>8}{'T1 us':>8}{'T2 us':>8}{'err 1q':>10}{'err 2q':>10}"
             f"{'readout':>9}  calibrated"]
    for d in result["devices"]:
        lines.append(f"{d['name']:<20}{d['num_qubits']:>7}{d['two_qubit_gate'] or '-':>8}"
                     f"{_num(d['median_t1_us'], '.0f'):>8}{_num(d['median_t2_us'], '.0f'):>8}"
                     f"{_num(d['median_error_1q'], '.2e'):>10}{_num(d['median_error_2q'], '.2e'):>10}"
                     f"{_num(d['median_readout_error'], '.3f'):>9}  {d['calibration_date'][:10]}")
    if result["mode"] == "fidelity":
        f = result["fidelity"]
        lines += ["", f"{f['family']} on {result['devices'][0]['name']}, noise {f['noise_model']} x{f['noise_scale']:g} "
                      f"({result['engine']})",
                  f"{'width':>6}{'depth':>6}{'gates':>7}{'2q':>5}{'state F':>10}{'Hellinger F':>13}"]
        for part in ("by_width", "by_depth"):
            for p in f[part]:
                lines.append(f"{p['width']:>6}{p['depth']:>6}{p['num_gates']:>7}{p['two_qubit_gates']:>5}"
                             f"{p['state_fidelity']:>10.4f}{p['hellinger_fidelity']:>13.4f}")
        if "max_abs_diff_vs_aer" in f:
            lines.append(f"largest |ours - aer| over all fidelities: {f['max_abs_diff_vs_aer']:.2e}")
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="devices",
    summary="real device noise snapshots (T1/T2, gate and readout errors, coupling maps) and fidelity sweeps",
    config=DevicesConfig,
    run=run,
    format_table=format_table,
    panel="widgets.quantum.devices:NoisePanel",
    notebook="notebooks/quantum/devices.ipynb",
)
