"""Example cloud cluster of small nodes (4 vCPUs, one socket, gVNIC), Slurm on top, as
in a cloud team's runs of the whole suite at 4 to 128 nodes.

Select with ``--system example-cloud`` for a dry run. Small nodes have one socket, so
``inter_socket`` placements are skipped there; collectives scale over node counts.
"""

system = {
    'name': 'example-cloud',
    'descr': 'Example cloud cluster: 130 x c3-standard-4 (4 vCPUs), compact placement',
    'hostnames': [r'^osu-cluster-login\d*$'],
    'modules_system': 'nomod',
    'partitions': [
        {
            'name': 'c3',
            'descr': 'c3-standard-4 nodes, ranks started by the MPI library\'s mpirun',
            'scheduler': 'slurm',
            'launcher': 'mpirun',
            'access': ['--partition=c3'],
            'max_jobs': 2,
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
