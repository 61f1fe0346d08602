"""``local``: any Linux machine, ranks started with ``mpirun`` on this host.

The processor topology (sockets, cores, NUMA nodes) is detected when the configuration
is loaded, with ReFrame's own detection; nothing is typed in. So are NVIDIA GPUs
(``nvidia-smi``): where there are some, the partition has feature ``gpu`` and their
``devices`` entry, and the device-buffer and GPU procurement cases run here.
"""

from reframe.utility.cpuinfo import cpuinfo

from omb_suite.machine import host_gpus
from omb_suite.setup.environs import detected_modules_system

_GPUS = host_gpus.detect()

system = {
    'name': 'local',
    'descr': 'This machine (detected topology), local scheduler, mpirun',
    'hostnames': ['.*'],
    # lmod / envmod when this shell has that module command (environments from modules
    # need one: omb-setup --module, docs/systems.md), else nomod
    'modules_system': detected_modules_system(),
    'partitions': [
        {
            'name': 'default',
            'descr': 'All cores of this machine',
            'scheduler': 'local',
            'launcher': 'mpirun',
            'processor': cpuinfo(),
            'features': ['cpu', *(['gpu'] if _GPUS else [])],
            'devices': _GPUS,
            'max_jobs': 1,
            'env_vars': [
                ['OMPI_ALLOW_RUN_AS_ROOT', '1'],
                ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1'],
            ],
            # a workstation shared with other work: limits from the prediction (once the
            # perflogs give one) are generous (docs/systems.md, "How limits are set")
            'extras': {'num_nodes': 1, 'time_limits': {'multiple': 10, 'floor_s': 180}},
        }
    ],
}
