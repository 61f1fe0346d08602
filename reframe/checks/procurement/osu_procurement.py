"""Procurement mode: the OSU point-to-point runs of a procurement, exactly as its rules say.

    reframe -C reframe/config/settings.py -c reframe/checks --mode procurement -r
    omb-procurement perflogs/ --system <system>

See omb_suite.rfm.procurement_check and docs/gpu-and-procurement.md for the rules and scenarios.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.rfm import OsuProcurementBase
from omb_suite.rfm.procurement_check import SCENARIOS, SIZES


@rfm.simple_test
class OsuProcurement(OsuProcurementBase):
    """One procurement benchmark in one scenario; GPU scenarios run every pair asked for."""

    benchmark = parameter(list(SIZES))
    scenario = parameter(list(SCENARIOS))
