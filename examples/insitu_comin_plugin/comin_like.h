/* A stand-in for the few services of ICON's ComIn plugin interface that plugin.c uses: callback
 * registration at entry points, the plugin's MPI communicator, the current model time, and a
 * field of the host. Names follow ComIn's; signatures are simplified, and the real interface
 * comes with ICON. host.c implements this stand-in so the plugin compiles and runs here. */
#ifndef COMIN_LIKE_H
#define COMIN_LIKE_H

#include <mpi.h>

enum comin_like_entry_point { EP_SECONDARY_CONSTRUCTOR, EP_ATM_WRITE_OUTPUT_BEFORE, EP_DESTRUCTOR, EP_COUNT };
typedef void (*comin_like_callback)(void);

void comin_callback_register(int entry_point, comin_like_callback callback, int* ierr);
MPI_Fint comin_parallel_get_plugin_mpi_comm(void);
/* "YYYY-MM-DD hh:mm:ss" of the current model time (static storage). */
const char* comin_current_get_datetime(void);
/* This rank's tile of a 2-D host field, row-major [ny][nx]. */
const double* comin_like_field(int* nx, int* ny);

/* The plugin's entry: ICON calls it once when it loads the plugin. */
void comin_main(void);

#endif
