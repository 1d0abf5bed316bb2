# A session directory of Open MPI's per test, so that tests starting at once do not race on one.
#
# Note [MPI session directories]: Open MPI 4.1 puts every program started without mpirun (a
# singleton: the tests' 1-rank runs of train and the tools) in the same session directory,
# /tmp/ompi.HOST.UID/jf.0/1/0, and two tests that start one at once (ctest -j2, a loaded machine
# that stretches the start) race on creating it: one fails in MPI_Init_thread ("A call to mkdir was
# unable to create the desired directory ... File exists"), exit 1, for no fault of what it checks.
# Every test of the calling directory (most start train or a tool, some only Python) gets a session
# directory base of its own in the build tree, which Open MPI creates; a test's own runs are
# sequential. test/python/tool_run.py gives each Python script's scratch folder one the same way.
# Called at the end of each directory that adds tests: a test's properties are set where it was added.
function(hpctrain_test_session_dirs)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "OMPI_MCA_orte_tmpdir_base=${PROJECT_BINARY_DIR}/mpi-sessions/${t}")
  endforeach()
endfunction()
