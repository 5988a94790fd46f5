/* leaky.c - the memcheck label's control: a program named oomsim that
 * loses a block, which valgrind under the label's options must report
 * (exit 97), so that a clean memcheck run means something. */
#include <stdlib.h>
#include <string.h>

static void *volatile keep;

int main(void)
{
    keep = malloc(64);
    if (keep != NULL)
        memset(keep, 1, 64);
    keep = NULL; /* the only pointer to it, gone */
    return 0;
}
