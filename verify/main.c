/* placeholder until the module lands */
#include "util/util.h"
int main(int argc, char **argv);
int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return UTIL_EXIT_RUNTIME;
}
