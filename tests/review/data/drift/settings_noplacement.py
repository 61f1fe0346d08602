site_configuration = {
    'systems': [{
        'name': 'testsys', 'descr': 'throwaway', 'hostnames': ['.*'],
        'partitions': [{'name': 'cpu', 'scheduler': 'local', 'launcher': 'local',
                        'environs': ['gnu-ompi', 'gnu-mpich']}],
    }],
    'environments': [{'name': 'gnu-ompi'}, {'name': 'gnu-mpich'}],
    'logging': [{
        'handlers_perflog': [{
            'type': 'filelog',
            'prefix': '%(check_system)s/%(check_partition)s',
            'level': 'info',
            'format': ('%(check_job_completion_time)s|%(check_result)s|%(check_system)s|'
                       '%(check_partition)s|%(check_environ)s|%(check_name)s|'
                       '%(check_display_name)s|%(check_jobid)s|%(check_job_nodelist)s|'
                       '%(check_num_nodes)s|%(check_num_tasks)s|%(check_num_tasks_per_node)s|'
                       '%(check_benchmark)s|%(check_mapping)s|'
                       '%(check_algorithm)s|%(check_buffers)s|%(check_mpi_family)s|'
                       '%(check_mpi_version)s|%(check_osu_version)s|%(check_osu_spec)s|'
                       '%(check_mpi_spec)s|%(check_spack_lock)s|%(check_placement_observed)s|'
                       '%(check_algorithm_evidence)s|%(check_session_tag)s|'
                       '%(check_perf_var)s|%(check_perf_value)s|%(check_perf_unit)s|'
                       '%(check_perf_ref)s|%(check_perf_lower_thres)s|'
                       '%(check_perf_upper_thres)s|%(check_perf_result)s'),
            'datefmt': '%FT%T%:z',
            'append': True,
        }],
        'perflog_multiline': True,
    }],
}
