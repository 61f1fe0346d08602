"""ReFrame configuration of a Slurm cluster whose MPI and OSU come from Lmod modules, with
everything the OMB suite reads (docs/howto-own-config.md explains each part).

    reframe -C slurm_lmod_site.py -c <checkout>/reframe/checks --system mycluster:batch -r

Copy it, then change the names, the processor, the node count and the module names to your
cluster's. tests/test_site_example.py dry-runs this very file.
"""

from omb_suite import perflog_schema
from omb_suite.launch import launchers

# Adds the launchers ReFrame lacks (`flux`, `jsrun`, `pals`) to ReFrame's registry; needed
# before any partition names one of them (here: `flux`).
launchers.register()

#: What one node has: ReFrame cannot see a compute node from the login node. Without it the
#: suite assumes 2 CPUs and 1 socket, and says so. `reframe --detect-host-topology` on a
#: compute node prints these numbers.
PROCESSOR = {'num_cpus': 128, 'num_cpus_per_core': 1, 'num_sockets': 2,
             'num_cpus_per_socket': 64}

#: Nodes of the partition (the largest collective scale and the all-node start-up run on
#: all of them); srun's `--mpi` plugin per MPI family (`srun --mpi=list` shows yours).
EXTRAS = {'num_nodes': 64, 'srun_mpi': {'openmpi': 'pmix', 'mpich': 'pmi2'}}

site_configuration = {
    'systems': [
        {
            'name': 'mycluster',
            'descr': 'Slurm cluster, MPI and OSU from Lmod modules',
            'hostnames': [r'^login\d+$'],
            'modules_system': 'lmod',
            'partitions': [
                {
                    # one Slurm job per test
                    'name': 'batch',
                    'scheduler': 'slurm',
                    'launcher': 'srun',
                    'access': ['--partition=batch', '--exclusive'],
                    'max_jobs': 8,
                    'time_limit': '10m',
                    'processor': PROCESSOR,
                    'extras': EXTRAS,
                    'environs': ['openmpi', 'mpich'],
                },
                {
                    # every test a step of the allocation ReFrame runs in:
                    #   salloc -N 4 --exclusive -p batch reframe ... --system mycluster:alloc
                    # (its node count is the allocation's)
                    'name': 'alloc',
                    'scheduler': 'local',
                    'launcher': 'srunalloc',
                    'max_jobs': 1,
                    'time_limit': '10m',
                    'processor': PROCESSOR,
                    'extras': EXTRAS,
                    'environs': ['openmpi', 'mpich'],
                },
                {
                    # every test a `flux run` of the Flux instance ReFrame runs in:
                    #   flux alloc -N 4 reframe ... --system mycluster:flux
                    # (its node count is the instance's)
                    'name': 'flux',
                    'scheduler': 'local',
                    'launcher': 'flux',
                    'max_jobs': 1,
                    'time_limit': '10m',
                    'processor': PROCESSOR,
                    'extras': {'num_nodes': 64},
                    'environs': ['openmpi'],
                },
            ],
        },
    ],
    'environments': [
        {
            # feature `mpi`: the OSU checks run in this environment; the suite finds the MPI
            # family, its version and OSU in what the modules put on the job's PATH
            'name': 'openmpi',
            'features': ['mpi'],
            'modules': ['openmpi/4.1.5', 'osu-micro-benchmarks/7.4'],
            'cc': 'mpicc', 'cxx': 'mpicxx', 'ftn': 'mpif90',
        },
        {
            'name': 'mpich',
            'features': ['mpi'],
            'modules': ['mpich/4.1.2', 'osu-micro-benchmarks/7.4'],
            'cc': 'mpicc', 'cxx': 'mpicxx', 'ftn': 'mpif90',
        },
    ],
    'logging': [
        {
            # one perflog record per performance variable, as omb-review reads them
            'perflog_multiline': True,
            'handlers_perflog': [
                # the suite's columns (docs/perflogs.md) under your perflog directory
                perflog_schema.handler('/shared/reframe/perflogs'),
            ],
        },
    ],
    'general': [
        {
            'report_file': '/shared/reframe/reports/run-report-{sessionid}.json',
            # job scripts `module load` the environments' modules; ReFrame itself loads none
            # (the suite loads each environment's modules once on the host ReFrame runs on,
            # to read what they give the job: that host needs the module command)
            'resolve_module_conflicts': False,
        },
    ],
}
