/* util/version.c: the version banner (see util.h). The version comes from the public header
 * (SORTEX_BUILD_VERSION, the public header's SORTEX_VERSION as the Makefile reads it), the
 * commit and the flags from the build: util/ includes no module above it. */
#include "util/util.h"

#include <mpi.h>
#include <string.h>

#include "commit.h"
#include "util/alloc.h"

const char *util_commit(void)
{
    return SORTEX_COMMIT;
}

const char *util_build_flags(void)
{
    return SORTEX_BUILD_FLAGS;
}

void util_print_version(FILE *out)
{
    /* MPI_Get_library_version may be called before MPI_Init (MPI-3 section 8.1.1). */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS) {
        (void)snprintf(lib, sizeof(lib), "unknown");
    }
    char *nl = strchr(lib, '\n');
    if (nl != NULL) {
        *nl = '\0';
    }
    char *comma = strchr(lib, ',');
    if (comma != NULL) {
        *comma = '\0'; /* "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4" */
    }
    /* The first line as the GNU coding standards have it, "PROGRAM VERSION", the version after
     * the last blank: what help2man reads the man pages' title from. */
    fprintf(out, "%s %s\n", util_progname(), SORTEX_BUILD_VERSION);
    fprintf(out, "built from commit %s\n", SORTEX_COMMIT);
    fprintf(out, "built against: %s (MPI %d.%d); allocator: %s\n", lib, MPI_VERSION,
            MPI_SUBVERSION, util_allocator_name());
    fprintf(out, "compiled with: %s\n", SORTEX_BUILD_FLAGS);
}
