# Records the project version and the git hash at configure time into a generated header, so the
# banner and every output file say exactly which code produced them.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                OUTPUT_VARIABLE HPCTRAIN_GIT_HASH OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                OUTPUT_VARIABLE _dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT HPCTRAIN_GIT_HASH)
  set(HPCTRAIN_GIT_HASH "unknown")
elseif(_dirty)
  string(APPEND HPCTRAIN_GIT_HASH "-dirty")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.hpp.in ${PROJECT_BINARY_DIR}/generated/hpctrain/version.hpp @ONLY)
