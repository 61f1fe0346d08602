# ReFrame 4.0.5 configuration of the history sessions: no logging section, so ReFrame 4.0's
# built-in perflog handler and format (comma-separated, <var>_lower/<var>_upper).
site_configuration = {
    'systems': [{'name': 'histsys', 'descr': 'throwaway', 'hostnames': ['.*'],
                 'partitions': [{'name': 'cpu', 'scheduler': 'local', 'launcher': 'local',
                                 'environs': ['gnu-ompi']}]}],
    'environments': [{'name': 'gnu-ompi'}],
}
