"""The NVIDIA GPUs of the host this runs on, as a ReFrame partition's ``devices`` entry.

The ``local`` system (``reframe/config/systems/local.py``) declares feature ``gpu`` and this
entry when the host has GPUs, the shape every GPU check reads from a partition
(docs/gpu-and-procurement.md), so the device-buffer and GPU procurement cases run on a GPU
workstation without a system file of its own. ``nvidia-smi
--query-gpu=compute_cap --format=csv,noheader`` prints one line per GPU (``9.0`` on an H100);
no ``nvidia-smi``, or one that fails (no driver loaded), means no GPUs. AMD GPUs are not
detected: ROCm's tools were never at hand to test against.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Any

QUERY = ('nvidia-smi', '--query-gpu=compute_cap', '--format=csv,noheader')


def devices_from(compute_caps: str) -> list[dict[str, Any]]:
    """``[{'type': 'gpu', 'arch': 'sm_90', 'num_devices': N}]`` from nvidia-smi's lines, or
    ``[]`` for none; a line that is no compute capability is an error (a driver message)."""
    caps = [line.strip() for line in compute_caps.splitlines() if line.strip()]
    if not caps:
        return []
    wrong = [c for c in caps if not re.fullmatch(r'\d+\.\d+', c)]
    if wrong:
        raise ValueError(f'{" ".join(QUERY)} printed {wrong[0]!r}, not a compute capability '
                         '(like 9.0); declare the GPUs in a system file of your own '
                         '(docs/systems.md)')
    # one arch per partition: a host mixing GPU models is named by its first GPU
    return [{'type': 'gpu', 'arch': 'sm_' + caps[0].replace('.', ''), 'num_devices': len(caps)}]


def detect() -> list[dict[str, Any]]:
    """This host's GPUs as a partition's ``devices`` (``[]`` without NVIDIA's driver)."""
    if shutil.which(QUERY[0]) is None:
        return []
    try:
        done = subprocess.run(QUERY, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    return devices_from(done.stdout) if done.returncode == 0 else []
