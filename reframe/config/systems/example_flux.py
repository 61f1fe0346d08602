"""Example Flux cluster in the cloud (the Flux Operator's MiniCluster on Kubernetes): the
suite runs inside one ``flux alloc`` and every test is a ``flux run`` of it, as a cloud
team ran OSU (``flux run -N2 -n2 -o cpu-affinity=per-task``) on 128 small
nodes (c3-standard-4: 4 vCPUs, one socket, threads-per-core=1).

Start ReFrame inside the allocation: ``flux alloc -N 128 reframe -C
reframe/config/settings.py -c reframe/checks --system example-flux -r`` (steps of one
allocation, like ``srunalloc``: scheduler ``local``, launcher ``flux``, polled fast); inside
it the partition has the instance's nodes (``flux getattr size``), outside it ``num_nodes``. The
``flux`` launcher and its options are the record ``src/omb_suite/data/launchers/flux.yaml``.
Never run on a real Flux system: dry-run only (tests/test_example_systems.py).
"""

system = {
    'name': 'example-flux',
    'descr': 'Example Flux Operator MiniCluster: 128 x c3-standard-4 (4 vCPUs), one flux alloc',
    'hostnames': [r'^flux-sample-\d+$'],
    'modules_system': 'nomod',
    'partitions': [
        {
            'name': 'alloc',
            'descr': 'tests as flux run steps of the flux alloc ReFrame runs in',
            'scheduler': 'local',
            'launcher': 'flux',
            'max_jobs': 1,
            'time_limit': '30m',
            'processor': {
                'arch': 'sapphirerapids',
                'num_cpus': 4,
                'num_cpus_per_core': 1,
                'num_cpus_per_socket': 4,
                'num_sockets': 1,
            },
            'features': ['cpu'],
            'env_vars': [['OMPI_MCA_btl_tcp_if_include', 'eth0']],
            'extras': {'num_nodes': 128},
        },
    ],
}
