"""Test-only system: this machine with a deliberately wrong binding.

Both ranks of every placement are pinned to CPU 0 (the trap seen on the test cluster,
where two busy-polling ranks share one core and latencies grow from 0.2 us to 4 ms).
The placement probe must catch it. It keeps the old name of ``launcher_overrides``
(``placement_options``) on purpose: still read, with a warning naming the new key.
"""

from reframe.utility.cpuinfo import cpuinfo

_SAME_CORE = ['--cpu-set', '0', '--bind-to', 'core', '--oversubscribe']

system = {
    'name': 'trap',
    'descr': 'local machine, both ranks bound to CPU 0 on purpose',
    'hostnames': ['^never-matches$'],
    'modules_system': 'nomod',
    'partitions': [{
        'name': 'default',
        'scheduler': 'local',
        'launcher': 'mpirun',
        'processor': cpuinfo(),
        'env_vars': [['OMPI_ALLOW_RUN_AS_ROOT', '1'], ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1']],
        'extras': {'num_nodes': 1,
                   'placement_options': {'ompi': {'intra_socket': _SAME_CORE},
                                         'hydra': {'intra_socket': ['-bind-to', 'user:0,0']}}},
    }],
}
